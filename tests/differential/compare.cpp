#include "differential/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "ir/numeric.hpp"

namespace fstitch::testing {
namespace {

constexpr double kTinyNorm = 1e-30;
constexpr int kElementsShown = 8;

Tolerance inexact_tolerance(DType dtype) {
  const bool half = dtype == DType::kF16 || dtype == DType::kBF16;
  const double l2 = half ? 1e-2 : 1e-5;
  return Tolerance{false, l2, 10 * l2};
}

Tolerance looser(const Tolerance& a, const Tolerance& b) {
  if (a.exact) return b;
  if (b.exact) return a;
  return Tolerance{false, std::max(a.l2, b.l2), std::max(a.max_over_rms, b.max_over_rms)};
}

std::string coordinates(int64_t flat, const Dims& dims) {
  if (dims.empty()) return "[]";
  std::vector<int64_t> coords(dims.size());
  for (size_t i = dims.size(); i-- > 0;) {
    coords[i] = flat % dims[i];
    flat /= dims[i];
  }
  std::string text = "[";
  for (size_t i = 0; i < coords.size(); ++i) text += (i ? "," : "") + std::to_string(coords[i]);
  return text + "]";
}

std::string number(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

bool same_special(double y, double r) {
  return std::isnan(r) ? std::isnan(y) : y == r;
}

}  // namespace

bool rounds_differently(const Graph& g, const Node& n) {
  switch (n.op) {
    case OpKind::kInput:
    case OpKind::kConstant:
    case OpKind::kBroadcast:
    case OpKind::kReshape:
    case OpKind::kPermute:
    case OpKind::kSlice:
    case OpKind::kConcat:
    case OpKind::kPad:
    case OpKind::kTake:
    case OpKind::kNeg:
    case OpKind::kAbs:
    case OpKind::kRelu:
    case OpKind::kSign:
    case OpKind::kMax:
    case OpKind::kMin:
    case OpKind::kSelect:
    case OpKind::kReduceMax:
    case OpKind::kReduceMin:
    case OpKind::kEq:
    case OpKind::kNe:
    case OpKind::kLt:
    case OpKind::kLe:
    case OpKind::kGt:
    case OpKind::kGe:
    case OpKind::kLogicalAnd:
    case OpKind::kLogicalOr:
    case OpKind::kLogicalNot:
      return false;
    case OpKind::kCast:
      // Every float conversion is one rounding, f64 -> f16/bf16 included.
      return false;
    default:
      return is_float(n.dtype) || (!n.operands.empty() && is_float(g.node(n.operands[0]).dtype));
  }
}

std::vector<Tolerance> output_tolerances(const Graph& graph) {
  std::vector<Tolerance> tol(graph.size());
  for (size_t i = 0; i < graph.size(); ++i) {
    const Node& n = graph.node(static_cast<ValueId>(i));
    Tolerance t;
    for (ValueId o : n.operands) t = looser(t, tol[static_cast<size_t>(o)]);
    // Integer and bool results of float operands (comparisons, casts) would flip discretely;
    // the random graphs only form them from inputs, so they are held exact.
    if (!is_float(n.dtype)) {
      tol[i] = Tolerance{};
      continue;
    }
    if (rounds_differently(graph, n) || !t.exact) t = looser(t, inexact_tolerance(n.dtype));
    tol[i] = t;
  }
  std::vector<Tolerance> out;
  for (const GraphOutput& o : graph.outputs()) out.push_back(tol[static_cast<size_t>(o.value)]);
  return out;
}

Comparison compare_output(const void* result, const void* reference, DType dtype, const Dims& dims,
                          const Tolerance& tolerance) {
  Comparison c;
  const int64_t n = element_count(dims);
  const bool fp = is_float(dtype);
  auto value = [&](const void* buffer, int64_t k) {
    const Scalar s = load_scalar(buffer, k, dtype);
    return fp ? s.f : static_cast<double>(s.i);
  };

  // Norms over the elements where the reference is finite.
  double err2 = 0, ref2 = 0, max_abs = 0;
  int64_t finite = 0, worst = -1;
  for (int64_t k = 0; k < n; ++k) {
    const double y = value(result, k), r = value(reference, k);
    if (!std::isfinite(r) || !std::isfinite(y)) continue;
    err2 += (y - r) * (y - r);
    ref2 += r * r;
    ++finite;
    if (std::fabs(y - r) > max_abs || worst < 0) {
      max_abs = std::fabs(y - r);
      worst = k;
    }
  }
  const double rms = finite > 0 ? std::sqrt(ref2 / static_cast<double>(finite)) : 0.0;
  c.l2_error = std::sqrt(err2) / std::max(std::sqrt(ref2), kTinyNorm);
  c.max_over_rms = max_abs / std::max(rms, kTinyNorm);

  auto bad = [&](double y, double r) {
    if (!std::isfinite(r) || !std::isfinite(y)) return !same_special(y, r);
    if (tolerance.exact) return y != r;
    return std::fabs(y - r) > tolerance.l2 * std::max(std::fabs(r), rms);
  };
  std::ostringstream shown;
  for (int64_t k = 0; k < n; ++k) {
    const double y = value(result, k), r = value(reference, k);
    if (!bad(y, r)) continue;
    const bool hard = tolerance.exact || !std::isfinite(y) || !std::isfinite(r);
    if (hard) c.ok = false;
    if (c.bad_elements++ < kElementsShown) {
      shown << "    " << coordinates(k, dims) << ": got " << number(y) << ", expected " << number(r) << "\n";
    }
  }
  if (!tolerance.exact && (c.l2_error > tolerance.l2 || c.max_over_rms > tolerance.max_over_rms))
    c.ok = false;
  if (c.ok) return c;

  std::ostringstream report;
  if (tolerance.exact) {
    report << "  " << c.bad_elements << " of " << n << " element(s) differ (exact comparison)\n";
  } else {
    report << "  relative L2 error " << number(c.l2_error) << " (limit " << number(tolerance.l2)
           << "), largest error / RMS " << number(c.max_over_rms) << " (limit "
           << number(tolerance.max_over_rms) << "), " << c.bad_elements << " of " << n
           << " element(s) off by more than " << number(tolerance.l2) << " relative\n";
    if (worst >= 0) {
      report << "  largest error at " << coordinates(worst, dims) << ": got " << number(value(result, worst))
             << ", expected " << number(value(reference, worst)) << "\n";
    }
  }
  report << "  first mismatching elements:\n" << shown.str();
  c.report = report.str();
  return c;
}

}  // namespace fstitch::testing
