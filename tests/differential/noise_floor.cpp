#include "differential/noise_floor.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "common/random_graph.hpp"
#include "differential/compare.hpp"
#include "ir/builder.hpp"
#include "ref/evaluator.hpp"

namespace fstitch::testing {
namespace {

int64_t reduced_count(const Graph& g, const Node& n) {
  return element_count(g.node(n.operands[0]).dims) / element_count(n.dims);
}

// Results computed in f32 (f32, f16 and bf16 values); f64 arithmetic is the reference's own,
// and a reduction of one element is exact everywhere.
bool perturbed(const Graph& g, const Node& n) {
  if (op_family(n.op) == OpFamily::kReduce && reduced_count(g, n) == 1) return false;
  return is_float(n.dtype) && n.dtype != DType::kF64 && rounds_differently(g, n);
}

// Half-units of f32 precision (2^-24) by which a result may move: about one unit for an
// operation, about sqrt(n) for a sum or mean of n values accumulated in another order.
int64_t half_units(const Graph& g, const Node& n) {
  if (op_family(n.op) != OpFamily::kReduce) return 2;
  return 2 * static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(reduced_count(g, n)))));
}

}  // namespace

std::vector<NoiseFloor> measure_noise_floor(const Graph& graph, const std::vector<const void*>& inputs,
                                            const std::vector<const void*>& reference, uint64_t seed) {
  Graph copy;
  std::vector<ValueId> map(graph.size());
  std::vector<const void*> copy_inputs;
  std::vector<std::vector<float>> factors;  // the inner buffers stay put as the outer one grows
  Rng rng(seed);
  size_t next_input = 0;
  for (size_t i = 0; i < graph.size(); ++i) {
    const Node& original = graph.node(static_cast<ValueId>(i));
    Node n = original;
    for (ValueId& o : n.operands) o = map[static_cast<size_t>(o)];
    ValueId id = copy.append(n);
    if (n.op == OpKind::kInput) copy_inputs.push_back(inputs.at(next_input++));
    if (perturbed(graph, original)) {
      const int64_t units = half_units(graph, original);
      factors.emplace_back(static_cast<size_t>(element_count(n.dims)));
      for (float& f : factors.back())
        f = static_cast<float>(1.0 + std::ldexp(static_cast<double>(rng.range(-units, units)), -24));
      const ValueId factor = build_input(copy, "#noise" + std::to_string(i), DType::kF32, n.dims);
      copy_inputs.push_back(factors.back().data());
      ValueId v = n.dtype == DType::kF32 ? id : build_cast(copy, id, DType::kF32);
      v = build_binary(copy, OpKind::kMul, v, factor);
      id = n.dtype == DType::kF32 ? v : build_cast(copy, v, n.dtype);
    }
    map[i] = id;
  }
  for (const GraphOutput& o : graph.outputs()) build_output(copy, o.name, map[static_cast<size_t>(o.value)]);

  std::vector<std::vector<unsigned char>> results;
  std::vector<void*> result_pointers;
  for (const GraphOutput& o : graph.outputs()) {
    const Node& n = graph.node(o.value);
    results.emplace_back(static_cast<size_t>(element_count(n.dims)) * dtype_size(n.dtype));
  }
  for (auto& r : results) result_pointers.push_back(r.data());
  evaluate_reference(copy, copy_inputs, result_pointers);

  const double inf = std::numeric_limits<double>::infinity();
  std::vector<NoiseFloor> floors(graph.outputs().size());
  for (size_t i = 0; i < floors.size(); ++i) {
    const Node& n = graph.node(graph.outputs()[i].value);
    if (!is_float(n.dtype)) continue;
    const Comparison c =
        compare_output(results[i].data(), reference.at(i), n.dtype, n.dims, Tolerance{false, inf, inf});
    floors[i] = NoiseFloor{c.l2_error, c.max_over_rms};
  }
  return floors;
}

}  // namespace fstitch::testing
