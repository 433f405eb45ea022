// What the planner knows about one fused kernel: its member operations, their roles in the
// kernel's iteration space, the schedule and its cost. Produced by analyze_kernel().
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.hpp"
#include "plan/arch.hpp"
#include "plan/online_sums.hpp"
#include "plan/schedule_columns.hpp"
#include "plan/schedule_split_rows.hpp"

namespace fstitch {

enum class FusionPolicy : uint8_t { kStitch, kLoop, kNone };
const char* fusion_policy_name(FusionPolicy p);

// Where a value lives in the kernel's iteration space: the domain D viewed as rows x cols,
// cols being the reduced axes (cols == 1 when the kernel has no reduction).
enum class ValueRole : uint8_t {
  kElement,  // one value per domain element (row r, col c)
  kRow,      // one value per row: reduction results and what is computed from them
  kIndexed,  // another shape; computed on demand at whatever index a consumer needs
  // A reduction of an element value over the rows (every kept axis): one value per column,
  // which each block accumulates over its rows and the last block to finish combines; it
  // leaves the kernel (a norm backward's dgamma beside its dx), or feeds the kernel's stage
  // after its grid barrier (RowStages::kRowsAfterTotals).
  kColumnTotal,
  // A permute of an element value (its axes reordered, the same elements): each element is
  // written at its index in the permuted shape, in the pass that stores element values; it
  // only leaves the kernel (attention's heads moved after a softmax or a norm).
  kPermutedElement,
};
const char* value_role_name(ValueRole r);
// Whether a stored value of this role is written once per domain element, in the pass that
// stores element values.
inline bool stored_per_element(ValueRole r) {
  return r == ValueRole::kElement || r == ValueRole::kPermutedElement;
}

// How threads map onto rows.
enum class ScheduleKind : uint8_t {
  kElementwise,    // no reduction: grid-stride loop over the domain
  kThreadPerRow,   // one thread walks a row (column reductions, tiny rows)
  kSubWarpPerRow,  // 2..16 lanes per row, shuffles within the segment
  kWarpPerRow,     // 32 lanes per row, warp shuffles
  kBlockPerRow,    // a whole block per row, warp shuffles + shared memory
  kColumnTile,     // reduced axes not innermost: tiles along the kept inner axis, the reduced
                   // axis split across threads and blocks (plan/schedule_columns.hpp)
  kSplitRow,       // a group of blocks per row, each a slice of it, partials combined by every
                   // block of the group after a group barrier (plan/schedule_split_rows.hpp)
};
const char* schedule_kind_name(ScheduleKind s);

// The stages of a row kernel. kOne: one row loop. kRowsAfterTotals: the row loop, then a grid
// barrier once the column totals are complete, then the same rows again, which compute and
// store the element values that read the totals (a row softmax scaled by its column sums: a
// Sinkhorn step). The walk after a barrier may itself accumulate column totals of what it
// computes, completed at the next grid barrier before the next walk (Sinkhorn iterations one
// after the other): KernelSpec::row_walks walks, row_walks - 1 grid barriers. The grid is
// cooperative, and each block walks the same rows in every walk.
enum class RowStages : uint8_t { kOne, kRowsAfterTotals };
const char* row_stages_name(RowStages s);

// How the element values that the second row loop reads cross the grid barrier.
// kReadAgain: the second loop runs the rows' passes again from their inputs. kSharedRows:
// the first loop keeps them in shared memory, every row the block walks (the grid is one
// resident wave), and the second reads them there: the rows' inputs are read once.
enum class BarrierCrossing : uint8_t { kReadAgain, kSharedRows };
const char* barrier_crossing_name(BarrierCrossing c);

// How a value crosses from producer to consumer inside a kernel (AStitch's schemes).
enum class StitchScheme : uint8_t {
  kLocal,     // same thread, registers (or recomputed)
  kWarp,      // warp shuffle (a row reduction result shared by its warp)
  kRegional,  // shared memory + __syncthreads within a block
  kCluster,   // distributed shared memory + a cluster barrier (a split row on sm_90)
  kGlobal,    // global memory + a barrier of the blocks involved (a split row elsewhere)
};
const char* stitch_scheme_name(StitchScheme s);

// Where element values needed by several passes over a row are kept: registers, shared
// memory (block-per-row kernels, buffers reused across passes), or nowhere (recomputed,
// re-reading their inputs from global memory).
enum class RowCache : uint8_t { kRegisters, kShared, kRecompute };

// Whether a row kernel reads the next row of its grid stride ahead (plan/row_prefetch.hpp).
enum class RowPrefetch : uint8_t {
  // Each row's first pass issues its loads and waits for them: while the row is combined
  // across its threads, finished and stored, its threads have no load in flight.
  kNone,
  // The first pass takes its vectors from registers filled one row earlier, and reads the
  // vectors of the block's next row into them as soon as it is done, so those loads are in
  // flight while the current row is combined, finished and stored.
  kNextRow,
};

// How a row kernel's vectors line up with its rows (vector_width V > 1).
enum class RowVectorAlignment : uint8_t {
  // Every row (and every slice of a split row) starts at a multiple of V elements: cols is a
  // multiple of V, and thread `lane` owns the vectors lane, lane + T...
  kRowStart,
  // Rows start anywhere (cols is not a multiple of V, as GPT-2's 50257): a pass takes the
  // elements before the row's first V-element boundary of the flat index and after its last
  // whole vector one at a time, and the whole vectors between them, which line up with the
  // tensor's 16-byte boundaries. The shared row cache is shifted by the row's offset so its
  // vectors stay aligned; a register row cache gives the head and tail slots of their own
  // (shifted_row_slots in plan/row_vectors.hpp).
  kShifted,
};
const char* row_vector_alignment_name(RowVectorAlignment a);

// Which grids a kernel's code is correct for, so a launcher knows whether it may size the
// grid from the occupancy the compiled kernel really has (plan/launch_grid.hpp).
enum class GridPolicy : uint8_t {
  // Blocks loop over the work units by the grid stride (blockIdx.x, += gridDim.x) and nothing
  // the kernel writes depends on gridDim: any grid from grid_multiple up to the work units
  // (in multiples of grid_multiple) computes the same result.
  kStrided,
  // The code assumes the planned grid: launchers keep grid_blocks, or grow it up to
  // KernelSpec::grid_ceiling where the kernel has one (its scratch is placed for that grid).
  kFixed,
};
const char* grid_policy_name(GridPolicy p);

// How a kernel evaluates GELU (erf form) of bf16 values.
enum class GeluEvaluation : uint8_t {
  kPolynomial,  // fst_gelu_f32 (codegen/prelude.cpp), then rounded to bf16
  // The reference's value of every bf16 input from a table each block copies into shared
  // memory (codegen/gelu_lookup.hpp): fewer instructions, a few KiB of shared memory.
  kBf16Table,
};
const char* gelu_evaluation_name(GeluEvaluation e);

// Shared memory a block may declare statically; beyond it a kernel opts in to dynamic
// shared memory up to the device's per-block limit.
inline constexpr size_t kStaticSharedLimit = 48 * 1024;

struct KernelSpec {
  std::vector<ValueId> members;  // topological order
  Dims domain;
  std::vector<int64_t> reduced_axes;  // sorted; empty for elementwise kernels
  int64_t rows = 1;
  int64_t cols = 1;
  bool contiguous_rows = true;  // reduced axes are the innermost ones

  // Per member, parallel to `members`: role, purity (no reduction of this kernel upstream)
  // and level (reductions of this kernel upstream on the longest chain).
  std::vector<ValueRole> roles;
  std::vector<uint8_t> pures;
  std::vector<int> levels;
  int phases = 0;  // passes over each row that accumulate reductions
  // Per member, parallel to `members`: the row walk that computes it, 0 for the values
  // before the first grid barrier; a value that reads a column total of walk w (complete at
  // the barrier after walk w), or a value of walk w, is of walk w + 1 or later. A column
  // total's walk is the one that accumulates it. All 0 with RowStages::kOne.
  std::vector<int> walks;
  int row_walks = 1;  // the walks: 1 + the grid barriers between them
  RowStages stages = RowStages::kOne;
  // kRowsAfterTotals: how values cross the barriers; the members that a member of a later
  // walk reads (sorted); kSharedRows: the rows of each crossing value a block keeps (its rows
  // per block x the row loop's iterations), written in the walk that computes it, each row
  // `cols` values of its compute type, in dynamic shared memory (dynamic_shared_bytes).
  BarrierCrossing crossing = BarrierCrossing::kReadAgain;
  std::vector<ValueId> crossing_values;
  int64_t kept_rows = 0;
  // kSharedRows: the kept buffer of each crossing value (parallel to crossing_values): a value
  // of the walk that last reads another, or of a later one, may take its buffer; and each
  // buffer's bytes per element (4, or 8 for f64 and i64). The buffers lie one after the other.
  std::vector<int> crossing_buffers;
  std::vector<int> kept_buffer_slot_bytes;

  int index_of(ValueId v) const;  // position in members, -1 for a non-member
  bool is_member(ValueId v) const { return index_of(v) >= 0; }
  bool is_column_total(ValueId v) const;
  ValueRole role(ValueId v) const { return roles[static_cast<size_t>(index_of(v))]; }
  bool pure(ValueId v) const { return pures[static_cast<size_t>(index_of(v))] != 0; }
  int level(ValueId v) const { return levels[static_cast<size_t>(index_of(v))]; }
  int walk_of(ValueId v) const { return walks[static_cast<size_t>(index_of(v))]; }
  bool after_column_totals(ValueId v) const { return walk_of(v) > 0; }
  // Whether the totals of walk w are read by a later walk: the last block then writes them in
  // one more row of their partials and releases the grid.
  bool releases_grid_after(int walk) const { return walk + 1 < row_walks; }

  std::vector<ValueId> stored;   // members whose values leave the kernel
  std::vector<ValueId> loaded;   // values read from global memory (graph inputs, other kernels)
  std::vector<ValueId> inlined;  // inlined values the kernel computes on demand (see PlanInputs)

  ScheduleKind schedule = ScheduleKind::kElementwise;
  int threads_per_row = 1;
  int block_threads = 256;
  int64_t grid_blocks = 1;  // the planned grid: grid_for_occupancy at planned_blocks_per_sm
  // A fixed grid of column totals is sized from the register estimate, which is kept above
  // what ptxas uses: the compiled kernel may fit more blocks per SM. A launcher may then grow
  // the grid up to grid_ceiling, the grid the cost model scores best among the occupancies
  // registers could allow (0: the planned grid is the only one). The partials and counters
  // are placed for it (fixed_grid_capacity()).
  int64_t grid_ceiling = 0;
  int64_t fixed_grid_capacity() const { return std::max(grid_blocks, grid_ceiling); }
  // The grid's freedom: its policy, the work units a grid-stride loop hands out (work_units()
  // in plan/cost_model.hpp; more blocks than this idle), and the group size blocks come in
  // (a grid stays a multiple of it and at least one group).
  GridPolicy grid_policy = GridPolicy::kStrided;
  int64_t work_units = 1;
  int grid_multiple = 1;
  int64_t elems_per_thread = 1;  // per row pass (ceil(cols / threads_per_row)); rows may be long
  // Elements per vector access: a row kernel's thread moves its row as vectors of
  // vector_width consecutive elements (16 bytes of the widest element-shaped load or store,
  // halved until it divides cols and a thread holds no more than elems_per_thread elements of
  // a pass). Thread `lane` of a row owns the vectors lane, lane + T, lane + 2T... 1: one
  // element at a time, columns lane, lane + T... Elementwise kernels: V consecutive elements per 16-byte
  // access of the widest element-shaped value.
  int vector_width = 1;
  RowVectorAlignment row_alignment = RowVectorAlignment::kRowStart;
  // Occupancy the grid is sized for: blocks resident per SM, from the register estimate and
  // shared memory.
  int planned_blocks_per_sm = 1;
  int registers_estimate = 0;
  RowCache cache = RowCache::kRecompute;
  RowPrefetch prefetch = RowPrefetch::kNone;
  std::vector<ValueId> cached;             // element values kept across passes (sorted)
  std::vector<int> cache_buffer;           // kShared: buffer of each cached value (parallel)
  std::vector<DType> shared_buffer_types;  // kShared: each buffer's element dtype (row_cache.hpp)
  size_t shared_cache_bytes = 0;           // kShared: buffers plus reduction scratch
  // kShared past the static limit: the buffers, in dynamic shared memory (each at a
  // 16-byte boundary); 0 when they are static arrays.
  size_t dynamic_shared_bytes = 0;
  GeluEvaluation gelu = GeluEvaluation::kPolynomial;  // for its bf16 GELU members, if any
  // f32 GELU members every use of which is a cast to bf16 or f16 in this kernel (none is
  // stored): evaluated to the precision the rounding needs (fst_gelu_f32_for_16bit in
  // codegen/prelude.cpp). Sorted.
  std::vector<ValueId> gelu_to_16bit;
  // kColumnTile: sums of exp(a - max) accumulated beside their max, in its pass (levels
  // count them so); empty for every other schedule.
  std::vector<OnlineSum> online_sums;
  // kColumnTile: the tiling, and for each reduction member (in member order) the byte offset
  // of its partials within the kernel's partials scratch (empty when column.split == 1).
  ColumnTiling column;
  std::vector<uint64_t> column_partial_offsets;
  // kSplitRow: the row's slices, groups and scratch.
  RowSplit split;
  // Column totals (ValueRole::kColumnTotal), sorted; each block keeps their running sums
  // per row slot and column in shared memory (column_total_shared_bytes) and writes them to
  // its partials. Blocks come in groups of column_total_group: the last block of a group to
  // arrive sums the group's partials in block order into the group's partial, and the last
  // group to finish sums those in group order, so no block reads more than a group's worth
  // and the bits do not depend on arrival. Per total, at column_total_offsets within the
  // kernel's partials scratch: grid x cols block partials, then groups x cols group
  // partials; the counters are one per group and one for the groups. With
  // RowStages::kRowsAfterTotals the last block of each walk but the last also writes the
  // totals in one more row of partials and releases the grid on one more counter: each walk
  // has counters of its own (column_total_counter_stride() apart).
  std::vector<ValueId> column_totals;
  size_t column_total_shared_bytes = 0;
  // The partials are placed for fixed_grid_capacity(): column_total_partial_bytes is their
  // workspace; column_total_traffic_bytes what the planned grid writes of them (and its last
  // blocks read back).
  std::vector<uint64_t> column_total_offsets;
  uint64_t column_total_partial_bytes = 0;
  uint64_t column_total_traffic_bytes = 0;
  int64_t column_total_group = 1;
  int64_t column_total_groups = 1;
  // The groups of the largest grid a launch may take; one walk's counters: one per group, one
  // for the groups, and the release.
  int64_t column_total_capacity_groups() const {
    const int64_t group = std::max<int64_t>(1, column_total_group);
    return (fixed_grid_capacity() + group - 1) / group;
  }
  int64_t column_total_counter_stride() const { return column_total_capacity_groups() + 2; }

  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  double est_seconds = 0;
};

// What the planner knows about the whole graph.
struct PlanInputs {
  const Graph* graph = nullptr;
  FusionPolicy policy = FusionPolicy::kStitch;
  ArchParams arch;
  int register_cap = 64;
  size_t shared_budget = 227 * 1024;        // capped by the device's per-block limit
  std::vector<std::vector<ValueId>> users;  // live users of each value
  std::vector<bool> live;
  std::vector<bool> graph_output;
  std::vector<uint32_t> output_count;  // how many graph outputs name each value
  // Values recomputed inside every kernel that uses them instead of being materialized:
  // constants, iota, arithmetic on those, and broadcasts of inputs and of such values. They
  // cost no memory traffic beyond reading the (smaller) inputs they come from.
  std::vector<bool> inlined;
  // Views that need no kernel (plan/views.hpp): for such a reshape or order-keeping permute,
  // the value whose buffer it reads; -1 for every other value.
  std::vector<ValueId> view_root;
  std::vector<uint32_t> view_output_count;  // per root: how many outputs are free views of it
  // Bounds the operations of one candidate of the fusion search (plan/explore.hpp), whose
  // cost grows with candidate size; kernels themselves grow past it when candidates merge, up
  // to what the resource checks of analyze_kernel allow.
  size_t max_candidate_ops = 64;
  // The code_instructions (plan/cost_model.hpp) one kernel may hold. NVRTC's compile time
  // grows about quadratically in them: kernels of this size compiled in 3 to 4 s on the
  // benchmark machine, and a larger one splits, its boundaries naming the resource.
  double code_budget = 16384;
};

// Whether the kernel keeps values in a register cache across its passes.
inline bool keeps_values_in_registers(const KernelSpec& s) {
  return s.cache == RowCache::kRegisters && !s.cached.empty();
}

PlanInputs make_plan_inputs(const Graph& graph, FusionPolicy policy, const ArchParams& arch);

// Values that never become kernel members: inputs, inlined values, opaque operations, views
// that read their root's buffer.
bool is_fusable(const PlanInputs& in, ValueId id);

// Why a member set cannot be one kernel: its structure (domains, roles, policy), or a
// resource of the device (parameter space, registers, shared memory, passes).
enum class RejectionKind { kStructure, kResource };
struct Rejection {
  RejectionKind kind = RejectionKind::kStructure;
  std::string reason;
};

// Whether a kernel launches on its own or as one part of a packed launch (plan/packing.hpp),
// which takes only schedules that need no launch of their own kind, no scratch of their own
// and no dynamic shared memory; or as one part of a packed cooperative launch of split rows,
// which takes only split rows whose groups meet across the grid, each group a share of it
// (its row kept in the launch's dynamic shared memory if need be).
enum class LaunchSharing : uint8_t { kOwnLaunch, kPackedPart, kPackedSplitRowPart };

// What a kernel's schedule must allow beyond computing its members.
struct ScheduleConstraint {
  LaunchSharing sharing = LaunchSharing::kOwnLaunch;
  int block_threads = 0;  // the block size the kernel must use; 0: any
  // kPackedSplitRowPart: the most blocks a row's group may have (its share of the launch's
  // wave); that group size is among the ones scored.
  int max_split_blocks = 0;
};

// Analyzes a candidate member set (any order) into *out (whose contents are replaced, and
// unspecified after a false return). Returns false with a reason when the set cannot be one
// kernel under the policy (and the constraint: the best schedule that meets it).
// `spec` as launched with `grid` blocks: its traffic (a column total's partials grow with the
// grid) and grid; for the estimate of a launch at another grid than planned.
KernelSpec launched_at_grid(const Graph& graph, const KernelSpec& spec, int64_t grid);

bool analyze_kernel(const PlanInputs& in, std::vector<ValueId> members, KernelSpec* out, Rejection* why_not,
                    const ScheduleConstraint& constraint = {});

// For a planned kernel with column totals: the grid a launch may grow to where the compiled
// kernel fits more blocks than the register estimate allows (KernelSpec::grid_ceiling), with
// the partials placed for it. Only the plan's final kernels need it, not the candidates the
// search scores.
void choose_grid_ceiling(const PlanInputs& in, KernelSpec& spec);

// total + bytes x times: global-memory traffic, summed over many values and passes, so
// checked; throws Error(kOutOfMemory) past 2^64 bytes.
uint64_t add_traffic(uint64_t total, uint64_t bytes, uint64_t times = 1);

// Estimated time of a kernel (plan/cost_model.hpp: launch, memory at the bandwidth its bytes
// in flight can draw, compute, barriers, with the grid's waves and tail).
double estimate_seconds(const PlanInputs& in, const KernelSpec& spec);

}  // namespace fstitch
