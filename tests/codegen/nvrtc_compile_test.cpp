// Every kernel the code generator emits for the canonical graphs compiles with NVRTC for
// sm_80 and sm_90, and the stitched kernels neither spill nor use local memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "codegen/emit.hpp"
#include "codegen/prelude.hpp"
#include "common/canonical_graphs.hpp"
#include "common/movement_graphs.hpp"
#include "common/packed_graphs.hpp"
#include "common/random_graph.hpp"
#include "common/reduction_graphs.hpp"
#include "ir/builder.hpp"
#include "jit/kernel_cache.hpp"
#include "plan/cost_model.hpp"
#include "plan/gelu_evaluation.hpp"
#include "plan/plan.hpp"
#include "plan/schedule_columns.hpp"

namespace fstitch {
namespace {

jit::KernelCache& cache() {
  static jit::KernelCache c(jit::KernelCacheOptions{});  // memory only
  return c;
}

// Compiles each request (kernel i planned as specs[i]) and checks its entry points: no spills
// and no stack frame, the shared memory within the device's per-block limit, and the compiled
// registers and shared memory (static, and the plan's dynamic share) allow the blocks per SM
// the grid was sized for. Returns the modules, for what a test prints or checks besides.
std::vector<jit::ModulePtr> expect_within_planned_occupancy(const std::vector<jit::CompileRequest>& requests,
                                                            const std::vector<KernelSpec>& specs,
                                                            const std::vector<std::string>& labels) {
  std::vector<jit::ModulePtr> modules;
  EXPECT_NO_THROW(modules = cache().compile_all(requests));
  EXPECT_EQ(modules.size(), requests.size());
  for (size_t i = 0; i < modules.size(); ++i) {
    SCOPED_TRACE(labels[i]);
    const ArchParams arch = *arch_params(requests[i].arch);
    for (const jit::FunctionResources& f : modules[i]->resources) {
      if (!f.entry) continue;
      EXPECT_EQ(f.spill_store_bytes, 0) << f.name << "\n" << modules[i]->log;
      EXPECT_EQ(f.spill_load_bytes, 0) << f.name;
      EXPECT_EQ(f.stack_frame_bytes, 0) << f.name;
      const size_t shared = static_cast<size_t>(f.shared_bytes) + specs[i].dynamic_shared_bytes;
      EXPECT_LE(shared, static_cast<size_t>(arch.max_shared_bytes_per_block));
      const Occupancy real = occupancy(arch, specs[i].block_threads, f.registers, shared);
      EXPECT_GE(real.blocks_per_sm, specs[i].planned_blocks_per_sm)
          << f.registers << " registers (estimated " << specs[i].registers_estimate << "); the grid assumed "
          << specs[i].planned_blocks_per_sm << " blocks per SM";
    }
  }
  return modules;
}

FusionPlan plan(const Graph& g, FusionPolicy policy, int sm) {
  FusionOptions o;
  o.policy = policy;
  o.target_sm = sm;
  return plan_fusion(g, o);
}

TEST(NvrtcCompile, StitchedCanonicalKernelsCompileWithoutSpills) {
  struct Shape {
    int64_t rows, cols;
  };
  std::vector<jit::CompileRequest> requests;
  std::vector<std::string> labels;
  for (const auto& c : testing::canonical_graphs()) {
    for (Shape s : {Shape{64, 256}, Shape{8, 4096}}) {
      for (DType t : {DType::kF32, DType::kBF16}) {
        Graph g = c.build(s.rows, s.cols, t);
        for (int sm : {80, 90}) {
          FusionPlan p = plan(g, FusionPolicy::kStitch, sm);
          ASSERT_EQ(p.kernels.size(), 1u) << c.name;
          jit::CompileRequest r;
          r.source = std::string(kernel_prelude()) + emit_kernel(g, p.kernels[0]);
          r.name = c.name + ".cu";
          r.arch = sm;
          requests.push_back(r);
          labels.push_back(c.name + " " + std::to_string(s.rows) + "x" + std::to_string(s.cols) + " " +
                           dtype_name(t) + " sm_" + std::to_string(sm));
        }
      }
    }
  }
  std::vector<jit::ModulePtr> modules;
  ASSERT_NO_THROW(modules = cache().compile_all(requests));
  for (size_t i = 0; i < modules.size(); ++i) {
    SCOPED_TRACE(labels[i]);
    EXPECT_NE(modules[i]->ptx.find(".entry fst_k0"), std::string::npos);
    ASSERT_FALSE(modules[i]->resources.empty()) << modules[i]->log;
    for (const jit::FunctionResources& f : modules[i]->resources) {
      EXPECT_EQ(f.spill_store_bytes, 0) << f.name << "\n" << modules[i]->log;
      EXPECT_EQ(f.spill_load_bytes, 0) << f.name;
      EXPECT_EQ(f.stack_frame_bytes, 0) << f.name;
      EXPECT_LE(f.registers, 128) << f.name;
    }
  }
}

// Row kernels at every shape class of their vector and scalar paths (whole vectors, odd
// widths, partial last tiles, one element per row), every float dtype: they compile for
// sm_80 and sm_90 and neither spill nor use local memory.
TEST(NvrtcCompile, RowKernelsAtTailAndOddShapesCompileWithoutSpills) {
  std::vector<jit::CompileRequest> requests;
  std::vector<std::string> labels;
  for (const auto& c : testing::canonical_graphs()) {
    for (int64_t cols : {3, 17, 784, 1000, 1024, 1600, 3136, 4097, 8191}) {
      for (DType t : {DType::kF32, DType::kF16, DType::kBF16}) {
        Graph g = c.build(100, cols, t);
        for (int sm : {80, 90}) {
          jit::CompileRequest r;
          r.source = emit_module(g, plan(g, FusionPolicy::kStitch, sm));
          r.name = c.name + ".cu";
          r.arch = sm;
          requests.push_back(r);
          labels.push_back(c.name + " 100x" + std::to_string(cols) + " " + dtype_name(t) + " sm_" +
                           std::to_string(sm));
        }
      }
    }
  }
  std::vector<jit::ModulePtr> modules;
  ASSERT_NO_THROW(modules = cache().compile_all(requests));
  ASSERT_EQ(modules.size(), requests.size());
  for (size_t i = 0; i < modules.size(); ++i) {
    SCOPED_TRACE(labels[i]);
    ASSERT_FALSE(modules[i]->resources.empty()) << modules[i]->log;
    for (const jit::FunctionResources& f : modules[i]->resources) {
      EXPECT_EQ(f.spill_store_bytes, 0) << f.name << "\n" << modules[i]->log;
      EXPECT_EQ(f.stack_frame_bytes, 0) << f.name;
    }
  }
}

// Rows that are not contiguous (BatchNorm's channels over N, H and W; softmax over axes 0
// and 2, with the innermost axis reduced or kept) compile for sm_80 and sm_90 without
// spills, within the occupancy their grids were sized for (split rows and column groups wait
// for their blocks: every planned block must fit).
TEST(NvrtcCompile, StridedRowKernelsCompileWithinTheirOccupancy) {
  std::vector<jit::CompileRequest> requests;
  std::vector<std::string> labels;
  std::vector<KernelSpec> specs;
  std::vector<Graph> graphs;
  for (DType t : {DType::kF32, DType::kBF16}) {
    graphs.push_back(testing::batch_norm_training({32, 64, 56, 56}, t));
    graphs.push_back(testing::batch_norm_training({256, 256, 14, 14}, t));
    graphs.push_back(
        testing::column_pass_graph(testing::ColumnPassGraph::kSoftmax, t, {64, 128, 512}, {0, 2}));
    // The innermost axis kept: column tiles whose reduced rows unravel.
    graphs.push_back(
        testing::column_pass_graph(testing::ColumnPassGraph::kSoftmax, t, {64, 128, 512, 4}, {0, 2}));
    graphs.push_back(
        testing::column_pass_graph(testing::ColumnPassGraph::kCentered, t, {32, 12, 256, 64}, {0, 2}));
  }
  for (size_t i = 0; i < graphs.size(); ++i) {
    for (int sm : {80, 90}) {
      const FusionPlan p = plan(graphs[i], FusionPolicy::kStitch, sm);
      for (const PlannedKernel& k : p.kernels) {
        if (k.spec.reduced_axes.empty() || k.spec.contiguous_rows) continue;
        EXPECT_NE(k.spec.schedule, ScheduleKind::kThreadPerRow) << dump_plan(graphs[i], p);
        jit::CompileRequest r;
        r.source = std::string(kernel_prelude()) + emit_kernel(graphs[i], k);
        r.name = "strided_rows.cu";
        r.arch = sm;
        requests.push_back(r);
        specs.push_back(k.spec);
        labels.push_back("graph " + std::to_string(i) + " " + k.name + " sm_" + std::to_string(sm));
      }
    }
  }
  ASSERT_GE(requests.size(), graphs.size() * 2);
  expect_within_planned_occupancy(requests, specs, labels);
}

TEST(NvrtcCompile, EveryPolicyAndDtypeCompiles) {
  std::vector<jit::CompileRequest> requests;
  for (const auto& c : testing::canonical_graphs()) {
    for (DType t : {DType::kF16, DType::kF64}) {
      Graph g = c.build(33, 257, t);
      for (FusionPolicy policy : {FusionPolicy::kLoop, FusionPolicy::kNone}) {
        for (int sm : {80, 90}) {
          FusionPlan p = plan(g, policy, sm);
          jit::CompileRequest r;
          r.source = emit_module(g, p);  // all kernels of the plan in one program
          r.name = c.name + "_" + fusion_policy_name(policy) + ".cu";
          r.arch = sm;
          requests.push_back(r);
        }
      }
    }
  }
  std::vector<jit::ModulePtr> modules;
  ASSERT_NO_THROW(modules = cache().compile_all(requests));
  EXPECT_EQ(modules.size(), requests.size());
}

// Packed launches (independent normalizations, a multi-tensor optimizer step) compile for
// sm_80 and sm_90 without spills, within the occupancy their fixed grid was sized for: the
// launch's blocks hold the registers of its widest part and the shared memory of its largest.
TEST(NvrtcCompile, PackedLaunchesCompileWithinTheirOccupancy) {
  std::vector<jit::CompileRequest> requests;
  std::vector<std::string> labels;
  std::vector<KernelSpec> specs;
  for (DType t : {DType::kF32, DType::kBF16}) {
    const std::vector<std::pair<std::string, Graph>> graphs = {
        {"layer_norms", testing::independent_layer_norms({{16, 768}, {5, 1000}, {64, 768}, {2, 768}}, t)},
        {"adamw", testing::adamw_step({768, 3072, 768 * 768, 17, 4096}, t)},
        // Parts whose shared arrays overlay one buffer (each row cache in shared memory).
        {"lamb", testing::lamb_step({768, 3072, 768, 3072, 768, 768, 100}, t)},
        // Split rows in clusters sharing one launch of clusters (sm_90), or a cooperative one
        // (sm_80).
        {"lamb_clusters", testing::lamb_step({12288, 12288, 12288}, t)},
        // Split rows across a cooperative grid, each slice in dynamic shared memory (sm_90).
        {"lamb_cooperative", testing::lamb_step({589824, 589824}, t)}};
    for (const auto& [name, g] : graphs) {
      for (int sm : {80, 90}) {
        const FusionPlan p = plan(g, FusionPolicy::kStitch, sm);
        for (const PlannedKernel& k : p.kernels) {
          if (!k.packed()) continue;
          jit::CompileRequest r;
          r.source = std::string(kernel_prelude()) + emit_kernel(g, k);
          r.name = name + ".cu";
          r.arch = sm;
          requests.push_back(r);
          specs.push_back(k.spec);
          labels.push_back(name + " " + dtype_name(t) + " sm_" + std::to_string(sm) + " " + k.name);
        }
      }
    }
  }
  // A launch past the classic 4 KiB of parameters (CUDA 12.1 on): 300 scalings, 600 pointers.
  Graph scalings;
  for (int i = 0; i < 300; ++i) {
    const ValueId x = build_input(scalings, "x" + std::to_string(i), DType::kF32, {1000 + i});
    build_output(scalings, "y" + std::to_string(i),
                 build_binary(scalings, OpKind::kMul, x, build_constant_f64(scalings, DType::kF32, 2.0)));
  }
  for (int sm : {80, 90}) {
    DeviceFacts facts;
    facts.kernel_param_bytes = kLargeKernelParamBytes;
    FusionOptions options;
    options.target_sm = sm;
    options.device = refine_with_device(*arch_params(sm), facts);
    const FusionPlan p = plan_fusion(scalings, options);
    ASSERT_EQ(p.kernels.size(), 1u);
    jit::CompileRequest r;
    r.source = std::string(kernel_prelude()) + emit_kernel(scalings, p.kernels[0]);
    r.name = "scalings.cu";
    r.arch = sm;
    requests.push_back(r);
    specs.push_back(p.kernels[0].spec);
    labels.push_back("300 scalings, 600 pointers, sm_" + std::to_string(sm));
  }
  ASSERT_GE(requests.size(), 10u);
  std::vector<jit::ModulePtr> modules;
  ASSERT_NO_THROW(modules = cache().compile_all(requests));
  for (size_t i = 0; i < modules.size(); ++i) {
    SCOPED_TRACE(labels[i]);
    const ArchParams arch = *arch_params(requests[i].arch);
    bool entry = false;
    for (const jit::FunctionResources& f : modules[i]->resources) {
      if (!f.entry) continue;
      entry = true;
      EXPECT_EQ(f.spill_store_bytes, 0) << f.name << "\n" << modules[i]->log;
      EXPECT_EQ(f.spill_load_bytes, 0) << f.name;
      EXPECT_EQ(f.stack_frame_bytes, 0) << f.name;
      const Occupancy real = occupancy(arch, specs[i].block_threads, f.registers,
                                       static_cast<size_t>(f.shared_bytes) + specs[i].dynamic_shared_bytes);
      EXPECT_GE(real.blocks_per_sm, specs[i].planned_blocks_per_sm) << f.registers << " registers";
    }
    EXPECT_TRUE(entry) << modules[i]->log;
  }
}

// Slice, concat, pad and take kernels in every policy, for sm_80 and sm_90; the stitched
// rotate-half and QKV-split kernels neither spill nor use local memory.
TEST(NvrtcCompile, MovementKernelsCompile) {
  std::vector<jit::CompileRequest> requests;
  std::vector<std::string> labels;
  for (const auto& m : testing::movement_graphs()) {
    for (DType t : {DType::kF32, DType::kBF16, DType::kF64}) {
      Graph g = m.build(48, 64, t);
      for (FusionPolicy policy : {FusionPolicy::kStitch, FusionPolicy::kLoop, FusionPolicy::kNone}) {
        for (int sm : {80, 90}) {
          jit::CompileRequest r;
          r.source = emit_module(g, plan(g, policy, sm));
          r.name = m.name + "_" + fusion_policy_name(policy) + ".cu";
          r.arch = sm;
          requests.push_back(r);
          labels.push_back(m.name + " " + dtype_name(t) + " " + fusion_policy_name(policy) + " sm_" +
                           std::to_string(sm));
        }
      }
    }
  }
  std::vector<jit::ModulePtr> modules;
  ASSERT_NO_THROW(modules = cache().compile_all(requests));
  ASSERT_EQ(modules.size(), requests.size());
  for (size_t i = 0; i < modules.size(); ++i) {
    SCOPED_TRACE(labels[i]);
    const bool stitched_pattern =
        labels[i].rfind("rotate_half", 0) == 0 || labels[i].rfind("qkv_split", 0) == 0;
    if (!stitched_pattern || labels[i].find(" stitch ") == std::string::npos) continue;
    for (const jit::FunctionResources& f : modules[i]->resources) {
      EXPECT_EQ(f.spill_store_bytes, 0) << f.name << "\n" << modules[i]->log;
      EXPECT_EQ(f.stack_frame_bytes, 0) << f.name;
    }
  }
}

// Column-tile kernels, split across blocks and not, with 16-byte and scalar lanes, a prologue,
// an element output and a bf16 epilogue, for sm_80 and sm_90: they compile without spills,
// within the occupancy the tiling sized its wave for.
TEST(NvrtcCompile, ColumnTileKernelsCompile) {
  struct Case {
    Dims dims;
    std::vector<int64_t> axes;
    DType dtype;
    OpKind op;
  };
  const std::vector<Case> cases = {
      {{8192, 1024}, {0}, DType::kF32, OpKind::kReduceSum},
      {{8192, 1024}, {0}, DType::kBF16, OpKind::kReduceMean},
      {{64, 4096, 64}, {1}, DType::kF32, OpKind::kReduceMax},
      {{33, 7, 5}, {1}, DType::kF16, OpKind::kReduceMin},
      {{4097, 3}, {0}, DType::kF64, OpKind::kReduceSum},
  };
  std::vector<jit::CompileRequest> requests;
  std::vector<std::string> labels;
  struct ColumnTileKernel {
    std::string name;
    int block_threads = 0;
    int element_loads = 0;
    int vector = 1;
    int element_stores = 0;
  };
  std::vector<ColumnTileKernel> column_tiles;
  for (const Case& c : cases) {
    Graph g;
    const ValueId x = build_input(g, "x", c.dtype, c.dims);
    const ValueId y = build_input(g, "y", c.dtype, c.dims);
    const ValueId e = build_binary(g, OpKind::kMul, x, y);
    const ValueId r = build_reduce(g, c.op, e, c.axes, false);
    build_output(g, "r", build_cast(g, build_binary(g, OpKind::kMul, r, r), DType::kBF16));
    build_output(g, "e", e);
    for (int sm : {80, 90}) {
      const FusionPlan p = plan(g, FusionPolicy::kStitch, sm);
      ColumnTileKernel column_tile;
      for (const PlannedKernel& k : p.kernels) {
        if (k.spec.schedule != ScheduleKind::kColumnTile) continue;
        column_tile = {k.name, k.spec.block_threads, element_shaped_loads(g, k.spec), k.spec.column.vector,
                       vector_element_stores(g, k.spec)};
      }
      ASSERT_GT(column_tile.block_threads, 0) << dump_plan(g, p);
      column_tiles.push_back(column_tile);
      jit::CompileRequest request;
      request.source = emit_module(g, p);
      request.name = "column_tile.cu";
      request.arch = sm;
      requests.push_back(request);
      labels.push_back(std::string(dtype_name(c.dtype)) + " sm_" + std::to_string(sm));
    }
  }
  std::vector<jit::ModulePtr> modules;
  ASSERT_NO_THROW(modules = cache().compile_all(requests));
  ASSERT_EQ(modules.size(), requests.size());
  for (size_t i = 0; i < modules.size(); ++i) {
    SCOPED_TRACE(labels[i]);
    for (const jit::FunctionResources& f : modules[i]->resources) {
      EXPECT_EQ(f.spill_store_bytes, 0) << f.name << "\n" << modules[i]->log;
      EXPECT_EQ(f.stack_frame_bytes, 0) << f.name;
      EXPECT_LE(f.registers, 128) << f.name << "\n" << modules[i]->log;
      // The tiling sized its wave at the estimated registers: the compiled ones allow it.
      const ColumnTileKernel& tile = column_tiles[i];
      if (f.name == tile.name) {
        const ArchParams arch = *arch_params(requests[i].arch);
        ColumnTileThread thread;
        thread.element_loads = tile.element_loads;
        thread.vector = tile.vector;
        thread.element_stores = tile.element_stores;
        EXPECT_GE(occupancy(arch, tile.block_threads, f.registers, 0).blocks_per_sm,
                  resident_blocks_per_sm(arch, tile.block_threads, thread))
            << f.registers << " registers";
      }
    }
  }
}

// Column tiles over several passes (softmax, normalization and centering down a
// non-innermost axis; their values kept in registers or read again, tiles split across a
// group of blocks or held by one) compile for sm_80 and sm_90 without spills, within the
// occupancy their grid was sized for: a group's blocks wait for each other, so every planned
// block must really fit.
TEST(NvrtcCompile, ColumnPassKernelsCompileWithinTheirOccupancy) {
  const std::vector<std::pair<Dims, std::vector<int64_t>>> shapes = {{{4096, 1024}, {0}},
                                                                     {{65536, 512}, {0}},
                                                                     {{64, 96, 32}, {1}},
                                                                     {{1, 20000, 12}, {1}},
                                                                     {{33, 1000}, {0}}};
  std::vector<jit::CompileRequest> requests;
  std::vector<std::string> labels;
  std::vector<KernelSpec> specs;
  std::set<std::pair<bool, RowCache>> seen;  // (group release, cache) of the kernels
  auto add = [&](const Graph& g, const PlannedKernel& k, int sm, const char* file, std::string label) {
    seen.insert({k.spec.column.releases_groups(), k.spec.cache});
    jit::CompileRequest r;
    r.source = std::string(kernel_prelude()) + emit_kernel(g, k);
    r.name = file;
    r.arch = sm;
    requests.push_back(r);
    specs.push_back(k.spec);
    labels.push_back(std::move(label));
  };
  for (const auto& [dims, axes] : shapes) {
    for (testing::ColumnPassGraph kind :
         {testing::ColumnPassGraph::kSoftmax, testing::ColumnPassGraph::kNormalize,
          testing::ColumnPassGraph::kCentered}) {
      for (DType t : {DType::kF32, DType::kBF16}) {
        const Graph g = testing::column_pass_graph(kind, t, dims, axes);
        for (int sm : {80, 90}) {
          const FusionPlan p = plan(g, FusionPolicy::kStitch, sm);
          for (const PlannedKernel& k : p.kernels) {
            if (k.spec.schedule != ScheduleKind::kColumnTile || k.spec.column.passes < 2) continue;
            add(g, k, sm, "column_passes.cu",
                std::string(testing::column_pass_graph_name(kind)) + " " + testing::dims_text(dims) + " " +
                    dtype_name(t) + " sm_" + std::to_string(sm));
          }
        }
      }
    }
  }
  // Softmax down the columns with its sum accumulated online beside the max (two passes):
  // the sum's lanes and rescale live beside the max's.
  for (const Dims& dims : {Dims{4096, 1024}, Dims{16384, 768}}) {
    for (DType t : {DType::kF32, DType::kBF16}) {
      const Graph g = testing::column_softmax(dims[0], dims[1], t);
      for (int sm : {80, 90}) {
        const FusionPlan p = plan(g, FusionPolicy::kStitch, sm);
        for (const PlannedKernel& k : p.kernels) {
          if (k.spec.schedule != ScheduleKind::kColumnTile || k.spec.online_sums.empty()) continue;
          add(g, k, sm, "column_online_sums.cu",
              "column_softmax " + testing::dims_text(dims) + " " + dtype_name(t) + " sm_" +
                  std::to_string(sm));
        }
      }
    }
  }
  EXPECT_TRUE(
      std::any_of(specs.begin(), specs.end(), [](const KernelSpec& s) { return !s.online_sums.empty(); }));
  EXPECT_TRUE(seen.count({true, RowCache::kRegisters}));
  EXPECT_TRUE(seen.count({true, RowCache::kShared}));
  EXPECT_TRUE(seen.count({false, RowCache::kRegisters}) || seen.count({false, RowCache::kRecompute}) ||
              seen.count({false, RowCache::kShared}));
  // A shared-memory cache that holds only some of a thread's rows: its others are read again
  // in every pass (the loop a kernel with nothing kept runs).
  EXPECT_TRUE(std::any_of(specs.begin(), specs.end(), [](const KernelSpec& s) {
    return s.cache == RowCache::kShared && s.column.shared_rows < s.column.rows_per_thread;
  }));
  const std::vector<jit::ModulePtr> modules = expect_within_planned_occupancy(requests, specs, labels);
  for (size_t i = 0; i < modules.size(); ++i) {
    for (const jit::FunctionResources& f : modules[i]->resources) {
      if (!f.entry) continue;
      const KernelSpec& s = specs[i];
      std::printf("[ column passes ] %s, %d threads, %s%s: %d registers, estimated %d\n", labels[i].c_str(),
                  s.block_threads,
                  s.cache == RowCache::kRegisters ? "registers"
                  : s.cache == RowCache::kShared  ? "shared memory"
                                                  : "re-read",
                  s.online_sums.empty() ? "" : ", online sum", f.registers, s.registers_estimate);
    }
  }
}

// GELU of bf16 values looks the reference's value up in a table each block copies into
// shared memory (plan/gelu_evaluation.hpp): elementwise and row kernels that use it compile
// with the table's shared memory and without spills, and a module of several such kernels
// (every operation its own kernel) defines the table once.
TEST(NvrtcCompile, Bf16GeluTableKernelsCompile) {
  Graph g;
  const ValueId x = build_input(g, "x", DType::kBF16, {64, 4096});
  const ValueId b = build_input(g, "b", DType::kBF16, {4096});
  const ValueId y =
      build_unary(g, OpKind::kGelu, build_binary(g, OpKind::kAdd, x, build_broadcast(g, b, {64, 4096})));
  const ValueId z = build_unary(g, OpKind::kGelu, build_binary(g, OpKind::kMul, y, x));
  build_output(g, "y", y);
  build_output(g, "s", build_reduce(g, OpKind::kReduceSum, z, {1}, true));
  std::vector<jit::CompileRequest> requests;
  std::vector<std::string> labels;
  std::vector<std::vector<std::string>> table_kernels;
  for (FusionPolicy policy : {FusionPolicy::kStitch, FusionPolicy::kNone}) {
    for (int sm : {80, 90}) {
      const FusionPlan p = plan(g, policy, sm);
      std::vector<std::string> names;
      for (const PlannedKernel& k : p.kernels)
        if (k.spec.gelu == GeluEvaluation::kBf16Table) names.push_back(k.name);
      EXPECT_GE(names.size(), policy == FusionPolicy::kNone ? 2u : 1u) << dump_plan(g, p);
      table_kernels.push_back(names);
      jit::CompileRequest r;
      r.source = emit_module(g, p);
      r.name = "gelu_table.cu";
      r.arch = sm;
      requests.push_back(r);
      labels.push_back(std::string(fusion_policy_name(policy)) + " sm_" + std::to_string(sm));
    }
  }
  std::vector<jit::ModulePtr> modules;
  ASSERT_NO_THROW(modules = cache().compile_all(requests));
  ASSERT_EQ(modules.size(), requests.size());
  for (size_t i = 0; i < modules.size(); ++i) {
    SCOPED_TRACE(labels[i]);
    for (const jit::FunctionResources& f : modules[i]->resources) {
      EXPECT_EQ(f.spill_store_bytes, 0) << f.name << "\n" << modules[i]->log;
      EXPECT_EQ(f.stack_frame_bytes, 0) << f.name;
      const auto& names = table_kernels[i];
      if (std::find(names.begin(), names.end(), f.name) != names.end()) {
        EXPECT_GE(f.shared_bytes, static_cast<int64_t>(bf16_gelu_table_bytes())) << f.name;
      }
    }
  }
}

}  // namespace

// The canonical graphs' kernels at `shapes` and `targets` (those of `schedule` only, when
// given) compile without spills, with the registers that the occupancy their grid was sized
// for allows (shared memory counted). Returns how many kernels were compiled.
// `sm_count`, when given, replaces the target device's SM count; `keep`, when given, selects
// the kernels compiled.
static size_t expect_planned_occupancy(const std::vector<std::pair<int64_t, int64_t>>& shapes,
                                       const std::vector<int>& targets, std::optional<ScheduleKind> schedule,
                                       std::optional<int> sm_count = std::nullopt,
                                       const std::function<bool(const KernelSpec&)>& keep = nullptr) {
  std::vector<jit::CompileRequest> requests;
  std::vector<std::string> labels;
  std::vector<KernelSpec> specs;
  for (const auto& c : testing::canonical_graphs()) {
    for (const auto& [rows, cols] : shapes) {
      for (DType t : {DType::kF32, DType::kBF16}) {
        for (int sm : targets) {
          Graph g = c.build(rows, cols, t);
          FusionOptions o;
          o.target_sm = sm;
          o.device = arch_params(sm);
          if (sm_count) o.device->sm_count = *sm_count;
          FusionPlan p = plan_fusion(g, o);
          for (const PlannedKernel& k : p.kernels) {
            if (schedule && k.spec.schedule != *schedule) continue;
            if (keep && !keep(k.spec)) continue;
            jit::CompileRequest r;
            r.source = std::string(kernel_prelude()) + emit_kernel(g, k);
            r.name = c.name + ".cu";
            r.arch = sm;
            requests.push_back(r);
            specs.push_back(k.spec);
            labels.push_back(c.name + " " + std::to_string(rows) + "x" + std::to_string(cols) + " " +
                             dtype_name(t) + " sm_" + std::to_string(sm) + " " + k.name);
          }
        }
      }
    }
  }
  std::vector<jit::ModulePtr> modules;
  EXPECT_NO_THROW(modules = cache().compile_all(requests));
  for (size_t i = 0; i < modules.size(); ++i) {
    SCOPED_TRACE(labels[i]);
    const ArchParams arch = *arch_params(requests[i].arch);
    EXPECT_FALSE(modules[i]->resources.empty()) << modules[i]->log;
    for (const jit::FunctionResources& f : modules[i]->resources) {
      if (!f.entry) continue;
      EXPECT_EQ(f.spill_store_bytes, 0) << f.name << "\n" << modules[i]->log;
      EXPECT_EQ(f.spill_load_bytes, 0) << f.name;
      const size_t shared = specs[i].cache == RowCache::kShared ? specs[i].shared_cache_bytes : 0;
      const Occupancy real = occupancy(arch, specs[i].block_threads, f.registers, shared);
      EXPECT_GE(real.blocks_per_sm, specs[i].planned_blocks_per_sm)
          << f.registers << " registers; the grid assumed " << specs[i].planned_blocks_per_sm
          << " blocks per SM";
    }
  }
  return requests.size();
}

// At the benchmark's large shapes (LLM and ViT rows), every stitched kernel compiles for
// sm_90 without spills, and with the registers that the occupancy its grid was sized for
// allows: the grid is one wave of the blocks that really fit.
TEST(NvrtcCompile, LargeShapesKeepThePlannedOccupancyWithoutSpills) {
  expect_planned_occupancy({{8192, 4096}, {16384, 1024}, {64 * 197, 768}, {64 * 197, 3072}}, {90},
                           std::nullopt);
}

// Rows split across groups of blocks (cluster groups on sm_90, cooperative grids on sm_80,
// groups as large as the device for one row of a million) compile for both targets without
// spills, within the occupancy their grid was sized for: a group's blocks wait for each
// other, so every planned block must really fit.
TEST(NvrtcCompile, SplitRowKernelsCompileWithinTheirOccupancy) {
  EXPECT_GT(expect_planned_occupancy({{1, 100000}, {2, 20001}, {64, 50257}, {1, 1 << 20}}, {80, 90},
                                     ScheduleKind::kSplitRow),
            20u);
}

// Rows read ahead (RowPrefetch::kNextRow: the next row's vectors held in registers across
// the current row) compile for both targets without spills, within the occupancy their grid
// was sized for. Planned for a device of two SMs, which reads ahead wherever it can.
TEST(NvrtcCompile, RowsReadAheadCompileWithinTheirOccupancy) {
  EXPECT_GT(expect_planned_occupancy({{301, 128}, {97, 768}, {1000, 1000}}, {80, 90}, std::nullopt, 2,
                                     [](const KernelSpec& s) { return s.prefetch == RowPrefetch::kNextRow; }),
            20u);
}

// Kernels whose rows wait at a grid barrier for their column totals (a Sinkhorn step) compile
// for both targets without spills, with every block of their grid resident: the crossing
// values kept in dynamic shared memory, or the rows read again (and summed again, a full
// Sinkhorn iteration). On the devices' own
// parameters at LLM shapes, and on a small device with slow launches, where the model joins
// them at smaller shapes too.
TEST(NvrtcCompile, GridBarrierKernelsCompileWithTheirGridResident) {
  std::vector<jit::CompileRequest> requests;
  std::vector<std::string> labels;
  std::vector<KernelSpec> specs;
  std::set<BarrierCrossing> seen;
  size_t rows_again = 0;  // kernels that sum their rows again after the barrier
  for (testing::SinkhornForm form :
       {testing::SinkhornForm::kScaled, testing::SinkhornForm::kInputScaled,
        testing::SinkhornForm::kRowsNormalizedAgain, testing::SinkhornForm::kInputRowsNormalizedAgain}) {
    for (const auto& [rows, cols] :
         std::vector<std::pair<int64_t, int64_t>>{{4096, 1024}, {8192, 768}, {300, 200}}) {
      for (DType t : {DType::kF32, DType::kBF16}) {
        const Graph g = testing::sinkhorn_step(rows, cols, t, form);
        for (int sm : {80, 90}) {
          for (bool small : {false, true}) {
            FusionOptions o;
            o.target_sm = sm;
            o.device = arch_params(sm);
            if (small) {
              o.device->sm_count = 4;
              o.device->launch_overhead_seconds = 10e-6;
            }
            const FusionPlan p = plan_fusion(g, o);
            for (const PlannedKernel& k : p.kernels) {
              if (k.spec.stages != RowStages::kRowsAfterTotals) continue;
              seen.insert(k.spec.crossing);
              rows_again += form == testing::SinkhornForm::kRowsNormalizedAgain ||
                                    form == testing::SinkhornForm::kInputRowsNormalizedAgain
                                ? 1
                                : 0;
              jit::CompileRequest r;
              r.source = std::string(kernel_prelude()) + emit_kernel(g, k);
              r.name = "sinkhorn.cu";
              r.arch = sm;
              requests.push_back(r);
              specs.push_back(k.spec);
              labels.push_back("sinkhorn " + std::to_string(rows) + "x" + std::to_string(cols) + " " +
                               dtype_name(t) + " sm_" + std::to_string(sm) +
                               (small ? " (small device)" : "") + ", crossing " +
                               barrier_crossing_name(k.spec.crossing));
            }
          }
        }
      }
    }
  }
  // Sinkhorn iterations: walks after two or three grid barriers, column totals after one.
  size_t three_walks = 0;
  struct Iterations {
    int count;
    testing::SinkhornOutputs outputs;
    testing::SinkhornDividend dividend;
  };
  for (const Iterations& it :
       {Iterations{2, testing::SinkhornOutputs::kMatrix, testing::SinkhornDividend::kIterate},
        Iterations{1, testing::SinkhornOutputs::kSumsOut, testing::SinkhornDividend::kIterate},
        Iterations{3, testing::SinkhornOutputs::kSumsOut, testing::SinkhornDividend::kInput}}) {
    for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{4096, 1024}, {300, 200}}) {
      for (DType t : {DType::kF32, DType::kBF16}) {
        const Graph g = testing::sinkhorn_iterations(rows, cols, t, it.count, it.outputs, it.dividend);
        for (int sm : {80, 90}) {
          FusionOptions o;
          o.target_sm = sm;
          o.device = arch_params(sm);
          if (rows < 1024) {
            o.device->sm_count = 4;
            o.device->launch_overhead_seconds = 10e-6;
          }
          for (const PlannedKernel& k : plan_fusion(g, o).kernels) {
            if (k.spec.stages != RowStages::kRowsAfterTotals) continue;
            three_walks += k.spec.row_walks >= 3 ? 1 : 0;
            jit::CompileRequest r;
            r.source = std::string(kernel_prelude()) + emit_kernel(g, k);
            r.name = "sinkhorn_iterations.cu";
            r.arch = sm;
            requests.push_back(r);
            specs.push_back(k.spec);
            labels.push_back(std::to_string(it.count) + " sinkhorn iteration(s) " + std::to_string(rows) +
                             "x" + std::to_string(cols) + " " + dtype_name(t) + " sm_" + std::to_string(sm) +
                             ", " + std::to_string(k.spec.row_walks) + " walks, crossing " +
                             barrier_crossing_name(k.spec.crossing));
          }
        }
      }
    }
  }
  EXPECT_GE(three_walks, 6u);
  // And the random graphs whose softmaxes are divided by 1 + their column sums (values of the
  // totals' shape computed after the barrier among them), on the small device.
  testing::RandomGraphOptions random;
  random.mode = testing::GraphMode::kFloat;
  random.column_sums_after_rows = true;
  size_t random_kernels = 0;
  testing::RandomGraphOptions sums_again = random;  // row sums after the barrier too
  sums_again.row_sums_after_column_sums = true;
  for (uint64_t draw = 1; draw <= 180; ++draw) {
    const uint64_t seed = draw > 120 ? draw - 120 : draw;
    const Graph g = testing::random_graph(seed, draw > 120 ? sums_again : random);
    FusionOptions o;
    o.device = arch_params(90);
    o.device->sm_count = 4;
    o.device->launch_overhead_seconds = 10e-6;
    for (const PlannedKernel& k : plan_fusion(g, o).kernels) {
      if (k.spec.stages != RowStages::kRowsAfterTotals) continue;
      // sin and cos keep their slow path's 28-byte table on the stack, a frame the check
      // below refuses whatever the kernel: those kernels are left to the differential suite.
      const bool trig = std::any_of(k.spec.members.begin(), k.spec.members.end(), [&](ValueId v) {
        return g.node(v).op == OpKind::kSin || g.node(v).op == OpKind::kCos;
      });
      if (trig) continue;
      ++random_kernels;
      jit::CompileRequest r;
      r.source = std::string(kernel_prelude()) + emit_kernel(g, k);
      r.name = "random.cu";
      r.arch = 90;
      requests.push_back(r);
      specs.push_back(k.spec);
      labels.push_back("random seed " + std::to_string(seed) + (draw > 120 ? " (row sums again) " : " ") +
                       k.name);
    }
  }
  EXPECT_GE(random_kernels, 8u);
  EXPECT_GE(rows_again, 4u);
  EXPECT_TRUE(seen.count(BarrierCrossing::kSharedRows));
  EXPECT_TRUE(seen.count(BarrierCrossing::kReadAgain));
  const std::vector<jit::ModulePtr> modules = expect_within_planned_occupancy(requests, specs, labels);
  for (size_t i = 0; i < modules.size(); ++i) {
    for (const jit::FunctionResources& f : modules[i]->resources) {
      if (f.entry)
        std::printf(
            "[ grid barrier ] %s, %d threads, grid %lld: %d registers, estimated %d, %zu bytes kept\n",
            labels[i].c_str(), specs[i].block_threads, static_cast<long long>(specs[i].grid_blocks),
            f.registers, specs[i].registers_estimate, specs[i].dynamic_shared_bytes);
    }
  }
}

// Rows cached in dynamic shared memory past 48 KiB compile for both targets, each within its
// architecture's per-block limit.
TEST(NvrtcCompile, DynamicSharedRowCachesCompile) {
  std::vector<jit::CompileRequest> requests;
  struct Case {
    int64_t cols;
    DType dtype;
    int sm;
  };
  // Enough rows to fill the device with a block each: no split.
  // (bf16 rows are cached in 16 bits: 32768 of them make 64 KiB.)
  for (Case c : {Case{32768, DType::kBF16, 90}, Case{16384, DType::kF32, 80}}) {
    Graph g = testing::log_softmax(8192, c.cols, c.dtype);
    FusionPlan p = plan(g, FusionPolicy::kStitch, c.sm);
    ASSERT_EQ(p.kernels.size(), 1u) << dump_plan(g, p);
    ASSERT_GT(p.kernels[0].spec.dynamic_shared_bytes, kStaticSharedLimit) << dump_plan(g, p);
    jit::CompileRequest r;
    r.source = std::string(kernel_prelude()) + emit_kernel(g, p.kernels[0]);
    EXPECT_NE(r.source.find("FST_DYNAMIC_SHARED("), std::string::npos);
    r.name = "log_softmax.cu";
    r.arch = c.sm;
    requests.push_back(r);
  }
  std::vector<jit::ModulePtr> modules;
  ASSERT_NO_THROW(modules = cache().compile_all(requests));
  for (const jit::ModulePtr& m : modules) {
    EXPECT_NE(m->ptx.find(".extern .shared"), std::string::npos) << m->ptx.substr(0, 2000);
    for (const jit::FunctionResources& f : m->resources) {
      EXPECT_EQ(f.spill_store_bytes, 0) << f.name;
      EXPECT_LE(f.shared_bytes, static_cast<int64_t>(kStaticSharedLimit)) << f.name;
    }
  }
}

}  // namespace fstitch
