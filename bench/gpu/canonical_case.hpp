// One canonical graph at one shape on the GPU: fuse (policy stitch, for the device), run
// once on random inputs with NaN-poisoned outputs and check against the reference
// evaluator, then time fst_fusion_run with events and the L2 flushed before each run.
#pragma once

#include <cstdint>
#include <string>

#include <vector>

#include "common/shaped_graph.hpp"
#include "fstitch.h"
#include "gpu_runtime.hpp"
#include "ir/dtype.hpp"
#include "ir/shape.hpp"

namespace fstitch::bench_gpu {

// The graphs the benchmark builds at shapes of their own: testing::reduction_graphs(), then
// testing::optimizer_graphs().
const std::vector<testing::ShapedGraph>& shaped_graphs();

struct CaseSpec {
  std::string graph;  // a name from testing::canonical_graphs() or shaped_graphs()
  int64_t rows = 0;   // a shaped graph: the elements of dims over its last entry
  int64_t cols = 0;   // a shaped graph: dims' last entry
  DType dtype = DType::kF32;
  Dims dims;  // a shaped graph's dims; empty for a canonical graph (rows x cols)
};

// A case of a shaped graph at `dims`.
CaseSpec shaped_case(const std::string& graph, const Dims& dims, DType dtype);

// "layer_norm 8192x4096 bf16", "middle_axis_sum 64x4096x64 f32"
std::string case_label(const CaseSpec& spec);

// Whether `name` is a graph run_case() can build.
bool is_known_graph(const std::string& name);

struct CaseOptions {
  bool time = true;  // false: run and check only (the sanitizer mode)
  int warmup = 5;
  int runs = 50;
  int64_t check_rows = 64;  // rows compared with the reference; all rows when the graph has fewer
  // A graph whose rows mix (a shaped graph) is checked whole while its largest tensor has at
  // most this many elements.
  int64_t max_whole_check_elements = int64_t{1} << 22;
  uint64_t seed = 1;
};

struct CaseCheck {
  bool ran = false;
  bool ok = false;
  double worst_relative_l2 = 0;  // over the outputs
  double limit = 0;              // the strictest limit among the outputs
  int64_t rows_checked = 0;
  int64_t nonfinite = 0;  // non-finite elements anywhere in the outputs (inputs make none)
  std::string note;       // why the check did not run or failed
};

struct CaseResult {
  CaseSpec spec;
  bool ok = false;
  std::string error;  // set when a step threw
  size_t kernels = 0;
  uint64_t planned_bytes = 0;
  uint64_t lower_bound_bytes = 0;
  size_t workspace_bytes = 0;
  double fuse_ms = 0;
  double first_run_ms = 0;  // the first run: NVRTC compile (or cache read), module load, launch
  CaseCheck check;
  Timing timing;
};

// Never throws: failures land in CaseResult::error.
CaseResult run_case(GpuRuntime& runtime, fst_context* context, const CaseSpec& spec,
                    const CaseOptions& options);

}  // namespace fstitch::bench_gpu
