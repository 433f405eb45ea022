// The fusion plan: kernels in launch order with their parameters, workspace buffers for the
// values that cross kernels, estimates, and why each boundary between kernels exists.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plan/kernel_spec.hpp"

namespace fstitch {

// = fst_param_kind. kConstant: a tensor constant, in memory the fusion owns (plan/constants.hpp).
enum class ParamKind : uint8_t { kInput = 1, kOutput = 2, kWorkspace = 3, kConstant = 4 };

// Whether a kernel parameter may point to the same memory as another parameter of the
// kernel: an output updating an input in place (plan/in_place.hpp). The generated code
// declares only the others __restrict__.
enum class ParamAliasing : uint8_t { kRestrict, kMayAlias };

// A parameter that holds no graph value but scratch the kernel keeps in the workspace: a
// split column reduction's partials, and its per-tile arrival counters, which must be zero
// when the kernel starts (PlannedKernel::zeroed_workspace).
enum class ParamScratch : uint8_t { kNone, kSplitPartials, kSplitCounters };

struct KernelParam {
  ParamKind kind;
  size_t index;   // input index, output index, workspace byte offset or constant index
  ValueId value;  // the graph value behind the pointer; -1 for scratch (kind kWorkspace)
  bool written;   // the kernel stores to it
  ParamAliasing aliasing = ParamAliasing::kRestrict;
  // For a written parameter: the member whose values it receives, when that is not `value`
  // itself (an output that is a free view of the member, plan/views.hpp); -1 otherwise.
  ValueId source = -1;
  ValueId stored_value() const { return source >= 0 ? source : value; }
  // Scratch (value -1): what it holds and its size in bytes.
  ParamScratch scratch = ParamScratch::kNone;
  size_t scratch_bytes = 0;
  bool is_scratch() const { return scratch != ParamScratch::kNone; }
};

// The bytes behind a parameter: its value's, or the scratch size.
uint64_t param_bytes(const Graph& graph, const KernelParam& param);

// A byte range of the workspace.
struct WorkspaceRange {
  size_t offset = 0;
  size_t bytes = 0;  // 0: none
};

// How a kernel is launched. A kernel whose threads meet at a grid-wide barrier (values
// stitched through global memory, StitchScheme::kGlobal) needs every block resident at
// once: a cooperative launch, which the runtimes check against the device's occupancy.
// A kernel whose blocks wait in groups (a split row) needs each group resident together: a
// thread-block cluster of the group's size, or else a cooperative launch.
enum class LaunchKind : uint8_t { kRegular, kCooperative, kCluster };
const char* launch_kind_name(LaunchKind kind);

// One kernel of a packed launch (plan/packing.hpp): its spec and parameters, and the range
// of the launch's blocks that run it.
struct KernelPart {
  KernelSpec spec;
  std::vector<size_t> params;  // the part's parameters in its own order, as indices into the launch's
  int64_t first_block = 0;     // blocks [first_block, first_block + spec.grid_blocks) run this part
};

struct PlannedKernel {
  std::string name;
  // For a packed launch: the launch's geometry (block_threads, grid_blocks = the parts' blocks,
  // GridPolicy::kFixed, the occupancy and registers of its widest part), traffic and estimate,
  // and the union of its parts' members, loads and stores; domain, schedule and roles are
  // the parts'.
  KernelSpec spec;
  // Independent kernels packed into this launch by block ranges, in block order; empty for a
  // launch of one kernel (spec).
  std::vector<KernelPart> parts;
  bool packed() const { return !parts.empty(); }
  LaunchKind launch = LaunchKind::kRegular;
  std::vector<KernelParam> params;  // loads first (in spec.loaded order), then stores, then scratch
                                    // (a packed launch: the parts' parameters, each once, in part order)
  // Workspace bytes that must be zero when the kernel starts (a split column reduction's
  // counters; the kernel leaves them zero again). Runs and fst_kernel_launch clear them
  // before the launch, on the launch's stream.
  WorkspaceRange zeroed_workspace;
};

// Where a value lives in global memory while a plan runs.
struct ValueLocation {
  ParamKind kind;
  size_t index;  // input index, output index, workspace byte offset or constant index
};

// One step of a run: launch a kernel, or run an opaque operation (the caller's).
enum class StepKind : uint8_t { kKernel = 1, kOpaque = 2 };  // = fst_step_kind

struct PlanStep {
  StepKind kind;
  size_t index;  // into FusionPlan::kernels or FusionPlan::opaque_ops
};

// Where an opaque operation finds its operands and writes its result.
struct OpaqueStep {
  ValueId op;
  std::vector<ValueLocation> operands;  // in operand order
  ValueLocation result;
};

// Why two kernels that a value crosses between were not fused: one cause each.
enum class BoundaryCause {
  kPolicy,      // policy none: one kernel per operation
  kCannotFuse,  // the two cannot form one kernel (shapes, reductions, roles: the reason says which)
  kResource,    // one kernel would need more of a device resource than it has
  kCycle,       // a path from the producer to the consumer passes through another step
  kCost,        // the cost model estimates the two kernels faster than the joined one
  kSearch,      // the joined kernel is estimated faster, but the planner's search did not form it
};
const char* boundary_cause_name(BoundaryCause cause);

struct Boundary {
  ValueId value;        // crosses from producer to consumer kernel through global memory
  int producer_kernel;  // -1: a graph input
  int consumer_kernel;
  BoundaryCause cause = BoundaryCause::kCannotFuse;
  std::string reason;  // the cause in words, with the numbers behind it
};

struct FusionOptions {
  FusionPolicy policy = FusionPolicy::kStitch;
  int target_sm = 90;
  // The device the plan is for (a named model, or what a CUDA context's device reports):
  // its parameters replace the target's defaults when it runs code of target_sm.
  std::optional<ArchParams> device;
  size_t shared_budget = 227 * 1024;  // per block; capped by the device's limit
  int register_cap = 64;
};

struct FusionPlan {
  FusionOptions options;
  ArchParams arch;
  std::vector<PlannedKernel> kernels;
  std::vector<Boundary> boundaries;
  // Why independent kernels that could have shared a launch did not (plan/packing.hpp), one
  // line each; packed launches report their own numbers in the dump.
  std::vector<std::string> packing_notes;
  // The tensor constants the plan reads, in graph order (plan/constants.hpp): parameters of
  // kind kConstant index this list.
  std::vector<ValueId> constants;
  std::vector<ValueId> opaque_ops;                  // operations left to the caller, run between kernels
  std::map<ValueId, size_t> opaque_result_offsets;  // workspace byte offset of each opaque result
  std::vector<OpaqueStep> opaque_steps;             // parallel to opaque_ops
  // Every kernel and opaque operation once, in an order that respects every dependency:
  // kernels in launch order, each opaque operation as soon as what it reads exists.
  std::vector<PlanStep> steps;
  // Free views (plan/views.hpp): each reads the buffer of its root, which is in memory.
  std::map<ValueId, ValueId> view_roots;
  size_t workspace_bytes = 0;
  uint64_t planned_bytes = 0;
  uint64_t lower_bound_bytes = 0;
  double est_seconds = 0;
  double planning_seconds = 0;
  // Per graph output: the graph inputs whose buffer it may take exactly (an in-place
  // update, plan/in_place.hpp), ascending. Runs refuse every other overlap.
  std::vector<std::vector<size_t>> in_place_inputs;
};

// Every kernel of the plan in launch order: a launch's own spec, or each part of a packed
// launch.
std::vector<const KernelSpec*> fused_kernels(const FusionPlan& plan);

// The value whose buffer holds `v`: its root when it is a free view, else `v`.
ValueId storage_of(const FusionPlan& plan, ValueId v);

// Plans a verified graph. Throws Error (kUnsupported) for an unknown target architecture.
FusionPlan plan_fusion(const Graph& graph, const FusionOptions& options);

// The human-readable plan dump (fst_fusion_dump, FSTITCH_DUMP=plan).
std::string dump_plan(const Graph& graph, const FusionPlan& plan);

}  // namespace fstitch
