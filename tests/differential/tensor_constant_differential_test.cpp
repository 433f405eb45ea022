// Differential tests with tensor constants: random graphs whose inputs are turned, about half
// of them, into tensor constants holding the data the harness would have drawn for them, so
// broadcasts, transposes, reshapes, reductions and stitched kernels of every kind read
// constants through their parameters. Every plan runs against the reference evaluator on the
// host backend (on the GPU with FSTITCH_BACKEND=cuda).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/random_graph.hpp"
#include "differential/harness.hpp"

namespace fstitch::testing {
namespace {

constexpr uint64_t kSeeds = 60;

// The graph with some inputs replaced, in place, by tensor constants: value ids, operands and
// outputs stay as they are. Returns how many inputs became constants.
size_t with_constant_inputs(const Graph& source, uint64_t seed, Graph* out) {
  Rng rng(seed * 0x9e3779b97f4a7c15ull + 7);
  size_t replaced = 0;
  for (size_t i = 0; i < source.size(); ++i) {
    Node node = source.node(static_cast<ValueId>(i));
    if (node.op == OpKind::kInput && rng.chance(0.5)) {
      auto data = std::make_shared<std::vector<uint8_t>>(value_bytes(source, static_cast<ValueId>(i)));
      fill_random_input(data->data(), element_count(node.dims), node.dtype, rng.next());
      node.op = OpKind::kTensor;
      node.name.clear();
      node.data = std::move(data);
      ++replaced;
    }
    out->append(std::move(node));
  }
  for (const GraphOutput& output : source.outputs()) out->add_output(output.name, output.value);
  return replaced;
}

TEST(TensorConstantDifferential, RandomGraphsWithConstantInputsMatchTheReference) {
  std::vector<DiffCase> cases;
  size_t constants = 0;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    auto graph = std::make_shared<Graph>();
    constants += with_constant_inputs(random_graph(seed), seed, graph.get());
    for (FusionPolicy policy : {FusionPolicy::kStitch, FusionPolicy::kLoop, FusionPolicy::kNone}) {
      if (policy != FusionPolicy::kStitch && seed % 4 != 0) continue;
      DiffCase c;
      c.label = "seed " + std::to_string(seed) + " with constant inputs";
      c.reproduce =
          "fstitch_differential_tests "
          "--gtest_filter=TensorConstantDifferential.RandomGraphsWithConstantInputsMatchTheReference";
      c.graph = graph;
      c.policy = policy;
      c.data_seed = seed;
      cases.push_back(std::move(c));
    }
  }
  EXPECT_GE(constants, kSeeds / 2) << "about half of the inputs become constants";
  const HarnessOptions options = harness_options_from_env();
  for (const CaseResult& r : run_cases(cases, options)) {
    if (!r.ok) ADD_FAILURE() << r.report;
  }
}

}  // namespace
}  // namespace fstitch::testing
