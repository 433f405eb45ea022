// The differential harness: plan and emit many graphs, compile all their kernels as one
// host module, run each plan in forward and reverse thread order on the host backend, and
// compare every output with the reference evaluator on the same random inputs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.hpp"
#include "plan/plan.hpp"
#include "runtime/host/host_module.hpp"
#include "runtime/kernel_args.hpp"

namespace fstitch::testing {

struct DiffCase {
  std::string label;                   // names the case in reports ("seed 17", "layer_norm 64x256 f16")
  std::string reproduce;               // how to rerun just this case
  std::shared_ptr<const Graph> graph;  // cases of one graph share its reference outputs
  FusionPolicy policy = FusionPolicy::kStitch;
  uint64_t data_seed = 0;  // seeds the input values
  // Plans for this device model rather than the target's default (a device of few SMs makes
  // a few rows enough to fill it); the code still runs anywhere.
  std::optional<ArchParams> device;
  // The planner's budgets, where a case steers it off its register or shared row cache.
  std::optional<int> register_cap;
  std::optional<size_t> shared_budget;
  // The grid each kernel launches with on the host backend (the planned grid when empty): a
  // launch the CUDA launcher would size otherwise, such as a fixed grid grown to its ceiling.
  std::function<int64_t(const PlannedKernel&)> host_grid;
};

struct CaseResult {
  bool ok = true;
  std::string report;      // on failure: what failed, the graph text, the plan dump
  double worst_ratio = 0;  // largest (error / limit) over the inexact outputs
  size_t kernels = 0;
  size_t widened_outputs = 0;  // ill-conditioned outputs judged against their noise floor
};

// Where the plans run: the host backend (in both thread orders), or a GPU through the CUDA
// backend's runtime.
enum class DiffBackend : uint8_t { kHost, kCuda };

// kCuda when FSTITCH_BACKEND=cuda (how the GPU check runs the suite), else kHost.
DiffBackend diff_backend_from_env();

struct HarnessOptions {
  DiffBackend backend = DiffBackend::kHost;
  size_t batch_size = 60;  // cases per compiled module
  // Where compiled modules are cached; empty: compile without a disk cache.
  std::string cache_dir;
};

// The options every suite runs with: the backend of FSTITCH_BACKEND and the suite's module
// cache (FSTITCH_DIFF_CACHE_DIR, set by the build).
HarnessOptions harness_options_from_env();

// Runs every case; results are in the order of `cases`.
std::vector<CaseResult> run_cases(const std::vector<DiffCase>& cases, const HarnessOptions& options);

// Fills `buffer` (count elements of dtype) with the random inputs the harness uses: floats
// in [-2, 2], integers over their dtype's range (i32 mostly within +-1000), bools both ways.
void fill_random_input(void* buffer, int64_t count, DType dtype, uint64_t seed);

// Launches planned kernel `k` of `module` once on the host at its planned grid, its blocks
// resident as set_residency has them, threads in `order`: arguments packed from `inputs`,
// `outputs` and `workspace` (whose zeroed range is cleared first). Returns the arguments, so
// a caller can look at the kernel's scratch afterwards.
runtime::KernelArguments launch_planned_on_host(const host::HostModule& module, const PlannedKernel& k,
                                                const void* const* inputs, void* const* outputs,
                                                unsigned char* workspace, host::ThreadOrder order);

// Parses "a-b" or "a" (FSTITCH_DIFF_SEEDS) into an inclusive range; nullopt when malformed.
std::optional<std::pair<uint64_t, uint64_t>> parse_seed_range(const std::string& text);

}  // namespace fstitch::testing
