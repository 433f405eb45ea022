#include "common/random_graph.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "ir/builder.hpp"

namespace fstitch::testing {

// ---- PRNG ---------------------------------------------------------------------------------

namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

}  // namespace

Rng::Rng(uint64_t seed) {
  uint64_t state = seed;
  for (uint64_t& s : s_) s = splitmix64(state);
}

uint64_t Rng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

uint64_t Rng::below(uint64_t n) {
  // Rejects the few values that would bias the remainder (2^64 mod n of them).
  const uint64_t threshold = (0 - n) % n;
  for (;;) {
    const uint64_t x = next();
    if (x >= threshold) return x % n;
  }
}

int64_t Rng::range(int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
}

double Rng::uniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

// ---- generator ----------------------------------------------------------------------------

namespace {

// Sizes of axes: small, odd, warp-sized and off by one, primes, and larger odd sizes.
const std::vector<int64_t> kDims = {1, 2, 3, 5, 7, 11, 13, 31, 32, 33, 61, 127, 257, 513};
const std::vector<int64_t> kSmallDims = {1, 2, 3, 5, 7, 8, 13, 31, 33};
constexpr int64_t kLongRow = 100000;

// Float values are kept below this bound (by scaling with a power of two, which is exact),
// so that the rounding error of an argument stays small next to the result of sin, exp, ...
constexpr double kMaxBound = 16.0;
// Largest f16 value a sum may reach without risking overflow.
constexpr double kF16SumLimit = 30000.0;

using Mask = uint32_t;  // bit a: axis a of the graph's main shape

struct Val {
  ValueId id = -1;
  double bound = 0;   // upper bound on |value| (float graphs)
  Mask varies = 0;    // the value differs along these axes (reliably, not by chance)
  Mask centered = 0;  // mean zero along these axes by construction: summing it cancels
  bool raw = false;   // a graph input after layout ops and exact casts only
};

bool integer_mode_of(uint64_t seed) {
  uint64_t state = seed ^ 0x5eed1e55c0ffee00ull;
  return splitmix64(state) % 7 == 0;
}

class Generator {
 public:
  Generator(uint64_t seed, const RandomGraphOptions& options, bool integer)
      : rng_(seed), layout_rng_(seed ^ 0x5be0cd19137e2179ull), options_(options), integer_(integer) {}

  Graph build() {
    domain_ = choose_domain();
    full_mask_ = static_cast<Mask>((1u << domain_.size()) - 1);
    base_ = integer_ ? choose_integer_dtype() : choose_float_dtype();
    pool_.push_back(add_input(first_input_form(), base_));
    const int steps = static_cast<int>(rng_.range(2, std::max(2, options_.max_steps)));
    for (int i = 0; i < steps; ++i) step();
    add_outputs();
    return std::move(g_);
  }

 private:
  enum class Form { kFull, kTransposed, kReshaped, kRowVector, kColumnVector, kScalar };

  // ---- shapes and dtypes ----

  Dims choose_domain() {
    const uint64_t r = rng_.below(100);
    const bool long_rows = options_.allow_long_rows;
    if (r < 10) {
      if (long_rows && rng_.chance(0.1) && kLongRow <= options_.max_elements) return {kLongRow};
      return {rng_.pick(kDims) * (rng_.chance(0.3) ? 8 : 1)};
    }
    if (r < 22) {
      for (;;) {
        Dims d = {rng_.pick(kSmallDims), rng_.pick(kSmallDims), rng_.pick(kDims)};
        if (element_count(d) <= options_.max_elements) return d;
      }
    }
    const uint64_t kind = rng_.below(100);
    if (kind < 5 && 257 * 513 <= options_.max_elements) return {257, 513};
    if (kind < 12) return {rng_.pick(kDims), 1};  // rows of one element
    if (long_rows && kind < 14 && kLongRow <= options_.max_elements) {
      return {rng_.range(1, std::min<int64_t>(3, options_.max_elements / kLongRow)), kLongRow};
    }
    for (;;) {
      Dims d = {rng_.pick(kDims), rng_.pick(kDims)};
      if (element_count(d) <= options_.max_elements) return d;
    }
  }

  DType choose_float_dtype() {
    const uint64_t r = rng_.below(100);
    return r < 65 ? DType::kF32 : r < 77 ? DType::kF16 : r < 89 ? DType::kBF16 : DType::kF64;
  }

  DType choose_integer_dtype() {
    const uint64_t r = rng_.below(4);
    return r < 2 ? DType::kI32 : r == 2 ? DType::kI8 : DType::kU8;
  }

  DType other_dtype(DType t) {
    for (;;) {
      const DType d = integer_ ? choose_integer_dtype() : choose_float_dtype();
      if (d != t) return d;
    }
  }

  size_t rank() const { return domain_.size(); }

  Mask sized_axes(Mask m) const {
    Mask out = 0;
    for (size_t a = 0; a < rank(); ++a) {
      if ((m >> a & 1u) && domain_[a] > 1) out |= 1u << a;
    }
    return out;
  }

  // ---- inputs ----

  Form first_input_form() {
    if (rank() < 2) return rng_.chance(0.15) ? Form::kReshaped : Form::kFull;
    const uint64_t r = rng_.below(100);
    return r < 75 ? Form::kFull : r < 88 ? Form::kTransposed : Form::kReshaped;
  }

  Form broadcast_form() {
    if (rank() < 2) return rng_.chance(0.7) ? Form::kRowVector : Form::kScalar;
    const uint64_t r = rng_.below(100);
    return r < 45 ? Form::kRowVector : r < 80 ? Form::kColumnVector : Form::kScalar;
  }

  DType input_dtype() { return rng_.chance(0.8) ? base_ : other_dtype(base_); }

  // A graph input in the given form, brought to a shape that broadcasts to the domain and
  // cast to `dtype`. Also remembered (before the cast) for comparisons.
  Val add_input(Form form, DType dtype) {
    const DType stored = input_dtype();
    Dims dims = domain_;
    Mask varies = full_mask_;
    std::vector<int64_t> perm;
    switch (form) {
      case Form::kFull:
        break;
      case Form::kTransposed: {
        perm.resize(rank());
        for (size_t i = 0; i < rank(); ++i) perm[i] = static_cast<int64_t>(i);
        while (std::is_sorted(perm.begin(), perm.end())) {
          for (size_t i = rank() - 1; i > 0; --i)
            std::swap(perm[i], perm[static_cast<size_t>(rng_.below(i + 1))]);
        }
        for (size_t i = 0; i < rank(); ++i) dims[static_cast<size_t>(perm[i])] = domain_[i];
        break;
      }
      case Form::kReshaped:
        if (rank() >= 3 && rng_.chance(0.5)) {
          dims = {domain_[0] * domain_[1], domain_[2]};
        } else if (rank() >= 2 && rng_.chance(0.3)) {
          dims = {domain_[0], element_count(domain_) / domain_[0]};
          std::swap(dims[0], dims[1]);  // another factorization of the same elements
        } else {
          dims = {element_count(domain_)};
        }
        break;
      case Form::kRowVector:
        dims = {domain_.back()};
        varies = 1u << (rank() - 1);
        break;
      case Form::kColumnVector:
        dims.back() = 1;
        varies = full_mask_ & ~(1u << (rank() - 1));
        break;
      case Form::kScalar:
        dims = rng_.chance(0.5) ? Dims{} : Dims{1};
        varies = 0;
        break;
    }
    const std::string name = "x" + std::to_string(input_count_++);
    ValueId id = build_input(g_, name, stored, dims);
    raw_inputs_.push_back(id);
    if (form == Form::kTransposed) id = build_permute(g_, id, perm);
    if (form == Form::kReshaped) {
      Dims target = domain_;
      if (rng_.chance(0.3)) target[static_cast<size_t>(rng_.below(rank()))] = -1;
      id = build_reshape(g_, id, target);
    }
    if (form == Form::kRowVector || form == Form::kColumnVector || form == Form::kScalar) {
      if (rng_.chance(0.25)) id = build_broadcast(g_, id, domain_);  // explicit, else implicit
    }
    Val v{id, integer_ ? 0 : 2.0, sized_axes(varies), 0, true};
    comparable_.push_back(v);
    return cast_to(v, dtype);
  }

  // ---- value helpers ----

  DType dtype_of(const Val& v) const { return g_.node(v.id).dtype; }

  Val cast_to(Val v, DType dtype) {
    const DType from = dtype_of(v);
    if (from == dtype) return v;
    v.id = build_cast(g_, v.id, dtype);
    // f64 -> f16/bf16 may round differently from f64 -> f32 -> f16: no longer "raw".
    v.raw = v.raw && !(from == DType::kF64 && (dtype == DType::kF16 || dtype == DType::kBF16));
    return v;
  }

  Val constant(DType dtype) {
    Val c;
    if (integer_) {
      const int64_t hi = dtype == DType::kI8 ? 8 : dtype == DType::kU8 ? 16 : 100;
      const int64_t lo = dtype == DType::kU8 ? 0 : -hi;
      const int64_t value = rng_.range(lo, hi);
      c.id = build_constant_i64(g_, dtype, value);
      return c;
    }
    // Multiples of 1/8: n copies sum exactly, so a row of them has an exact mean.
    const double value = static_cast<double>(rng_.range(2, 16)) / 8.0 * (rng_.chance(0.5) ? -1 : 1);
    c.id = build_constant_f64(g_, dtype, value);
    c.bound = std::fabs(value);
    return c;
  }

  Val scaled(Val v, double factor) {
    Val c{build_constant_f64(g_, dtype_of(v), factor), factor, 0, 0, false};
    Val out = v;
    out.id = build_binary(g_, OpKind::kMul, v.id, c.id);
    out.bound = v.bound * factor;
    out.raw = false;
    return out;
  }

  // Scales v by a power of two so that its bound is at most `limit`.
  Val tamed(Val v, double limit = kMaxBound) {
    if (integer_ || v.bound <= limit) return v;
    return scaled(v, std::ldexp(1.0, -static_cast<int>(std::ceil(std::log2(v.bound / limit)))));
  }

  Val pick_operand() { return rng_.chance(0.5) ? pool_.back() : rng_.pick(pool_); }

  void push(Val v) { pool_.push_back(tamed(v)); }

  Val unary(OpKind op, const Val& x) {
    Val out = x;
    out.id = build_unary(g_, op, x.id);
    out.raw = false;
    return out;
  }

  Val binary(OpKind op, const Val& a, const Val& b) {
    Val out;
    out.id = build_binary(g_, op, a.id, b.id);
    out.varies = a.varies | b.varies;
    return out;
  }

  // ---- float steps ----

  void float_unary() {
    Val x = pick_operand();
    static const std::vector<OpKind> ops = {OpKind::kNeg,     OpKind::kAbs,  OpKind::kRelu,     OpKind::kTanh,
                                            OpKind::kSigmoid, OpKind::kGelu, OpKind::kGeluTanh, OpKind::kSilu,
                                            OpKind::kSin,     OpKind::kCos,  OpKind::kExp,      OpKind::kLog,
                                            OpKind::kSqrt};
    const OpKind op = rng_.pick(ops);
    Val out;
    switch (op) {
      case OpKind::kNeg:
        out = unary(op, x);
        break;
      case OpKind::kAbs:
      case OpKind::kRelu:
        out = unary(op, x);
        out.centered = 0;
        break;
      case OpKind::kExp: {
        const Val arg = x.bound > 4 ? unary(OpKind::kTanh, x) : x;
        out = unary(op, arg);
        out.bound = std::exp(std::min(arg.bound, x.bound > 4 ? 1.0 : arg.bound));
        out.centered = 0;
        break;
      }
      case OpKind::kLog: {
        Val shifted =
            binary(OpKind::kAdd, unary(OpKind::kAbs, x), Val{build_constant_f64(g_, dtype_of(x), 1.0)});
        out = unary(op, shifted);
        out.varies = x.varies;
        out.bound = std::log(x.bound + 1.0);
        out.centered = 0;
        break;
      }
      case OpKind::kSqrt: {
        Val arg = unary(OpKind::kAbs, x);
        // A computed argument near zero carries an absolute error that sqrt would magnify.
        if (!x.raw) arg = binary(OpKind::kAdd, arg, Val{build_constant_f64(g_, dtype_of(x), 0.25)});
        out = unary(op, arg);
        out.varies = x.varies;
        out.bound = std::sqrt(x.bound + 0.25);
        out.centered = 0;
        break;
      }
      default: {
        // 1 + erf(x) and 1 + tanh(x) cancel for very negative x: keep the argument modest.
        if (op == OpKind::kGelu || op == OpKind::kGeluTanh) x = tamed(x, 2.0);
        out = unary(op, x);
        const bool saturating =
            op == OpKind::kTanh || op == OpKind::kSigmoid || op == OpKind::kSin || op == OpKind::kCos;
        out.bound = saturating ? std::min(1.0, x.bound) : x.bound;
        if (op == OpKind::kSigmoid || op == OpKind::kCos) out.bound = 1.0;
        out.centered = 0;
        break;
      }
    }
    out.raw = false;
    push(out);
  }

  // A second operand for a binary operation with a: another value, a broadcast input or a
  // constant, in a's dtype.
  Val second_operand(const Val& a) {
    const uint64_t r = rng_.below(100);
    Val b;
    if (r < 45) {
      b = pick_operand();
    } else if (r < 75) {
      b = add_input(broadcast_form(), dtype_of(a));
      broadcast_inputs_.push_back(b);
    } else if (r < 82 && !broadcast_inputs_.empty()) {
      b = rng_.pick(broadcast_inputs_);
    } else {
      b = constant(dtype_of(a));
    }
    return cast_to(b, dtype_of(a));
  }

  void float_binary() {
    Val a = pick_operand();
    Val b = second_operand(a);
    static const std::vector<OpKind> ops = {OpKind::kAdd, OpKind::kSub, OpKind::kMul,
                                            OpKind::kMax, OpKind::kMin, OpKind::kDiv};
    const OpKind op = rng_.pick(ops);
    push(combine(op, a, b));
  }

  // a op b with the bookkeeping of bounds, variation and centering; division is by |b| + 1.
  Val combine(OpKind op, const Val& a, const Val& b) {
    Val out;
    switch (op) {
      case OpKind::kAdd:
      case OpKind::kSub:
        out = binary(op, a, b);
        out.bound = a.bound + b.bound;
        out.centered = a.centered & b.centered;
        break;
      case OpKind::kMul:
        out = binary(op, a, b);
        out.bound = a.bound * b.bound;
        out.centered = (a.centered & ~b.varies) | (b.centered & ~a.varies);
        break;
      case OpKind::kMax:
      case OpKind::kMin:
        out = binary(op, a, b);
        out.bound = std::max(a.bound, b.bound);
        // max(x, c) is constant wherever c wins; a constant row has an inexact mean unless
        // c is a short dyadic constant (a leaf constant here).
        out.varies = g_.node(b.id).op == OpKind::kConstant ? a.varies : a.varies & b.varies;
        break;
      case OpKind::kDiv: {
        Val one{build_constant_f64(g_, dtype_of(b), 1.0)};
        Val denom = binary(OpKind::kAdd, unary(OpKind::kAbs, b), one);
        out = binary(op, a, denom);
        out.bound = a.bound;
        out.centered = a.centered & ~b.varies;
        break;
      }
      default:
        break;
    }
    return out;
  }

  // Axes of a reduction over the domain, as a mask.
  Mask reduction_axes() {
    const uint64_t r = rng_.below(100);
    const Mask last = 1u << (rank() - 1);
    switch (rank()) {
      case 1:
        return 1u;
      case 2:
        return r < 80 ? last : r < 92 ? 1u : 3u;
      default:
        return r < 55 ? 4u : r < 70 ? 6u : r < 82 ? 1u : r < 90 ? 2u : 7u;
    }
  }

  std::vector<int64_t> axes_of(Mask m) const {
    std::vector<int64_t> axes;
    for (size_t a = 0; a < rank(); ++a) {
      if (m >> a & 1u) axes.push_back(static_cast<int64_t>(a));
    }
    return axes;
  }

  int64_t reduced_count(Mask m) const {
    int64_t n = 1;
    for (size_t a = 0; a < rank(); ++a) {
      if (m >> a & 1u) n *= domain_[a];
    }
    return n;
  }

  // A reduction of v over `m`, and the same result in a shape that broadcasts to the domain
  // (a reshape to the keepdims shape unless numpy rules already line it up).
  std::pair<Val, Val> reduce(OpKind op, Val v, Mask m, bool keepdims) {
    if (!integer_ && op == OpKind::kReduceSum && dtype_of(v) == DType::kF16 &&
        v.bound * static_cast<double>(reduced_count(m)) > kF16SumLimit) {
      v = scaled(v, std::ldexp(1.0, -static_cast<int>(std::ceil(std::log2(
                                        v.bound * static_cast<double>(reduced_count(m)) / kF16SumLimit)))));
    }
    Val r = v;
    r.id = build_reduce(g_, op, v.id, axes_of(m), keepdims);
    r.varies = v.varies & ~m;
    r.centered = 0;
    r.raw = false;
    const bool grows = op == OpKind::kReduceSum || op == OpKind::kReduceProd;
    if (grows && !integer_) r.bound = v.bound * static_cast<double>(reduced_count(m));
    // The sum of a value with zero mean is all rounding noise: usable, but not an output.
    const bool noise =
        (op == OpKind::kReduceSum || op == OpKind::kReduceMean) && (v.centered & sized_axes(m)) != 0;
    if (!noise) reduced_.push_back(r);
    Val expanded = r;
    // Dropped leading axes broadcast by numpy rules; any other dropped axis needs a reshape.
    const Mask leading = static_cast<Mask>((1u << axes_of(m).size()) - 1);
    if (!keepdims && m != leading) {
      Dims kept = domain_;
      for (int64_t a : axes_of(m)) kept[static_cast<size_t>(a)] = 1;
      expanded.id = build_reshape(g_, r.id, kept);
    }
    return {r, expanded};
  }

  bool can_center(const Val& v, Mask m) const {
    const Mask sized = sized_axes(m);
    return sized == 0 || (v.varies & sized) != 0;
  }

  // A reduction stitched back into elementwise code: v op reduce(v) and the like.
  void float_reduction() {
    Val v = pick_operand();
    const Mask m = reduction_axes();
    static const std::vector<OpKind> ops = {OpKind::kReduceSum, OpKind::kReduceMean, OpKind::kReduceMax,
                                            OpKind::kReduceMin};
    OpKind op = rng_.pick(ops);
    // The sum of a value with zero mean is all rounding error: take its max instead.
    if ((op == OpKind::kReduceSum || op == OpKind::kReduceMean) && (v.centered & sized_axes(m)) != 0) {
      op = OpKind::kReduceMax;
    }
    auto [r, expanded] = reduce(op, v, m, rng_.chance(0.5));
    expanded = tamed(expanded);
    if (rng_.chance(0.1)) return;  // the reduction alone, perhaps as an output
    static const std::vector<OpKind> back = {OpKind::kSub, OpKind::kSub, OpKind::kAdd, OpKind::kMul,
                                             OpKind::kDiv, OpKind::kMax, OpKind::kMin};
    const bool same = rng_.chance(0.7);
    Val w = same ? v : pick_operand();
    OpKind combine_op = rng_.pick(back);
    const bool mean_like = op == OpKind::kReduceMean || op == OpKind::kReduceSum;
    if (combine_op == OpKind::kSub && mean_like && !can_center(w, m)) combine_op = OpKind::kMul;
    w = cast_to(w, dtype_of(expanded));
    Val out = combine(combine_op, w, expanded);
    if (combine_op == OpKind::kSub && op == OpKind::kReduceMean && same) out.centered |= sized_axes(m);
    push(out);
  }

  // max, exp(x - max), sum, then divide (softmax) or subtract the log (log-softmax).
  void float_softmax() {
    Val v = tamed(pick_operand(), 8.0);
    const Mask m = rank() == 3 && rng_.chance(0.3) ? 6u : 1u << (rank() - 1);
    auto [max, max_b] = reduce(OpKind::kReduceMax, v, m, true);
    Val shifted = combine(OpKind::kSub, v, max_b);
    Val e = unary(OpKind::kExp, shifted);
    e.bound = 1.0;
    e.centered = 0;
    // Exponentials of an f16 row may sum past the f16 range: sum them in f32, as frameworks do.
    if ((dtype_of(e) == DType::kF16) && static_cast<double>(reduced_count(m)) > kF16SumLimit) {
      e = cast_to(e, DType::kF32);
    }
    auto [sum, sum_b] = reduce(OpKind::kReduceSum, e, m, rng_.chance(0.5));
    Val out;
    if (rng_.chance(0.6)) {
      out = binary(OpKind::kDiv, e, sum_b);  // the sum is at least 1
      out.bound = 1.0;
      // Then divided by 1 + its sums down the other axes.
      const Mask others = static_cast<Mask>(((1u << rank()) - 1) & ~m);
      if (options_.column_sums_after_rows && others != 0 && rng_.chance(0.8)) {
        auto [columns, columns_b] = reduce(OpKind::kReduceSum, out, others, rng_.chance(0.5));
        out = combine(OpKind::kDiv, out, columns_b);  // out / (|sums| + 1)
        if (options_.row_sums_after_column_sums && rng_.chance(0.8)) {
          auto [rows, rows_b] = reduce(OpKind::kReduceSum, out, m, rng_.chance(0.5));
          out = combine(OpKind::kDiv, out, rows_b);
          if (options_.column_sums_again && rng_.chance(0.8)) {
            auto [again, again_b] = reduce(OpKind::kReduceSum, out, others, rng_.chance(0.5));
            out = combine(OpKind::kDiv, out, again_b);
          }
        }
      }
    } else {
      Val lse = unary(OpKind::kLog, sum_b);
      lse.bound = std::log(static_cast<double>(reduced_count(m))) + 1.0;
      out = binary(OpKind::kSub, cast_to(shifted, dtype_of(lse)), lse);
      out.bound = shifted.bound + lse.bound;
    }
    out.centered = 0;
    push(out);
  }

  // mean, x - mean, mean of squares, rsqrt(var + eps), optional scale and shift.
  void float_layer_norm() {
    const Mask m = 1u << (rank() - 1);
    Val v = pick_operand();
    if (!can_center(v, m)) v = pool_.front();
    if (!can_center(v, m)) return;
    v = tamed(v);
    auto [mean, mean_b] = reduce(OpKind::kReduceMean, v, m, rng_.chance(0.7));
    Val centered = combine(OpKind::kSub, v, mean_b);
    auto [var, var_b] = reduce(OpKind::kReduceMean, combine(OpKind::kMul, centered, centered), m, true);
    Val eps{build_constant_f64(g_, dtype_of(var_b), 1e-5)};
    Val inv = unary(OpKind::kRsqrt, binary(OpKind::kAdd, var_b, eps));
    Val out = binary(OpKind::kMul, centered, inv);
    out.bound = std::sqrt(static_cast<double>(reduced_count(m))) + 1.0;
    out.centered = sized_axes(m);
    if (rng_.chance(0.5)) {
      Val gamma = cast_to(add_input(Form::kRowVector, dtype_of(out)), dtype_of(out));
      Val beta = cast_to(add_input(Form::kRowVector, dtype_of(out)), dtype_of(out));
      out = combine(OpKind::kAdd, combine(OpKind::kMul, out, gamma), beta);
    }
    push(out);
  }

  // select(compare(input, input or constant), a, b).
  void float_select() { push(select_on(comparison_of_inputs())); }

  Val comparison_of_inputs() {
    const Val p = rng_.pick(comparable_);
    Val q;
    std::vector<Val> same_dtype;
    for (const Val& c : comparable_) {
      if (c.id != p.id && dtype_of(c) == dtype_of(p)) same_dtype.push_back(c);
    }
    if (!same_dtype.empty() && rng_.chance(0.6)) {
      q = rng_.pick(same_dtype);
    } else {
      q = constant(dtype_of(p));
    }
    static const std::vector<OpKind> ops = {OpKind::kLt, OpKind::kLe, OpKind::kGt,
                                            OpKind::kGe, OpKind::kEq, OpKind::kNe};
    Val cond = binary(rng_.pick(ops), p, q);
    conds_.push_back(cond);
    return cond;
  }

  Val select_on(const Val& cond) {
    Val a = pick_operand();
    Val b = rng_.chance(0.7) ? pick_operand() : constant(dtype_of(a));
    b = cast_to(b, dtype_of(a));
    Val out;
    out.id = build_select(g_, cond.id, a.id, b.id);
    out.bound = std::max(a.bound, b.bound);
    out.varies = a.varies & b.varies;
    return out;
  }

  void float_cast() {
    Val v = pick_operand();
    push(cast_to(v, other_dtype(dtype_of(v))));
  }

  // ---- integer steps ----

  void int_unary() {
    static const std::vector<OpKind> ops = {OpKind::kNeg, OpKind::kAbs, OpKind::kRelu};
    push(unary(rng_.pick(ops), pick_operand()));
  }

  void int_binary() {
    Val a = pick_operand();
    Val b = second_operand(a);
    static const std::vector<OpKind> ops = {OpKind::kAdd, OpKind::kSub, OpKind::kMul,
                                            OpKind::kMax, OpKind::kMin, OpKind::kDiv};
    push(binary(rng_.pick(ops), a, b));
  }

  void int_select() {
    static const std::vector<OpKind> ops = {OpKind::kLt, OpKind::kLe, OpKind::kGt,
                                            OpKind::kGe, OpKind::kEq, OpKind::kNe};
    Val a = pick_operand();
    Val cond = binary(rng_.pick(ops), a, second_operand(a));
    if (!conds_.empty() && rng_.chance(0.3)) {
      const Val other = rng_.pick(conds_);
      const uint64_t r = rng_.below(3);
      cond = r == 2 ? unary(OpKind::kLogicalNot, cond)
                    : binary(r == 0 ? OpKind::kLogicalAnd : OpKind::kLogicalOr, cond, other);
    }
    conds_.push_back(cond);
    if (rng_.chance(0.2)) {
      push(cast_to(cond, base_));  // a bool used as a number
    } else {
      push(select_on(cond));
    }
  }

  void int_reduction() {
    Val v = pick_operand();
    const Mask m = reduction_axes();
    static const std::vector<OpKind> ops = {OpKind::kReduceSum, OpKind::kReduceSum, OpKind::kReduceMax,
                                            OpKind::kReduceMin, OpKind::kReduceProd};
    auto [r, expanded] = reduce(rng_.pick(ops), v, m, rng_.chance(0.5));
    if (rng_.chance(0.1)) return;
    static const std::vector<OpKind> back = {OpKind::kSub, OpKind::kAdd, OpKind::kMul,
                                             OpKind::kDiv, OpKind::kMax, OpKind::kMin};
    Val w = rng_.chance(0.7) ? v : pick_operand();
    push(binary(rng_.pick(back), cast_to(w, dtype_of(expanded)), expanded));
  }

  void int_cast() {
    Val v = pick_operand();
    Val c = cast_to(v, other_dtype(dtype_of(v)));
    push(rng_.chance(0.5) ? cast_to(c, base_) : c);
  }

  // ---- data movement (float and integer) ----

  // A value of the domain's shape moved along one axis: rolled (a concat of two slices),
  // reversed by take with shifted indices (those out of range give 0), shifted by one with
  // a pad, or interleaved with another value (a strided slice of a concat).
  void movement() {
    Val v = pick_operand();
    const auto a = static_cast<size_t>(rng_.below(rank()));
    const auto axis = static_cast<int64_t>(a);
    const int64_t n = domain_[a];
    std::vector<int64_t> starts(rank(), 0), stops = domain_, none;
    Val out = v;
    out.raw = false;
    out.centered = 0;
    uint64_t kind = rng_.below(4);
    // An interleave materializes a concat of twice the domain: only within the element budget.
    if (kind == 3 && 2 * element_count(domain_) > options_.max_elements) kind = 0;
    if (n < 2) kind = 1;
    if (kind == 0) {
      const int64_t k = rng_.range(1, n - 1);
      starts[a] = k;
      const ValueId tail = build_slice(g_, v.id, starts, stops, none);
      starts[a] = 0;
      stops[a] = k;
      out.id = build_concat(g_, {tail, build_slice(g_, v.id, starts, stops, none)}, axis);
    } else if (kind == 1) {
      const int64_t shift = n < 2 ? 0 : rng_.range(-1, 1);
      const ValueId k = build_iota(g_, DType::kI32, {n}, 0);
      const ValueId last = build_constant_i64(g_, DType::kI32, n - 1 + shift);
      out.id = build_take(g_, v.id, build_binary(g_, OpKind::kSub, last, k), axis);
      if (shift != 0) out.varies = 0;  // a slab of zeros
    } else if (kind == 2) {
      const bool at_end = rng_.chance(0.5);
      starts[a] = at_end ? 1 : 0;
      stops[a] = at_end ? n : n - 1;
      std::vector<int64_t> low(rank(), 0), high(rank(), 0);
      (at_end ? high : low)[a] = 1;
      const Val fill = constant(dtype_of(v));
      // A copy: building the slice may grow the graph and move its nodes.
      const auto fill_value = g_.node(fill.id).value;
      out.id = build_pad(g_, build_slice(g_, v.id, starts, stops, none), low, high, fill_value);
      out.bound = std::max(v.bound, fill.bound);
      if (n == 2) out.varies &= ~(Mask{1} << a);
    } else {
      const Val w = cast_to(pick_operand(), dtype_of(v));
      const ValueId both = build_concat(g_, {v.id, w.id}, axis);
      starts[a] = rng_.range(0, 1);
      stops[a] = 2 * n;
      std::vector<int64_t> steps(rank(), 1);
      steps[a] = 2;
      out.id = build_slice(g_, both, starts, stops, steps);
      out.bound = std::max(v.bound, w.bound);
      out.varies = v.varies & w.varies;
    }
    push(out);
  }

  void step() {
    const uint64_t r = rng_.below(100);
    if (integer_) {
      if (r < 20) return int_unary();
      if (r < 50) return int_binary();
      if (r < 55) return movement();
      if (r < 72) return int_select();
      if (r < 90) return int_reduction();
      return int_cast();
    }
    if (r < 24) return float_unary();
    if (r < 46) return float_binary();
    if (r < 50) return movement();
    if (r < 70) return float_reduction();
    if (r < 78) return float_softmax();
    if (r < 85) return float_layer_norm();
    if (r < 92) return float_select();
    return float_cast();
  }

  // ---- outputs ----

  void add_outputs() {
    const uint64_t r = rng_.below(100);
    const int count = r < 45 ? 1 : r < 80 ? 2 : 3;
    std::vector<ValueId> outputs = {pool_.back().id};
    while (static_cast<int>(outputs.size()) < count) {
      const uint64_t kind = rng_.below(100);
      if (kind < 35) {
        outputs.push_back(rng_.pick(pool_).id);
      } else if (kind < 60 && !reduced_.empty()) {
        outputs.push_back(rng_.pick(reduced_).id);
      } else if (kind < 68) {
        outputs.push_back(rng_.pick(raw_inputs_));  // an input as an output
      } else if (kind < 76) {
        outputs.push_back(rng_.pick(outputs));  // one value as two outputs
      } else if (kind < 92 && !conds_.empty()) {
        outputs.push_back(rng_.pick(conds_).id);
      } else {
        const Val v = rng_.pick(pool_);
        outputs.push_back(cast_to(v, other_dtype(dtype_of(v))).id);
      }
    }
    // Sometimes the first output leaves with its axes reordered (downstream of whatever
    // reductions made it). Drawn from a generator of its own, so the rest of each graph is
    // what it was before permuted outputs existed.
    const size_t rank = g_.node(outputs[0]).dims.size();
    if (rank >= 2 && layout_rng_.chance(0.2)) {
      std::vector<int64_t> perm(rank);
      for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(i);
      while (std::is_sorted(perm.begin(), perm.end())) {
        for (size_t i = rank - 1; i > 0; --i)
          std::swap(perm[i], perm[static_cast<size_t>(layout_rng_.below(i + 1))]);
      }
      outputs[0] = build_permute(g_, outputs[0], perm);
    }
    for (size_t i = 0; i < outputs.size(); ++i) build_output(g_, "y" + std::to_string(i), outputs[i]);
  }

  Rng rng_;
  Rng layout_rng_;  // permuted outputs only
  RandomGraphOptions options_;
  bool integer_;
  Graph g_;
  Dims domain_;
  Mask full_mask_ = 0;
  DType base_ = DType::kF32;
  int input_count_ = 0;
  std::vector<Val> pool_;              // values of the domain's shape
  std::vector<Val> reduced_;           // reduction results
  std::vector<Val> conds_;             // bool values
  std::vector<Val> comparable_;        // inputs after layout ops, before casts
  std::vector<Val> broadcast_inputs_;  // row/column vectors and scalars, cast
  std::vector<ValueId> raw_inputs_;
};

}  // namespace

bool is_integer_seed(uint64_t seed, const RandomGraphOptions& options) {
  switch (options.mode) {
    case GraphMode::kFloat:
      return false;
    case GraphMode::kInteger:
      return true;
    case GraphMode::kAuto:
      break;
  }
  return integer_mode_of(seed);
}

Graph random_graph(uint64_t seed, const RandomGraphOptions& options) {
  return Generator(seed, options, is_integer_seed(seed, options)).build();
}

}  // namespace fstitch::testing
