#include "random_dag.hpp"

#include <array>
#include <string>
#include <vector>

#include "ir/builder.hpp"
#include "ir/verify.hpp"

namespace fstitch::bench {
namespace {

constexpr std::array<OpKind, 8> kUnaryOps = {OpKind::kNeg,     OpKind::kAbs,  OpKind::kExp,  OpKind::kTanh,
                                             OpKind::kSigmoid, OpKind::kRelu, OpKind::kSilu, OpKind::kGelu};
constexpr std::array<OpKind, 5> kBinaryOps = {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kMax,
                                              OpKind::kMin};
constexpr std::array<OpKind, 3> kReduceOps = {OpKind::kReduceSum, OpKind::kReduceMax, OpKind::kReduceMean};

template <class T, size_t N>
T pick(SplitMix64& rng, const std::array<T, N>& items) {
  return items[static_cast<size_t>(rng.below(N))];
}

// Values of one shape class, in creation order.
class Pool {
 public:
  void add(ValueId id) { values_.push_back(id); }
  bool empty() const { return values_.empty(); }

  // Chains take the newest value most of the time; DAGs reach anywhere half of the time.
  ValueId draw(SplitMix64& rng, DagShape shape) const {
    const uint64_t n = values_.size();
    if (shape == DagShape::kDag && rng.percent(50)) return values_[static_cast<size_t>(rng.below(n))];
    const uint64_t window = shape == DagShape::kChain ? (rng.percent(80) ? 1 : 4) : 16;
    const uint64_t back = rng.below(window < n ? window : n);
    return values_[static_cast<size_t>(n - 1 - back)];
  }

 private:
  std::vector<ValueId> values_;
};

}  // namespace

uint64_t SplitMix64::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

const char* dag_shape_name(DagShape shape) {
  return shape == DagShape::kChain ? "chain" : "dag";
}

Graph random_dag(const RandomDagOptions& options) {
  SplitMix64 rng(options.seed);
  Graph g;
  const DType dt = DType::kF32;
  Pool full;     // [rows, cols]
  Pool per_row;  // [rows, 1]
  Pool per_col;  // [cols]: weights, broadcast along rows by the builders
  size_t inputs = 0;
  auto new_input = [&](const Dims& dims) { return build_input(g, "x" + std::to_string(inputs++), dt, dims); };
  full.add(new_input({options.rows, options.cols}));
  per_col.add(new_input({options.cols}));

  const DagShape shape = options.shape;
  while (static_cast<int64_t>(g.size() - inputs) < options.operations) {
    const uint64_t step = rng.below(100);
    if (step < 30) {
      full.add(build_unary(g, pick(rng, kUnaryOps), full.draw(rng, shape)));
    } else if (step < 55) {
      full.add(build_binary(g, pick(rng, kBinaryOps), full.draw(rng, shape), full.draw(rng, shape)));
    } else if (step < 67 && !per_row.empty()) {
      // A per-row value applied to every element: the builder inserts the broadcast.
      full.add(build_binary(g, pick(rng, kBinaryOps), full.draw(rng, shape), per_row.draw(rng, shape)));
    } else if (step < 74) {
      full.add(build_binary(g, OpKind::kMul, full.draw(rng, shape), per_col.draw(rng, shape)));
    } else if (step < 86) {
      per_row.add(build_reduce(g, pick(rng, kReduceOps), full.draw(rng, shape), {1}, true));
    } else if (step < 92 && !per_row.empty()) {
      per_row.add(build_unary(g, pick(rng, kUnaryOps), per_row.draw(rng, shape)));
    } else if (step < 97 && !per_row.empty()) {
      full.add(build_broadcast(g, per_row.draw(rng, shape), {options.rows, options.cols}));
    } else if (step < 99) {
      full.add(new_input({options.rows, options.cols}));
    } else {
      per_col.add(new_input({options.cols}));
    }
  }

  std::vector<bool> used(g.size(), false);
  for (const Node& node : g.nodes()) {
    for (ValueId operand : node.operands) used[static_cast<size_t>(operand)] = true;
  }
  size_t outputs = 0;
  for (size_t id = 0; id < g.size(); ++id) {
    const OpKind op = g.node(static_cast<ValueId>(id)).op;
    if (!used[id] && op != OpKind::kInput)
      build_output(g, "y" + std::to_string(outputs++), static_cast<ValueId>(id));
  }
  verify_graph(g);
  return g;
}

}  // namespace fstitch::bench
