// Tests of the benchmark's own pieces: the random graph generator, the Markdown tables and
// the median. Expected values are written out by hand.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "ir/text.hpp"
#include "markdown.hpp"
#include "random_dag.hpp"
#include "timing.hpp"

namespace fstitch::bench {
namespace {

TEST(Median, OddEvenAndEmpty) {
  EXPECT_DOUBLE_EQ(median({5.0, 1.0, 3.0}), 3.0);
  EXPECT_DOUBLE_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_DOUBLE_EQ(median({7.0}), 7.0);
  EXPECT_DOUBLE_EQ(median({}), 0.0);
}

TEST(Markdown, RendersPaddedTable) {
  MarkdownTable table({{"name", false}, {"n"}});
  table.add_row({"ab", "12345"});
  table.add_row({"abcdef"});
  const std::string expected =
      "| name   |     n |\n"
      "| ------ | ----: |\n"
      "| ab     | 12345 |\n"
      "| abcdef |       |\n";
  EXPECT_EQ(table.render(), expected);
}

TEST(Markdown, RejectsExtraCells) {
  MarkdownTable table({{"only"}});
  EXPECT_THROW(table.add_row({"1", "2"}), std::invalid_argument);
}

TEST(Markdown, Numbers) {
  EXPECT_EQ(fixed(3.14159, 2), "3.14");
  EXPECT_EQ(fixed(2.5, 0), "2");  // printf rounds half to even
  EXPECT_EQ(mib(3 * 1024 * 1024 / 2), "1.50");
  EXPECT_EQ(ratio(3, 2), "1.50");
  EXPECT_EQ(ratio(1, 0), "n/a");
}

TEST(SplitMix64, KnownSequence) {
  // Reference values of splitmix64 seeded with 0 (Vigna's splitmix64.c).
  SplitMix64 rng(0);
  EXPECT_EQ(rng.next(), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(rng.next(), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(rng.next(), 0x06C45D188009454Full);
}

RandomDagOptions options_for(DagShape shape, int64_t operations, uint64_t seed) {
  RandomDagOptions options;
  options.shape = shape;
  options.operations = operations;
  options.seed = seed;
  options.rows = 32;
  options.cols = 64;
  return options;
}

TEST(RandomDag, SameSeedSameGraph) {
  for (DagShape shape : {DagShape::kChain, DagShape::kDag}) {
    const auto options = options_for(shape, 300, 7);
    EXPECT_EQ(print_graph(random_dag(options)), print_graph(random_dag(options)));
    EXPECT_NE(print_graph(random_dag(options)), print_graph(random_dag(options_for(shape, 300, 8))));
  }
  EXPECT_NE(print_graph(random_dag(options_for(DagShape::kChain, 300, 7))),
            print_graph(random_dag(options_for(DagShape::kDag, 300, 7))));
}

TEST(RandomDag, SizeOpsAndOutputs) {
  for (DagShape shape : {DagShape::kChain, DagShape::kDag}) {
    for (int64_t operations : {1, 100, 1000}) {
      const Graph g = random_dag(options_for(shape, operations, 3));
      int64_t ops = 0;
      int64_t reductions = 0;
      int64_t broadcasts = 0;
      std::vector<bool> read(g.size(), false);
      for (const Node& node : g.nodes()) {
        if (node.op != OpKind::kInput) ++ops;
        if (op_family(node.op) == OpFamily::kReduce) ++reductions;
        if (node.op == OpKind::kBroadcast) ++broadcasts;
        for (ValueId v : node.operands) read[static_cast<size_t>(v)] = true;
      }
      // A step adds an operation plus at most one broadcast for its operand.
      EXPECT_GE(ops, operations);
      EXPECT_LE(ops, operations + 1);
      if (operations >= 100) {
        EXPECT_GT(reductions, 0);
        EXPECT_GT(broadcasts, 0);
      }
      std::vector<bool> output(g.size(), false);
      for (const GraphOutput& out : g.outputs()) output[static_cast<size_t>(out.value)] = true;
      for (size_t id = 0; id < g.size(); ++id) {
        if (g.node(static_cast<ValueId>(id)).op == OpKind::kInput) continue;
        EXPECT_NE(read[id], output[id]) << "value %" << id << " must be read or be an output, not both";
      }
    }
  }
}

}  // namespace
}  // namespace fstitch::bench
