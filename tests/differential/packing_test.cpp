// Packed launches run: independent normalizations of several shapes and multi-tensor
// optimizer steps, each kernel on its own block range of one launch, on the host backend in
// both thread orders (or on a GPU), matching the reference evaluator.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/packed_graphs.hpp"
#include "differential/harness.hpp"
#include "ir/builder.hpp"
#include "plan/plan.hpp"

namespace fstitch::testing {
namespace {

struct Built {
  std::string label;
  std::shared_ptr<const Graph> graph;
};

TEST(Differential, PackedLaunchesMatchTheReference) {
  std::vector<Built> built;
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kF16}) {
    const std::string t = dtype_name(dtype);
    built.push_back({"layer norms 16x768 64x768 8x768 3x768 " + t,
                     std::make_shared<Graph>(
                         independent_layer_norms({{16, 768}, {64, 768}, {8, 768}, {3, 768}}, dtype))});
    // Rows of several widths: the parts differ in schedule, vector width and passes.
    built.push_back({"layer norms 5x256 7x1000 2x4096 33x96 " + t,
                     std::make_shared<Graph>(independent_layer_norms(
                         {{5, 256}, {7, 1000}, {2, 4096}, {33, 96}, {1, 64}}, dtype))});
    // In 16 bits the pack schedules the first part again for the second's blocks.
    if (dtype != DType::kF32) {
      built.push_back({"layer norms 8x1024 32x16384 " + t,
                       std::make_shared<Graph>(independent_layer_norms({{8, 1024}, {32, 16384}}, dtype))});
    }
    // Each tensor one row reduced whole, then scaled by its trust ratio: parts whose shared
    // arrays (row caches, block reductions) overlay one buffer.
    built.push_back({"lamb 7 tensors " + t,
                     std::make_shared<Graph>(lamb_step({768, 3072, 768, 100, 4096, 768, 1}, dtype))});
    // Tensors reduced by groups of blocks in clusters (sm_90): one launch of their clusters.
    built.push_back({"lamb in clusters 12288 12288 768 12288 " + t,
                     std::make_shared<Graph>(lamb_step({12288, 12288, 768, 12288}, dtype))});
    built.push_back({"adamw 12 tensors " + t,
                     std::make_shared<Graph>(
                         adamw_step({768, 3, 768 * 4, 1000, 4096, 17, 768, 50, 2048, 1, 333, 4097}, dtype))});
  }
  // On an A100 (no clusters) the same tensors' groups meet across a cooperative grid: one
  // cooperative launch, each part with partials and counters of its own.
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    built.push_back({std::string("lamb across the grid on sm_80 12288 12288 768 12288 ") + dtype_name(dtype),
                     std::make_shared<Graph>(lamb_step({12288, 12288, 768, 12288}, dtype))});
    // On a device of 8 SMs each tensor alone is one group of a whole wave: joined, their rows
    // are split again over shares of the wave, each slice kept in dynamic shared memory.
    built.push_back({std::string("lamb split again on 8 SMs 16384 16384 16384 ") + dtype_name(dtype),
                     std::make_shared<Graph>(lamb_step({16384, 16384, 16384}, dtype))});
  }
  // 300 scalings, 600 pointers: one launch where 32 KiB of parameters are taken.
  Graph scalings;
  for (int i = 0; i < 300; ++i) {
    const ValueId x = build_input(scalings, "x" + std::to_string(i), DType::kF32, {1 + 7 * i});
    build_output(scalings, "y" + std::to_string(i),
                 build_binary(scalings, OpKind::kMul, x, build_constant_f64(scalings, DType::kF32, 2.0)));
  }
  built.push_back({"300 scalings in 32 KiB of parameters", std::make_shared<Graph>(std::move(scalings))});
  std::vector<DiffCase> cases;
  for (const Built& b : built) {
    DiffCase c;
    c.label = b.label;
    c.reproduce = "--gtest_filter=Differential.PackedLaunchesMatchTheReference";
    c.graph = b.graph;
    c.data_seed = cases.size() + 1;
    if (b.label.find("on sm_80") != std::string::npos) c.device = *arch_params(80);
    if (b.label.find("on 8 SMs") != std::string::npos) {
      c.device = *arch_params(80);
      c.device->sm_count = 8;
    }
    if (b.label.rfind("300 scalings", 0) == 0) {
      DeviceFacts facts;
      facts.kernel_param_bytes = kLargeKernelParamBytes;
      c.device = refine_with_device(*arch_params(90), facts);
    }
    cases.push_back(c);
  }
  const std::vector<CaseResult> results = run_cases(cases, harness_options_from_env());
  size_t packed = 0, packed_clusters = 0, packed_cooperative = 0, split_again = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_TRUE(results[i].ok) << cases[i].label << "\n" << results[i].report;
    FusionOptions options;
    options.device = cases[i].device;
    if (options.device) options.device->sm = options.target_sm;  // as the harness plans it
    const FusionPlan p = plan_fusion(*cases[i].graph, options);
    for (const PlannedKernel& k : p.kernels) {
      packed += k.packed() ? 1 : 0;
      packed_clusters += k.packed() && k.launch == LaunchKind::kCluster ? 1 : 0;
      packed_cooperative += k.packed() && k.launch == LaunchKind::kCooperative ? 1 : 0;
      // Parts split again: slices kept in the launch's dynamic shared memory.
      split_again +=
          k.packed() && k.launch == LaunchKind::kCooperative && k.spec.dynamic_shared_bytes > 0 ? 1 : 0;
    }
    EXPECT_LT(p.kernels.size(), fused_kernels(p).size()) << cases[i].label << "\n"
                                                         << dump_plan(*cases[i].graph, p);
  }
  EXPECT_GE(packed, cases.size());
  EXPECT_GE(packed_clusters, 3u) << "a launch of split rows in clusters per dtype";
  EXPECT_GE(packed_cooperative, 4u) << "cooperative launches of split rows, two per dtype";
  EXPECT_GE(split_again, 2u) << "a cooperative launch of rows split again per dtype";
}

}  // namespace
}  // namespace fstitch::testing
