#include "ref/elementwise.hpp"

#include <cmath>
#include <string>
#include <type_traits>

#include "ir/numeric.hpp"
#include "ref/scalar_ops.hpp"

namespace fstitch::ref {
namespace {

// Round half to even without depending on the thread's floating-point rounding mode.
double round_half_even(double x) {
  // x - trunc(x) is exact; on a half, 2 * round(x / 2) picks the even neighbour.
  if (std::fabs(x - std::trunc(x)) == 0.5) return 2.0 * std::round(x / 2.0);
  return std::round(x);
}

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

double gelu_tanh(double x) {
  const double pi = 3.14159265358979323846;
  const double k = std::sqrt(2.0 / pi);
  return x * 0.5 * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

double float_sign(double x) {
  if (x > 0) return 1.0;
  if (x < 0) return -1.0;
  return x;  // ±0 and NaN stay as they are
}

std::string op_text(OpKind op) {
  return op_name(op);
}

// out[k] = fn(x[k]) for float operands and results.
template <class Fn>
Tensor map_float(const Tensor& x, Fn fn) {
  Tensor out = make_tensor(x.dtype, x.dims);
  for (size_t k = 0; k < x.f.size(); ++k) out.f[k] = fn(x.f[k]);
  round_to_dtype(out);
  return out;
}

template <class Fn>
Tensor map_int(const Tensor& x, Fn fn) {
  Tensor out = make_tensor(x.dtype, x.dims);
  for (size_t k = 0; k < x.i.size(); ++k) out.i[k] = fn(x.i[k]);
  round_to_dtype(out);
  return out;
}

Tensor unary_float(OpKind op, const Tensor& x) {
  switch (op) {
    case OpKind::kNeg:
      return map_float(x, [](double v) { return -v; });
    case OpKind::kAbs:
      return map_float(x, [](double v) { return std::fabs(v); });
    case OpKind::kExp:
      return map_float(x, [](double v) { return std::exp(v); });
    case OpKind::kLog:
      return map_float(x, [](double v) { return std::log(v); });
    case OpKind::kSqrt:
      return map_float(x, [](double v) { return std::sqrt(v); });
    case OpKind::kRsqrt:
      return map_float(x, [](double v) { return 1.0 / std::sqrt(v); });
    case OpKind::kReciprocal:
      return map_float(x, [](double v) { return 1.0 / v; });
    case OpKind::kTanh:
      return map_float(x, [](double v) { return std::tanh(v); });
    case OpKind::kSigmoid:
      return map_float(x, sigmoid);
    case OpKind::kRelu:
      return map_float(x, [](double v) { return v > 0 || std::isnan(v) ? v : 0.0; });
    case OpKind::kGelu:
      return map_float(x, gelu_erf);
    case OpKind::kGeluTanh:
      return map_float(x, gelu_tanh);
    case OpKind::kSilu:
      return map_float(x, [](double v) { return v * sigmoid(v); });
    case OpKind::kErf:
      return map_float(x, [](double v) { return std::erf(v); });
    case OpKind::kSin:
      return map_float(x, [](double v) { return std::sin(v); });
    case OpKind::kCos:
      return map_float(x, [](double v) { return std::cos(v); });
    case OpKind::kFloor:
      return map_float(x, [](double v) { return std::floor(v); });
    case OpKind::kCeil:
      return map_float(x, [](double v) { return std::ceil(v); });
    case OpKind::kRound:
      return map_float(x, round_half_even);
    case OpKind::kSign:
      return map_float(x, float_sign);
    default:
      internal_error(op_text(op) + " is not a unary operation on floating-point values");
  }
}

Tensor unary_int(OpKind op, const Tensor& x) {
  switch (op) {
    case OpKind::kNeg:
      return map_int(x, [](int64_t v) { return wrapping_sub(0, v); });
    case OpKind::kAbs:
      return map_int(x, [](int64_t v) { return v < 0 ? wrapping_sub(0, v) : v; });
    case OpKind::kRelu:
      return map_int(x, [](int64_t v) { return v > 0 ? v : int64_t{0}; });
    case OpKind::kSign:
      return map_int(x, [](int64_t v) { return int64_t{v > 0} - int64_t{v < 0}; });
    default:
      internal_error(op_text(op) + " does not accept " + dtype_name(x.dtype) + " operands");
  }
}

Tensor logical_not(const Tensor& x) {
  Tensor out = make_tensor(DType::kBool, x.dims);
  if (is_float(x.dtype)) {
    for (size_t k = 0; k < x.f.size(); ++k) out.i[k] = x.f[k] == 0.0;  // NaN is nonzero
  } else {
    for (size_t k = 0; k < x.i.size(); ++k) out.i[k] = x.i[k] == 0;
  }
  return out;
}

// Elementwise fn over two operands of one storage kind, into a result of `out_dtype`.
template <class In, class Out, class Fn>
void zip(const std::vector<In>& a, const std::vector<In>& b, std::vector<Out>& out, Fn fn) {
  for (size_t k = 0; k < out.size(); ++k) out[k] = fn(a[k], b[k]);
}

Tensor comparison(OpKind op, const Tensor& a, const Tensor& b) {
  Tensor out = make_tensor(DType::kBool, a.dims);
  auto run = [&](const auto& x, const auto& y) {
    using T = typename std::decay_t<decltype(x)>::value_type;
    switch (op) {
      case OpKind::kEq:
        zip(x, y, out.i, [](T p, T q) { return int64_t{p == q}; });
        return;
      case OpKind::kNe:
        zip(x, y, out.i, [](T p, T q) { return int64_t{p != q}; });
        return;
      case OpKind::kLt:
        zip(x, y, out.i, [](T p, T q) { return int64_t{p < q}; });
        return;
      case OpKind::kLe:
        zip(x, y, out.i, [](T p, T q) { return int64_t{p <= q}; });
        return;
      case OpKind::kGt:
        zip(x, y, out.i, [](T p, T q) { return int64_t{p > q}; });
        return;
      case OpKind::kGe:
        zip(x, y, out.i, [](T p, T q) { return int64_t{p >= q}; });
        return;
      case OpKind::kLogicalAnd:
        zip(x, y, out.i, [](T p, T q) { return int64_t{p != 0 && q != 0}; });
        return;
      case OpKind::kLogicalOr:
        zip(x, y, out.i, [](T p, T q) { return int64_t{p != 0 || q != 0}; });
        return;
      default:
        internal_error(op_text(op) + " is not a comparison");
    }
  };
  if (is_float(a.dtype)) {
    run(a.f, b.f);
  } else {
    run(a.i, b.i);
  }
  return out;
}

Tensor arithmetic_float(OpKind op, const Tensor& a, const Tensor& b) {
  Tensor out = make_tensor(a.dtype, a.dims);
  switch (op) {
    case OpKind::kAdd:
      zip(a.f, b.f, out.f, [](double p, double q) { return p + q; });
      break;
    case OpKind::kSub:
      zip(a.f, b.f, out.f, [](double p, double q) { return p - q; });
      break;
    case OpKind::kMul:
      zip(a.f, b.f, out.f, [](double p, double q) { return p * q; });
      break;
    case OpKind::kDiv:
      zip(a.f, b.f, out.f, [](double p, double q) { return p / q; });
      break;
    case OpKind::kPow:
      zip(a.f, b.f, out.f, [](double p, double q) { return std::pow(p, q); });
      break;
    case OpKind::kMax:
      zip(a.f, b.f, out.f, float_max);
      break;
    case OpKind::kMin:
      zip(a.f, b.f, out.f, float_min);
      break;
    default:
      internal_error(op_text(op) + " is not an arithmetic operation");
  }
  round_to_dtype(out);
  return out;
}

Tensor arithmetic_int(OpKind op, const Tensor& a, const Tensor& b) {
  Tensor out = make_tensor(a.dtype, a.dims);
  switch (op) {
    case OpKind::kAdd:
      zip(a.i, b.i, out.i, wrapping_add);
      break;
    case OpKind::kSub:
      zip(a.i, b.i, out.i, wrapping_sub);
      break;
    case OpKind::kMul:
      zip(a.i, b.i, out.i, wrapping_mul);
      break;
    case OpKind::kDiv:
      zip(a.i, b.i, out.i, integer_div);
      break;
    // On bool (0/1) these are logical or / and.
    case OpKind::kMax:
      zip(a.i, b.i, out.i, [](int64_t p, int64_t q) { return p > q ? p : q; });
      break;
    case OpKind::kMin:
      zip(a.i, b.i, out.i, [](int64_t p, int64_t q) { return p < q ? p : q; });
      break;
    default:
      internal_error(op_text(op) + " does not accept " + dtype_name(a.dtype) + " operands");
  }
  round_to_dtype(out);
  return out;
}

void require_same_layout(const char* what, const Tensor& a, const Tensor& b) {
  if (a.dtype != b.dtype || a.dims != b.dims || a.size() != b.size()) {
    internal_error(std::string(what) + " operands differ: " + dtype_name(a.dtype) + dims_to_string(a.dims) +
                   " vs " + dtype_name(b.dtype) + dims_to_string(b.dims));
  }
}

}  // namespace

// 1 + erf(z) as erfc(-z): the same value, without the cancellation that loses every digit
// for large negative x (GELU(-10) is about -7.6e-23, not 0).
double gelu_erf(double x) {
  return x * 0.5 * std::erfc(-x / std::sqrt(2.0));
}

Tensor eval_unary(OpKind op, const Tensor& x) {
  if (op == OpKind::kLogicalNot) return logical_not(x);
  return is_float(x.dtype) ? unary_float(op, x) : unary_int(op, x);
}

Tensor eval_binary(OpKind op, const Tensor& a, const Tensor& b) {
  require_same_layout(op_name(op), a, b);
  if (op_yields_bool(op)) return comparison(op, a, b);
  return is_float(a.dtype) ? arithmetic_float(op, a, b) : arithmetic_int(op, a, b);
}

Tensor eval_select(const Tensor& cond, const Tensor& a, const Tensor& b) {
  require_same_layout("select", a, b);
  if (cond.dtype != DType::kBool || cond.dims != a.dims || cond.size() != a.size()) {
    internal_error("select condition " + std::string(dtype_name(cond.dtype)) + dims_to_string(cond.dims) +
                   " does not fit operands " + dims_to_string(a.dims));
  }
  Tensor out = make_tensor(a.dtype, a.dims);
  if (is_float(a.dtype)) {
    for (size_t k = 0; k < out.f.size(); ++k) out.f[k] = cond.i[k] != 0 ? a.f[k] : b.f[k];
  } else {
    for (size_t k = 0; k < out.i.size(); ++k) out.i[k] = cond.i[k] != 0 ? a.i[k] : b.i[k];
  }
  return out;
}

Tensor eval_cast(const Tensor& x, DType to) {
  Tensor out = make_tensor(to, x.dims);
  const auto n = static_cast<size_t>(x.size());
  for (size_t k = 0; k < n; ++k) {
    const Scalar s = is_float(x.dtype) ? scalar_from_f64(x.f[k], to) : scalar_from_i64(x.i[k], to);
    if (is_float(to)) {
      out.f[k] = s.f;
    } else {
      out.i[k] = s.i;
    }
  }
  return out;
}

}  // namespace fstitch::ref
