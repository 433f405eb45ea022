// Horizontal packing: independent kernels share a launch, each on its own block range, when
// the cost model says one launch is faster; dependent kernels never do; every kernel that
// stays alone beside independent ones says why.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>

#include "codegen/emit.hpp"
#include "common/canonical_graphs.hpp"
#include "common/packed_graphs.hpp"
#include "common/random_graph.hpp"
#include "common/reduction_graphs.hpp"
#include "ir/builder.hpp"
#include "plan/cost_model.hpp"
#include "plan/in_place.hpp"
#include "plan/packing.hpp"
#include "plan/plan.hpp"
#include "plan/plan_test_util.hpp"

namespace fstitch::testing {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The launch's block ranges tile its grid in part order, and each part's parameters are
// the launch's parameters of the values the part reads and writes.
void expect_well_formed(const Graph& g, const FusionPlan& p) {
  for (const PlannedKernel& k : p.kernels) {
    if (!k.packed()) continue;
    EXPECT_GE(k.parts.size(), 2u);
    EXPECT_EQ(k.spec.grid_policy, GridPolicy::kFixed);
    int64_t next = 0;
    std::set<size_t> used;
    for (const KernelPart& part : k.parts) {
      EXPECT_EQ(part.first_block, next) << dump_plan(g, p);
      next += part.spec.grid_blocks;
      EXPECT_EQ(part.spec.block_threads, k.spec.block_threads);
      for (size_t i : part.params) {
        ASSERT_LT(i, k.params.size());
        used.insert(i);
        const KernelParam& param = k.params[i];
        if (param.is_scratch()) continue;  // a split row's partials or counters
        const std::vector<ValueId>& values = param.written ? part.spec.stored : part.spec.loaded;
        EXPECT_NE(std::find(values.begin(), values.end(), param.stored_value()), values.end())
            << dump_plan(g, p);
      }
    }
    EXPECT_EQ(next, k.spec.grid_blocks);
    // The launch's members are every part's, sorted as a spec keeps them.
    EXPECT_TRUE(std::is_sorted(k.spec.members.begin(), k.spec.members.end()));
    for (const KernelPart& part : k.parts) {
      for (ValueId v : part.spec.members) EXPECT_EQ(k.spec.role(v), part.spec.role(v));
    }
    EXPECT_EQ(used.size(), k.params.size()) << "every parameter of the launch belongs to a part";
    EXPECT_LE(k.params.size() * sizeof(void*), static_cast<size_t>(p.arch.kernel_param_bytes));
  }
}

// No part of a launch reads what another part of it writes.
void expect_independent_parts(const Graph& g, const FusionPlan& p) {
  for (const PlannedKernel& k : p.kernels) {
    for (const KernelPart& a : k.parts) {
      for (const KernelPart& b : k.parts) {
        if (&a == &b) continue;
        for (ValueId v : b.spec.loaded) {
          EXPECT_EQ(std::find(a.spec.members.begin(), a.spec.members.end(), v), a.spec.members.end())
              << "%" << v << "\n"
              << dump_plan(g, p);
        }
      }
    }
  }
}

// The plan's packed launch of `kind`, or null.
const PlannedKernel* packed_launch_of_kind(const FusionPlan& p, LaunchKind kind) {
  for (const PlannedKernel& k : p.kernels) {
    if (k.packed() && k.launch == kind) return &k;
  }
  return nullptr;
}

// The estimate of each normalization planned as a graph of its own.
double apart_seconds(const std::vector<std::pair<int64_t, int64_t>>& shapes, DType dtype) {
  double seconds = 0;
  for (const auto& shape : shapes) seconds += plan(independent_layer_norms({shape}, dtype)).est_seconds;
  return seconds;
}

TEST(Packing, IndependentNormalizationsAreOneLaunch) {
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    const std::vector<std::pair<int64_t, int64_t>> shapes = {
        {16, 768}, {64, 768}, {8, 768}, {128, 768}, {3, 768}};
    const Graph g = independent_layer_norms(shapes, dtype);
    const FusionPlan p = plan(g);
    ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
    EXPECT_EQ(p.kernels[0].parts.size(), shapes.size());
    EXPECT_EQ(fused_kernels(p).size(), shapes.size());
    EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes);
    EXPECT_LT(p.est_seconds, apart_seconds(shapes, dtype)) << dump_plan(g, p);
    expect_well_formed(g, p);
    const std::string dump = dump_plan(g, p);
    EXPECT_TRUE(contains(dump, "packed launch of 5 independent kernels")) << dump;
    EXPECT_TRUE(contains(dump, "part 4, blocks ")) << dump;
  }
}

// A block runs one part, so the parts of a launch overlay their shared arrays in one buffer:
// a LAMB step over small tensors, each reduced whole with its row in shared memory, is one
// launch although its parts' shared arrays add up to more than a block may declare.
TEST(Packing, PartsOverlayTheirSharedMemory) {
  const Graph g = lamb_step({768, 3072, 768, 3072, 768, 768, 3072, 768}, DType::kF32);
  const FusionPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
  expect_well_formed(g, p);
  expect_independent_parts(g, p);
  size_t largest = 0, sum = 0;
  for (const KernelPart& part : p.kernels[0].parts) {
    largest = std::max(largest, kernel_shared_bytes(g, part.spec));
    sum += kernel_shared_bytes(g, part.spec);
  }
  EXPECT_GT(sum, kStaticSharedLimit) << dump_plan(g, p);
  EXPECT_LE(largest, kStaticSharedLimit);
  // The emitted launch declares one buffer of the largest part's arrays.
  const std::string text = emit_kernel(g, p.kernels[0]);
  EXPECT_TRUE(contains(text, "FST_SHARED(uint4, fst_packed_shared, ")) << text;
  EXPECT_FALSE(contains(text, "FST_SHARED(float")) << text;
}

// Tensors reduced by groups of blocks that meet in clusters share a launch of clusters: each
// part's range starts at a cluster's first block, and a kernel without clusters stays apart
// and says why.
TEST(Packing, SplitRowsInClustersShareALaunchOfClusters) {
  const Graph g = lamb_step({12288, 12288, 768, 12288}, DType::kF32);
  const FusionPlan p = plan(g);
  expect_well_formed(g, p);
  expect_independent_parts(g, p);
  const PlannedKernel* clusters = packed_launch_of_kind(p, LaunchKind::kCluster);
  ASSERT_NE(clusters, nullptr) << dump_plan(g, p);
  EXPECT_EQ(clusters->parts.size(), 3u);
  const int G = clusters->spec.split.blocks;
  EXPECT_GT(G, 1);
  for (const KernelPart& part : clusters->parts) {
    EXPECT_EQ(part.spec.schedule, ScheduleKind::kSplitRow);
    EXPECT_EQ(part.spec.split.blocks, G);
    EXPECT_EQ(part.first_block % G, 0);
    EXPECT_EQ(part.spec.grid_blocks % G, 0);
  }
  EXPECT_EQ(p.kernels.size(), 2u) << dump_plan(g, p);
  const std::string dump = dump_plan(g, p);
  EXPECT_TRUE(contains(dump, "(clusters of " + std::to_string(G) + " block(s)), ~")) << dump;
  EXPECT_TRUE(contains(dump, "launch kinds differ (no clusters against clusters of ")) << dump;
}

// Without clusters (sm_80) the same tensors' groups meet across the grid: their split rows
// share a cooperative launch that fits one wave, each part with partials of its own and its
// counters after the previous part's in one parameter, the range zeroed before the launch.
TEST(Packing, SplitRowsAcrossTheGridShareACooperativeLaunch) {
  const Graph g = lamb_step({12288, 12288, 768, 12288}, DType::kF32);
  const FusionPlan p = plan(g, FusionPolicy::kStitch, 80);
  expect_well_formed(g, p);
  expect_independent_parts(g, p);
  const PlannedKernel* launch = packed_launch_of_kind(p, LaunchKind::kCooperative);
  ASSERT_NE(launch, nullptr) << dump_plan(g, p);
  EXPECT_EQ(launch->parts.size(), 3u) << dump_plan(g, p);
  EXPECT_LE(launch->spec.grid_blocks, int64_t{launch->spec.planned_blocks_per_sm} * p.arch.sm_count);
  std::set<size_t> counters, partials;
  uint64_t next_counter = 0;
  for (const KernelPart& part : launch->parts) {
    EXPECT_EQ(part.spec.schedule, ScheduleKind::kSplitRow);
    EXPECT_EQ(part.spec.split.residency, GroupResidency::kCooperative);
    EXPECT_EQ(part.spec.grid_blocks % part.spec.split.blocks, 0);
    // Never more groups than its partials and counters are placed for.
    EXPECT_LE(part.spec.grid_blocks / part.spec.split.blocks, part.spec.split.groups);
    EXPECT_EQ(part.spec.split.counter_offset, next_counter);
    next_counter += part.spec.split.counter_bytes / 4;
    for (size_t i : part.params) {
      const KernelParam& param = launch->params[i];
      if (param.scratch == ParamScratch::kSplitCounters) counters.insert(i);
      if (param.scratch == ParamScratch::kSplitPartials) partials.insert(i);
    }
  }
  ASSERT_EQ(counters.size(), 1u);
  EXPECT_EQ(partials.size(), 3u);
  const KernelParam& shared_counters = launch->params[*counters.begin()];
  EXPECT_EQ(shared_counters.scratch_bytes, next_counter * 4);
  EXPECT_EQ(launch->zeroed_workspace.offset, shared_counters.index);
  EXPECT_EQ(launch->zeroed_workspace.bytes, shared_counters.scratch_bytes);
  // The emitted parts count at their own counters.
  const std::string text = emit_kernel(g, *launch);
  EXPECT_TRUE(contains(text, "fst_group_barrier((p")) << text;
  EXPECT_TRUE(contains(dump_plan(g, p), "(fixed) (cooperative launch), ~")) << dump_plan(g, p);

  // On an H100, f32 tensors split over half a wave each go two to a launch. A third would
  // take a third of the wave each: slices too long to keep on chip, read again, and packing
  // never costs bandwidth.
  const Graph large = lamb_step({589824, 589824, 589824}, DType::kF32);
  const FusionPlan h100 = plan(large);
  expect_well_formed(large, h100);
  ASSERT_EQ(h100.kernels.size(), 2u) << dump_plan(large, h100);
  EXPECT_EQ(h100.kernels[0].parts.size(), 2u) << dump_plan(large, h100);
  EXPECT_EQ(h100.kernels[0].launch, LaunchKind::kCooperative);
  EXPECT_TRUE(contains(dump_plan(large, h100),
                       "is launched alone: cost model: its rows split over 44 blocks (its "
                       "share of a wave of 132) would move "))
      << dump_plan(large, h100);
}

// Split rows whose groups each fill a wave: alone, each 16-bit tensor of 589824 elements is
// one group of 264 blocks on an H100. Joined, each tensor's rows are split again over its
// share of the wave, its longer slice kept in the launch's dynamic shared memory: three to a
// launch, in fewer launches and no more bytes than apart.
TEST(Packing, SplitRowsFillingAWaveAreSplitAgainToShareACooperativeLaunch) {
  const Graph g = lamb_step({589824, 589824, 589824}, DType::kBF16);
  const FusionPlan p = plan(g);
  expect_well_formed(g, p);
  expect_independent_parts(g, p);
  ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
  const PlannedKernel& launch = p.kernels[0];
  EXPECT_EQ(launch.launch, LaunchKind::kCooperative);
  ASSERT_EQ(launch.parts.size(), 3u) << dump_plan(g, p);
  const int64_t wave = int64_t{launch.spec.planned_blocks_per_sm} * p.arch.sm_count;
  EXPECT_LE(launch.spec.grid_blocks, wave);
  for (const KernelPart& part : launch.parts) {
    EXPECT_EQ(part.spec.split.residency, GroupResidency::kCooperative);
    EXPECT_LE(part.spec.split.blocks, wave / 3) << dump_plan(g, p);
    EXPECT_EQ(part.spec.grid_blocks, part.spec.split.blocks);
    EXPECT_GT(part.spec.dynamic_shared_bytes, 0u) << "the slice kept on chip";
  }
  EXPECT_GT(launch.spec.dynamic_shared_bytes, 0u);

  // Each alone: one group of a whole wave per tensor, three launches moving at least as much.
  const FusionPlan apart = plan(lamb_step({589824}, DType::kBF16));
  ASSERT_EQ(apart.kernels.size(), 1u);
  EXPECT_EQ(apart.kernels[0].spec.split.blocks,
            int64_t{apart.kernels[0].spec.planned_blocks_per_sm} * apart.arch.sm_count);
  EXPECT_LE(p.planned_bytes, 3 * apart.planned_bytes);
  EXPECT_LT(p.est_seconds, 3 * apart.est_seconds);

  // On an A100 (164 KB of shared memory an SM) an f32 tensor's slices at half a wave would no
  // longer fit on chip: each is launched alone, and the dump names that cause, not the cost
  // of a pack that would schedule it again without its split (the small tensor's).
  const Graph a100_graph = lamb_step({589824, 768, 589824}, DType::kF32);
  const FusionPlan a100 = plan(a100_graph, FusionPolicy::kStitch, 80);
  expect_well_formed(a100_graph, a100);
  EXPECT_EQ(a100.kernels.size(), 3u) << dump_plan(a100_graph, a100);
  EXPECT_TRUE(contains(
      dump_plan(a100_graph, a100),
      "kernel 2 is launched alone: cost model: its rows split over 54 blocks (its share of a wave of "
      "108) would move "))
      << dump_plan(a100_graph, a100);
}

// A multi-tensor AdamW step over tensors of mixed sizes: every tensor's update is one
// elementwise part, the launches are as few as the code budget allows, and every output
// may still update its input in place.
TEST(Packing, MultiTensorOptimizerStepIsFewLaunches) {
  const std::vector<int64_t> sizes = transformer_parameter_sizes(100);
  const Graph g = adamw_step(sizes, DType::kF32);
  const FusionPlan p = plan(g);
  expect_well_formed(g, p);
  expect_independent_parts(g, p);
  EXPECT_EQ(fused_kernels(p).size(), sizes.size());
  // The code budget closes a launch at 71 tensors (497 of the 512 pointers 4 KiB holds),
  // and the dump says so for the second, with the numbers.
  EXPECT_EQ(p.kernels.size(), 2u) << dump_plan(g, p);
  EXPECT_EQ(p.planned_bytes, p.lower_bound_bytes);
  const std::string dump = dump_plan(g, p);
  EXPECT_TRUE(contains(dump,
                       "kernel 1 is a packed launch of its own: its first part joined no launch open "
                       "beside it: resources: about "))
      << dump;
  EXPECT_TRUE(contains(dump, " instructions of code, over the budget of 16384")) << dump;
  // Output j of tensor i may take the buffer of its own input (p_i' of p_i, m_i' of m_i...),
  // and of no input another part of its launch reads (only of those read by earlier launches).
  auto launch_touching = [&](ParamKind kind, size_t index) {
    for (size_t k = 0; k < p.kernels.size(); ++k) {
      for (const KernelParam& param : p.kernels[k].params) {
        if (param.kind == kind && param.index == index) return k;
      }
    }
    return p.kernels.size();
  };
  for (size_t o = 0; o < g.outputs().size(); ++o) {
    const size_t tensor = o / 3, own = 4 * tensor + (o % 3 == 0 ? 0 : o % 3 + 1);
    const std::vector<size_t>& inputs = p.in_place_inputs[o];
    EXPECT_NE(std::find(inputs.begin(), inputs.end(), own), inputs.end()) << g.outputs()[o].name;
    const size_t writer = launch_touching(ParamKind::kOutput, o);
    for (size_t i : inputs) {
      if (i / 4 == tensor) continue;
      EXPECT_LT(launch_touching(ParamKind::kInput, i), writer) << g.outputs()[o].name << " " << i;
    }
  }
}

// Kernels with a path between them (here through a gather of an exp) never share a launch;
// the ones beside them do.
// Where the driver and NVRTC take 32 KiB of parameters (CUDA 12.1 on), 300 independent
// scalings (600 pointers) are one launch; in the classic 4 KiB (512 pointers), two. The rule,
// and the device facts that carry it.
TEST(Packing, TheLargeParameterSpaceTakesMorePartsPerLaunch) {
  EXPECT_EQ(kernel_param_bytes_for(12010, 12, 1), kLargeKernelParamBytes);
  EXPECT_EQ(kernel_param_bytes_for(13000, 13, 0), kLargeKernelParamBytes);
  EXPECT_EQ(kernel_param_bytes_for(12000, 13, 0), kClassicKernelParamBytes);  // the driver is older
  EXPECT_EQ(kernel_param_bytes_for(13000, 12, 0), kClassicKernelParamBytes);  // NVRTC is older
  Graph g;
  for (int i = 0; i < 300; ++i) {
    const ValueId x = build_input(g, "x" + std::to_string(i), DType::kF32, {1000 + i});
    build_output(g, "y" + std::to_string(i),
                 build_binary(g, OpKind::kMul, x, build_constant_f64(g, DType::kF32, 2.0)));
  }
  DeviceFacts facts;
  FusionOptions options;
  options.device = refine_with_device(*arch_params(90), facts);
  EXPECT_EQ(options.device->kernel_param_bytes, kClassicKernelParamBytes);
  const FusionPlan classic = plan_fusion(g, options);
  expect_well_formed(g, classic);
  EXPECT_EQ(classic.kernels.size(), 2u) << dump_plan(g, classic);
  facts.kernel_param_bytes = kLargeKernelParamBytes;
  options.device = refine_with_device(*arch_params(90), facts);
  const FusionPlan large = plan_fusion(g, options);
  expect_well_formed(g, large);
  ASSERT_EQ(large.kernels.size(), 1u) << dump_plan(g, large);
  EXPECT_EQ(large.kernels[0].params.size(), 600u);
}

TEST(Packing, DependentKernelsAreNeverPacked) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {8, 32});
  ValueId idx = build_input(g, "idx", DType::kI32, {64});
  ValueId other = build_input(g, "other", DType::kF32, {16, 16});
  build_output(g, "rows", build_take(g, build_unary(g, OpKind::kExp, x), idx, 0));
  build_output(g, "side", build_unary(g, OpKind::kTanh, other));
  const FusionPlan p = plan(g);
  EXPECT_EQ(fused_kernels(p).size(), 3u) << dump_plan(g, p);
  EXPECT_EQ(p.kernels.size(), 2u) << dump_plan(g, p);
  expect_independent_parts(g, p);
  expect_well_formed(g, p);
}

// Over random graphs: no launch packs a kernel with one it depends on, every packed launch is
// well formed, and the launch order runs (plan_fusion checks its steps).
TEST(Packing, RandomGraphsPackOnlyIndependentKernels) {
  size_t packed = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const Graph g = random_graph(seed);
    const FusionPlan p = plan(g);
    expect_independent_parts(g, p);
    expect_well_formed(g, p);
    for (const PlannedKernel& k : p.kernels) packed += k.packed() ? 1 : 0;
    if (::testing::Test::HasFailure()) FAIL() << "seed " << seed;
  }
  EXPECT_GT(packed, 10u);
}

// A kernel launched alone beside independent ones says why: with the numbers, when the
// cost model finds one launch no faster (a 64-column row and an 8192-column row want blocks
// of very different sizes).
TEST(Packing, KernelsLaunchedAloneSayWhy) {
  const Graph g = independent_layer_norms({{4, 64}, {4, 8192}}, DType::kF32);
  const FusionPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 2u) << dump_plan(g, p);
  ASSERT_EQ(p.packing_notes.size(), 1u) << dump_plan(g, p);
  EXPECT_TRUE(contains(p.packing_notes[0], "is launched alone: cost model: one launch estimated no faster ("))
      << p.packing_notes[0];
  EXPECT_TRUE(contains(p.packing_notes[0], " packed against ")) << p.packing_notes[0];
  EXPECT_TRUE(contains(dump_plan(g, p), "packing:\n  kernel ")) << dump_plan(g, p);
}

// Column totals keep partials and counters of their own: a norm backward is launched alone
// and says so.
TEST(Packing, ColumnTotalsLaunchAlone) {
  Graph g = independent_layer_norms({{8, 256}}, DType::kF32);
  add_layer_norm_backward(g, 512, 768, DType::kF32, "_b");
  const FusionPlan p = plan(g);
  bool totals = false;
  for (const KernelSpec* k : fused_kernels(p)) totals = totals || !k->column_totals.empty();
  ASSERT_TRUE(totals) << dump_plan(g, p);
  ASSERT_FALSE(p.packing_notes.empty()) << dump_plan(g, p);
  bool said = false;
  for (const std::string& note : p.packing_notes)
    said = said || contains(note, "its column totals keep partials and counters of their own");
  EXPECT_TRUE(said) << dump_plan(g, p);
}

// The parts of a launch run at the same time: an output may not take the buffer of an input
// another part reads.
TEST(Packing, AnInputReadBesideItsInPlaceWriterKeepsItsBuffer) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {32, 64});
  build_output(g, "twice", build_binary(g, OpKind::kMul, x, build_constant_f64(g, DType::kF32, 2.0)));
  ValueId idx = build_input(g, "idx", DType::kI32, {48});
  build_output(g, "rows", build_take(g, x, idx, 0));
  const FusionPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
  ASSERT_TRUE(p.kernels[0].packed()) << dump_plan(g, p);
  const InPlaceCheck check = check_in_place(g, p, 0, 0);
  EXPECT_EQ(check.verdict, InPlaceVerdict::kReadAlongside);
  EXPECT_TRUE(p.in_place_inputs[0].empty());
  EXPECT_TRUE(contains(describe_in_place(g, p, 0, 0, check), "their blocks run at the same time"))
      << describe_in_place(g, p, 0, 0, check);
  // Alone, the same update may write over x.
  Graph alone;
  ValueId y = build_input(alone, "x", DType::kF32, {32, 64});
  build_output(alone, "twice",
               build_binary(alone, OpKind::kMul, y, build_constant_f64(alone, DType::kF32, 2.0)));
  EXPECT_EQ(plan(alone).in_place_inputs[0], std::vector<size_t>{0});
}

// A kernel analyzed again for a packed launch of a given block size gets a schedule that can
// share it (or none), whatever mappings it tried and refused on the way.
TEST(Packing, SchedulesForAPackMeetTheirConstraint) {
  size_t analyzed = 0;
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    const Graph g = random_graph(seed);
    const FusionPlan p = plan(g);
    const PlanInputs in = make_plan_inputs(g, FusionPolicy::kStitch, p.arch);
    for (const KernelSpec* k : fused_kernels(p)) {
      if (k->members.empty()) continue;
      for (int threads : {0, 64, 256, 1024}) {
        KernelSpec part;
        Rejection why;
        if (!analyze_kernel(in, k->members, &part, &why, {LaunchSharing::kPackedPart, threads})) continue;
        ++analyzed;
        EXPECT_TRUE(why_not_packable(part).empty()) << "seed " << seed << ": " << why_not_packable(part);
        if (threads > 0) {
          EXPECT_EQ(part.block_threads, threads) << "seed " << seed;
        }
      }
    }
  }
  EXPECT_GT(analyzed, 300u);
}

TEST(Packing, PolicyNoneLaunchesEveryKernelAlone) {
  const Graph g = independent_layer_norms({{16, 768}, {64, 768}}, DType::kF32);
  const FusionPlan p = plan(g, FusionPolicy::kNone);
  for (const PlannedKernel& k : p.kernels) EXPECT_FALSE(k.packed());
  EXPECT_TRUE(p.packing_notes.empty());
}

TEST(Packing, ThePlanIsDeterministic) {
  const Graph g = adamw_step({768, 3072, 768 * 768, 5, 4096}, DType::kBF16);
  EXPECT_EQ(dump_plan(g, plan(g)), dump_plan(g, plan(g)));
}

// A small LayerNorm planned alone for 256-thread blocks and a wide one planned for 512: the
// pack schedules the small one again for the joining kernel's 512-thread blocks, and the
// one launch is estimated faster than the two apart.
TEST(Packing, APackSchedulesItsPartsAgainForAJoiningKernelsBlocks) {
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    const Graph g = independent_layer_norms({{8, 1024}, {32, 16384}}, dtype);
    const FusionPlan p = plan(g);
    expect_well_formed(g, p);
    ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
    ASSERT_TRUE(p.kernels[0].packed()) << dump_plan(g, p);
    const FusionPlan small = plan(independent_layer_norms({{8, 1024}}, dtype));
    const FusionPlan wide = plan(independent_layer_norms({{32, 16384}}, dtype));
    ASSERT_EQ(small.kernels.size(), 1u);
    ASSERT_EQ(wide.kernels.size(), 1u);
    EXPECT_NE(small.kernels[0].spec.block_threads, p.kernels[0].spec.block_threads) << dump_plan(g, p);
    EXPECT_EQ(wide.kernels[0].spec.block_threads, p.kernels[0].spec.block_threads) << dump_plan(g, p);
    EXPECT_LT(p.est_seconds, small.est_seconds + wide.est_seconds) << dump_plan(g, p);
  }
}

// Packing never makes the plan's estimate worse than its kernels launched one by one.
TEST(Packing, APackedLaunchIsEstimatedFasterThanItsPartsApart) {
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const Graph g = random_graph(seed);
    const FusionPlan p = plan(g);
    for (const PlannedKernel& k : p.kernels) {
      if (!k.packed()) continue;
      double apart = 0;
      for (const KernelPart& part : k.parts) apart += part.spec.est_seconds;
      EXPECT_LT(k.spec.est_seconds, apart) << "seed " << seed << "\n" << dump_plan(g, p);
    }
  }
}

}  // namespace
}  // namespace fstitch::testing
