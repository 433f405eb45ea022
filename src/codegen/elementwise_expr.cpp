#include "codegen/elementwise_expr.hpp"

#include "codegen/cuda_types.hpp"
#include "support/error.hpp"

namespace fstitch {

namespace {

std::string math(DType t, const char* name, const std::string& a) {
  return std::string(name) + (computes_in_double(t) ? "" : "f") + "(" + a + ")";
}

}  // namespace

std::string elementwise_expr(const Node& n, DType operand_type, const std::vector<std::string>& a) {
  const DType t = operand_type;
  const bool fp = is_float(t);
  const std::string one = computes_in_double(t) ? "1.0" : "1.0f";
  const std::string half = computes_in_double(t) ? "0.5" : "0.5f";
  const std::string zero = fp ? (computes_in_double(t) ? "0.0" : "0.0f") : "0";
  const bool wide = t == DType::kI32 || t == DType::kI64;  // may overflow the compute type: wrap via unsigned
  const std::string u = t == DType::kI64 ? "unsigned long long" : "unsigned";
  const std::string ct = compute_type(t);
  auto wrap = [&](const std::string& x, const char* op, const std::string& y) {
    return "(" + ct + ")((" + u + ")(" + x + ") " + op + " (" + u + ")(" + y + "))";
  };
  switch (n.op) {
    case OpKind::kNeg:
      return wide ? wrap("0", "-", a[0]) : "(-" + a[0] + ")";
    case OpKind::kAbs:
      if (fp) return math(t, "fabs", a[0]);
      if (t == DType::kU8) return a[0];
      return "(" + a[0] + " < 0 ? " + (wide ? wrap("0", "-", a[0]) : "-" + a[0]) + " : " + a[0] + ")";
    case OpKind::kExp:
      return math(t, "exp", a[0]);
    case OpKind::kLog:
      return math(t, "log", a[0]);
    case OpKind::kSqrt:
      return math(t, "sqrt", a[0]);
    case OpKind::kRsqrt:
      return math(t, "rsqrt", a[0]);
    case OpKind::kReciprocal:
      return "(" + one + " / " + a[0] + ")";
    case OpKind::kTanh:
      return math(t, "tanh", a[0]);
    case OpKind::kSigmoid:
      return "(" + one + " / (" + one + " + " + math(t, "exp", "-" + a[0]) + "))";
    case OpKind::kRelu:
      if (fp)
        return "((" + a[0] + " > " + zero + " || " + a[0] + " != " + a[0] + ") ? " + a[0] + " : " + zero +
               ")";
      return "(" + a[0] + " > 0 ? " + a[0] + " : 0)";
    case OpKind::kGelu: {
      // f32: the prelude's evaluation (erfc of this one argument, exp(-x^2/2) without its
      // rounding error, no cancellation). f64: 1 + erf(z) written as erfc(-z).
      if (!computes_in_double(t)) return "fst_gelu_f32(" + a[0] + ")";
      return "(" + half + " * " + a[0] + " * " + math(t, "erfc", "-" + a[0] + " * 0.70710678118654752") + ")";
    }
    case OpKind::kGeluTanh: {
      // 0.5 * (1 + tanh(u)) written as 1 / (1 + exp(-2u)): no cancellation for large negative u.
      const std::string k2 = computes_in_double(t) ? "1.5957691216057307" : "1.59576912f";
      const std::string c = computes_in_double(t) ? "0.044715" : "0.044715f";
      return "(" + a[0] + " / (" + one + " + " +
             math(t, "exp",
                  "-" + k2 + " * (" + a[0] + " + " + c + " * " + a[0] + " * " + a[0] + " * " + a[0] + ")") +
             "))";
    }
    case OpKind::kSilu:
      return "(" + a[0] + " / (" + one + " + " + math(t, "exp", "-" + a[0]) + "))";
    case OpKind::kErf:
      return math(t, "erf", a[0]);
    case OpKind::kSin:
      return math(t, "sin", a[0]);
    case OpKind::kCos:
      return math(t, "cos", a[0]);
    case OpKind::kFloor:
      return math(t, "floor", a[0]);
    case OpKind::kCeil:
      return math(t, "ceil", a[0]);
    case OpKind::kRound:
      return math(t, "rint", a[0]);
    case OpKind::kSign:
      if (fp) {
        return "(" + a[0] + " > " + zero + " ? " + one + " : (" + a[0] + " < " + zero + " ? -" + one + " : " +
               a[0] + "))";
      }
      return "((" + a[0] + " > 0) - (" + a[0] + " < 0))";
    case OpKind::kLogicalNot:
      return "(int)(" + a[0] + " == " + zero + ")";
    case OpKind::kAdd:
      return wide ? wrap(a[0], "+", a[1]) : "(" + a[0] + " + " + a[1] + ")";
    case OpKind::kSub:
      return wide ? wrap(a[0], "-", a[1]) : "(" + a[0] + " - " + a[1] + ")";
    case OpKind::kMul:
      return wide ? wrap(a[0], "*", a[1]) : "(" + a[0] + " * " + a[1] + ")";
    case OpKind::kDiv:
      if (fp) return "(" + a[0] + " / " + a[1] + ")";
      return std::string(t == DType::kI64 ? "fst_ldiv(" : "fst_idiv(") + a[0] + ", " + a[1] + ")";
    case OpKind::kPow:
      return std::string(computes_in_double(t) ? "pow(" : "powf(") + a[0] + ", " + a[1] + ")";
    case OpKind::kMax:
      if (fp)
        return std::string(computes_in_double(t) ? "fst_maxd(" : "fst_maxf(") + a[0] + ", " + a[1] + ")";
      return "(" + a[0] + " > " + a[1] + " ? " + a[0] + " : " + a[1] + ")";
    case OpKind::kMin:
      if (fp)
        return std::string(computes_in_double(t) ? "fst_mind(" : "fst_minf(") + a[0] + ", " + a[1] + ")";
      return "(" + a[0] + " < " + a[1] + " ? " + a[0] + " : " + a[1] + ")";
    case OpKind::kEq:
      return "(int)(" + a[0] + " == " + a[1] + ")";
    case OpKind::kNe:
      return "(int)(" + a[0] + " != " + a[1] + ")";
    case OpKind::kLt:
      return "(int)(" + a[0] + " < " + a[1] + ")";
    case OpKind::kLe:
      return "(int)(" + a[0] + " <= " + a[1] + ")";
    case OpKind::kGt:
      return "(int)(" + a[0] + " > " + a[1] + ")";
    case OpKind::kGe:
      return "(int)(" + a[0] + " >= " + a[1] + ")";
    case OpKind::kLogicalAnd:
      return "(int)(" + a[0] + " != " + zero + " && " + a[1] + " != " + zero + ")";
    case OpKind::kLogicalOr:
      return "(int)(" + a[0] + " != " + zero + " || " + a[1] + " != " + zero + ")";
    default:
      fail(StatusCode::kInternal, std::string("no elementwise expression for ") + op_name(n.op));
  }
}

}  // namespace fstitch
