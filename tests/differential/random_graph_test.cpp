// The random graph generator: its PRNG, determinism, validity, and that the default seed
// range covers what the differential tests are meant to exercise.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>

#include "common/random_graph.hpp"
#include "ir/text.hpp"
#include "ir/verify.hpp"

namespace fstitch::testing {
namespace {

constexpr uint64_t kSeeds = 520;  // the default range of Differential.RandomGraphs

TEST(Rng, MatchesXoshiro256StarStarSeededBySplitmix64) {
  // Values from an independent implementation of the published algorithms.
  Rng zero(0);
  EXPECT_EQ(zero.next(), 0x99ec5f36cb75f2b4ull);
  EXPECT_EQ(zero.next(), 0xbf6e1f784956452aull);
  EXPECT_EQ(zero.next(), 0x1a5f849d4933e6e0ull);
  Rng other(12345);
  EXPECT_EQ(other.next(), 0xbe6a36374160d49bull);
  EXPECT_EQ(other.next(), 0x214aaa0637a688c6ull);
  EXPECT_EQ(other.next(), 0xf69d16de9954d388ull);
}

TEST(Rng, DrawsStayInTheirRanges) {
  Rng rng(7);
  std::set<int64_t> seen;
  for (int i = 0; i < 10000; ++i) {
    EXPECT_LT(rng.below(3), 3u);
    const int64_t r = rng.range(-2, 2);
    EXPECT_GE(r, -2);
    EXPECT_LE(r, 2);
    seen.insert(r);
    const double u = rng.uniform();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
  EXPECT_EQ(seen.size(), 5u);  // both ends are reached
}

TEST(RandomGraph, SameSeedSameGraphOtherSeedOtherGraph) {
  std::set<std::string> texts;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const std::string text = print_graph(random_graph(seed));
    EXPECT_EQ(text, print_graph(random_graph(seed))) << "seed " << seed;
    texts.insert(text);
  }
  EXPECT_GE(texts.size(), 58u);
}

TEST(RandomGraph, ModesCanBeForced) {
  RandomGraphOptions integer;
  integer.mode = GraphMode::kInteger;
  RandomGraphOptions floating;
  floating.mode = GraphMode::kFloat;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const Graph integer_graph = random_graph(seed, integer);
    for (const Node& n : integer_graph.nodes()) EXPECT_FALSE(is_float(n.dtype)) << "seed " << seed;
    const Graph float_graph = random_graph(seed, floating);
    bool any_float = false;
    for (const Node& n : float_graph.nodes()) any_float = any_float || is_float(n.dtype);
    EXPECT_TRUE(any_float) << "seed " << seed;
  }
}

// What the default seed range contains, counted over its graphs.
struct Coverage {
  int integer = 0, rank1 = 0, rank3 = 0, long_rows = 0, big_2d = 0, one_element_rows = 0;
  int row_reductions = 0, column_reductions = 0, full_reductions = 0, keepdims = 0, no_keepdims = 0;
  int permutes = 0, reshapes = 0, selects = 0, broadcasts = 0, casts = 0;
  int slices = 0, concats = 0, pads = 0, takes = 0;
  int f16 = 0, bf16 = 0, f64 = 0, i8 = 0, u8 = 0, i32 = 0;
  int multi_output = 0, three_outputs = 0, input_output = 0, repeated_output = 0, bool_output = 0;
  int permuted_output = 0;
};

bool is_comparison(OpKind op) {
  return op == OpKind::kEq || op == OpKind::kNe || op == OpKind::kLt || op == OpKind::kLe ||
         op == OpKind::kGt || op == OpKind::kGe;
}

// A value that is a graph input or constant after layout ops and casts only.
bool from_inputs(const Graph& g, ValueId id) {
  const Node& n = g.node(id);
  switch (n.op) {
    case OpKind::kInput:
    case OpKind::kConstant:
      return true;
    case OpKind::kBroadcast:
    case OpKind::kReshape:
    case OpKind::kPermute:
    case OpKind::kCast:
      return from_inputs(g, n.operands[0]);
    default:
      return false;
  }
}

void count(const Graph& g, uint64_t seed, Coverage& c) {
  auto any = [&](const std::function<bool(const Node&)>& pred) {
    return std::any_of(g.nodes().begin(), g.nodes().end(), pred);
  };
  size_t max_rank = 0;
  for (const Node& n : g.nodes()) max_rank = std::max(max_rank, n.dims.size());
  const bool integer = !any([](const Node& n) { return is_float(n.dtype); });
  c.integer += integer;
  c.rank1 += max_rank == 1;
  c.rank3 += max_rank == 3;
  c.long_rows += any([](const Node& n) { return !n.dims.empty() && n.dims.back() == 100000; });
  c.big_2d += any([](const Node& n) { return n.dims == Dims{257, 513}; });
  // A main shape [R, 1]: no rank-2 value has more than one column.
  c.one_element_rows +=
      max_rank == 2 && !any([](const Node& n) { return n.dims.size() == 2 && n.dims[1] > 1; });
  c.casts += any([](const Node& n) { return n.op == OpKind::kCast; });
  c.permutes += any([](const Node& n) { return n.op == OpKind::kPermute; });
  c.reshapes += any([](const Node& n) { return n.op == OpKind::kReshape; });
  c.slices += any([](const Node& n) { return n.op == OpKind::kSlice; });
  c.concats += any([](const Node& n) { return n.op == OpKind::kConcat; });
  c.pads += any([](const Node& n) { return n.op == OpKind::kPad; });
  c.takes += any([](const Node& n) { return n.op == OpKind::kTake; });
  c.selects += any([](const Node& n) { return n.op == OpKind::kSelect; });
  c.broadcasts += any([](const Node& n) { return n.op == OpKind::kBroadcast; });
  c.f16 += any([](const Node& n) { return n.dtype == DType::kF16; });
  c.bf16 += any([](const Node& n) { return n.dtype == DType::kBF16; });
  c.f64 += any([](const Node& n) { return n.dtype == DType::kF64; });
  c.i8 += any([](const Node& n) { return n.dtype == DType::kI8; });
  c.u8 += any([](const Node& n) { return n.dtype == DType::kU8; });
  c.i32 += any([](const Node& n) { return n.dtype == DType::kI32; });
  bool row = false, column = false, full = false, kd = false, nkd = false;
  for (const Node& n : g.nodes()) {
    if (op_family(n.op) != OpFamily::kReduce) continue;
    const size_t rank = g.node(n.operands[0]).dims.size();
    row = row || n.axes.back() == static_cast<int64_t>(rank) - 1;
    column = column || (rank >= 2 && n.axes == std::vector<int64_t>{0});
    full = full || (rank >= 2 && n.axes.size() == rank);
    kd = kd || n.keepdims;
    nkd = nkd || !n.keepdims;
  }
  c.row_reductions += row;
  c.column_reductions += column;
  c.full_reductions += full;
  c.keepdims += kd;
  c.no_keepdims += nkd;
  const auto& outs = g.outputs();
  c.multi_output += outs.size() > 1;
  c.three_outputs += outs.size() == 3;
  std::set<ValueId> distinct;
  bool input_out = false, bool_out = false, permuted_out = false;
  for (const GraphOutput& o : outs) {
    distinct.insert(o.value);
    permuted_out = permuted_out || g.node(o.value).op == OpKind::kPermute;
    input_out = input_out || g.node(o.value).op == OpKind::kInput;
    bool_out = bool_out || g.node(o.value).dtype == DType::kBool;
  }
  c.input_output += input_out;
  c.repeated_output += distinct.size() < outs.size();
  c.bool_output += bool_out;
  c.permuted_output += permuted_out;

  // Float graphs compare inputs only, and use no operation that flips discretely.
  if (!integer) {
    for (const Node& n : g.nodes()) {
      if (is_comparison(n.op)) {
        for (ValueId o : n.operands)
          EXPECT_TRUE(from_inputs(g, o)) << "seed " << seed << ": compares a computed value";
      }
      EXPECT_TRUE(n.op != OpKind::kFloor && n.op != OpKind::kCeil && n.op != OpKind::kRound &&
                  n.op != OpKind::kSign)
          << "seed " << seed << ": " << op_name(n.op);
      if (n.op == OpKind::kCast && !is_float(n.dtype)) {
        EXPECT_TRUE(from_inputs(g, n.operands[0]))
            << "seed " << seed << ": casts a computed float to an integer";
      }
    }
  }
}

TEST(RandomGraph, DefaultSeedsAreValidAndCoverTheIntendedMix) {
  Coverage c;
  const RandomGraphOptions options;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    const Graph g = random_graph(seed, options);
    EXPECT_NO_THROW(verify_graph(g)) << "seed " << seed;
    EXPECT_GE(g.outputs().size(), 1u);
    EXPECT_LE(g.outputs().size(), 3u);
    for (const Node& n : g.nodes()) {
      EXPECT_LE(element_count(n.dims), options.max_elements) << "seed " << seed;
    }
    count(g, seed, c);
  }
  EXPECT_GE(c.integer, 40);
  EXPECT_GE(c.rank1, 25);
  EXPECT_GE(c.rank3, 40);
  EXPECT_GE(c.long_rows, 8);
  EXPECT_GE(c.big_2d, 15);
  EXPECT_GE(c.one_element_rows, 25);
  EXPECT_GE(c.row_reductions, 300);
  EXPECT_GE(c.column_reductions, 50);
  EXPECT_GE(c.full_reductions, 30);
  EXPECT_GE(c.keepdims, 250);
  EXPECT_GE(c.no_keepdims, 200);
  EXPECT_GE(c.permutes, 40);
  EXPECT_GE(c.slices, 60);
  EXPECT_GE(c.concats, 50);
  EXPECT_GE(c.pads, 20);
  EXPECT_GE(c.takes, 20);
  EXPECT_GE(c.reshapes, 200);
  EXPECT_GE(c.selects, 150);
  EXPECT_GE(c.broadcasts, 350);
  EXPECT_GE(c.casts, 250);
  EXPECT_GE(c.f16, 100);
  EXPECT_GE(c.bf16, 100);
  EXPECT_GE(c.f64, 90);
  EXPECT_GE(c.i8, 25);
  EXPECT_GE(c.u8, 25);
  EXPECT_GE(c.i32, 35);
  EXPECT_GE(c.multi_output, 200);
  EXPECT_GE(c.three_outputs, 70);
  EXPECT_GE(c.input_output, 30);
  EXPECT_GE(c.repeated_output, 30);
  EXPECT_GE(c.bool_output, 18);
  EXPECT_GE(c.permuted_output, 50);
}

}  // namespace
}  // namespace fstitch::testing
