// Can a set of operations be one kernel, and with which schedule? The kernel iterates over a
// domain D split into rows (kept axes) and cols (reduced axes); every member is an element
// value, a row value, or an index-pure value computed on demand.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

#include "plan/constants.hpp"
#include "plan/cost_model.hpp"
#include "plan/gelu_evaluation.hpp"
#include "plan/kernel_spec.hpp"
#include "plan/op_class.hpp"
#include "plan/row_cache.hpp"
#include "plan/row_exchange.hpp"
#include "plan/row_prefetch.hpp"
#include "plan/row_vectors.hpp"
#include "plan/schedule_columns.hpp"
#include "plan/scratch.hpp"
#include "plan/views.hpp"
#include "support/checked_math.hpp"

namespace fstitch {
namespace {

bool is_elementwise(OpKind op) {
  OpFamily f = op_family(op);
  return f == OpFamily::kUnary || f == OpFamily::kBinary || f == OpFamily::kSelect || f == OpFamily::kCast;
}

// Schedules whose threads of a row (lanes of a sub-warp, a warp or a block) walk the whole row.
bool walks_whole_rows(ScheduleKind s) {
  return s == ScheduleKind::kSubWarpPerRow || s == ScheduleKind::kWarpPerRow ||
         s == ScheduleKind::kBlockPerRow;
}

// Dims of D with the reduced axes removed.
Dims kept_dims(const Dims& domain, const std::vector<int64_t>& axes) {
  Dims out;
  for (size_t i = 0; i < domain.size(); ++i) {
    if (!std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i))) out.push_back(domain[i]);
  }
  return out;
}

// `dims`, aligned at the right with D, is 1 (or absent) on every reduced axis and equal to D
// elsewhere: broadcasting it to D repeats each row value along the row.
bool is_aligned_row_shape(const Dims& dims, const Dims& domain, const std::vector<int64_t>& axes) {
  if (dims.size() > domain.size()) return false;
  const size_t offset = domain.size() - dims.size();
  for (size_t i = 0; i < domain.size(); ++i) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i));
    const int64_t d = i < offset ? 1 : dims[i - offset];
    if (reduced ? d != 1 : d != domain[i]) return false;
  }
  return true;
}

// `dims`, aligned at the right with D, equals D on every reduced axis and is 1 (or absent)
// elsewhere: broadcasting it to D repeats each column value down the rows (a column total).
bool is_aligned_column_shape(const Dims& dims, const Dims& domain, const std::vector<int64_t>& axes) {
  if (dims.size() > domain.size()) return false;
  const size_t offset = domain.size() - dims.size();
  for (size_t i = 0; i < domain.size(); ++i) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i));
    const int64_t d = i < offset ? 1 : dims[i - offset];
    if (reduced ? d != domain[i] : d != 1) return false;
  }
  return true;
}

// Which levels a mapping runs its passes by: the analyzed ones, or those with each online
// sum accumulated in its max's pass (plan/online_sums.hpp; the column tile only).
enum class PassLevels : uint8_t { kAsAnalyzed, kOnlineSums };

// Which of the values several passes need a register cache keeps: all of them, or only
// those read from global memory (the rest recomputed from them in each pass).
enum class KeptValues : uint8_t { kAll, kLoadsOnly };

// No row cache and no column tiling: what every schedule candidate starts from.
void reset_cache_and_tiling(KernelSpec& s) {
  s.cache = RowCache::kRecompute;
  s.cached.clear();
  s.cache_buffer.clear();
  s.shared_buffer_types.clear();
  s.shared_cache_bytes = 0;
  s.dynamic_shared_bytes = 0;
  s.column = ColumnTiling{};
  s.column_partial_offsets.clear();
  s.split = RowSplit{};
  s.column_total_shared_bytes = 0;
  s.column_total_offsets.clear();
  s.column_total_partial_bytes = s.column_total_traffic_bytes = 0;
  s.column_total_group = s.column_total_groups = 1;
  s.grid_ceiling = 0;
  s.grid_multiple = 1;
  s.grid_policy = GridPolicy::kStrided;  // column totals fix the grid they place their partials for
  s.row_alignment = RowVectorAlignment::kRowStart;
  s.gelu = GeluEvaluation::kPolynomial;
  s.gelu_to_16bit.clear();
  s.prefetch = RowPrefetch::kNone;
  s.crossing = BarrierCrossing::kReadAgain;
  s.kept_rows = 0;
}

// Back to a default KernelSpec, keeping the capacity of its vectors.
void reset(KernelSpec& s) {
  s.members.clear();
  s.domain.clear();
  s.reduced_axes.clear();
  s.rows = s.cols = 1;
  s.contiguous_rows = true;
  s.roles.clear();
  s.pures.clear();
  s.levels.clear();
  s.phases = 0;
  s.walks.clear();
  s.row_walks = 1;
  s.stages = RowStages::kOne;
  s.crossing_values.clear();
  s.crossing_buffers.clear();
  s.kept_buffer_slot_bytes.clear();
  s.online_sums.clear();
  s.stored.clear();
  s.loaded.clear();
  s.inlined.clear();
  s.column_totals.clear();
  s.schedule = ScheduleKind::kElementwise;
  s.threads_per_row = 1;
  s.block_threads = 256;
  s.grid_blocks = 1;
  s.grid_policy = GridPolicy::kStrided;
  s.work_units = 1;
  s.grid_multiple = 1;
  s.elems_per_thread = 1;
  s.vector_width = 1;
  s.planned_blocks_per_sm = 1;
  s.registers_estimate = 0;
  reset_cache_and_tiling(s);
  s.bytes_read = s.bytes_written = 0;
  s.est_seconds = 0;
}

int popcount64(uint64_t x) {
  int n = 0;
  for (; x; x &= x - 1) ++n;
  return n;
}

}  // namespace

// Shared-memory buffers for the row cache: values sorted by their first pass take the first
// buffer of their element dtype (plan/row_cache.hpp: a loaded value's storage dtype, a
// computed value's compute type) that is free (its last user pass lies before), else a new
// one. Fills spec.cached / cache_buffer / shared_buffer_types when all fit the budget
// (static shared memory: at most 48 KiB, less the block-reduction scratch).
bool assign_shared_cache(const PlanInputs& in, KernelSpec& spec, const std::vector<ValueId>& cached,
                         const std::vector<uint64_t>& masks) {
  const Graph& g = *in.graph;
  auto first_pass = [](uint64_t m) {
    int p = 0;
    while (!((m >> p) & 1)) ++p;
    return p;
  };
  auto last_pass = [](uint64_t m) {
    int p = 63;
    while (!((m >> p) & 1)) --p;
    return p;
  };
  std::vector<size_t> order(cached.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_pair(first_pass(masks[a]), cached[a]) < std::make_pair(first_pass(masks[b]), cached[b]);
  });
  std::vector<DType> types;     // element dtype of each buffer
  std::vector<int> free_after;  // last pass that reads each buffer's current value
  std::vector<int> buffer_of(cached.size());
  for (size_t i : order) {
    const DType t = shared_cache_dtype(g, spec, cached[i]);
    int chosen = -1;
    for (size_t b = 0; b < types.size() && chosen < 0; ++b) {
      if (types[b] == t && free_after[b] < first_pass(masks[i])) chosen = static_cast<int>(b);
    }
    if (chosen < 0) {
      chosen = static_cast<int>(types.size());
      types.push_back(t);
      free_after.push_back(-1);
    }
    free_after[static_cast<size_t>(chosen)] = last_pass(masks[i]);
    buffer_of[i] = chosen;
  }
  // Up to the device's per-block limit: past the 48 KiB a block may declare statically, the
  // row buffers move to dynamic shared memory (the kernel opts in to the larger size).
  const size_t budget = std::min<size_t>(
      in.shared_budget, static_cast<size_t>(std::max(0, in.arch.max_shared_bytes_per_block)));
  // The row exchanges' buffers (plan/row_exchange.hpp); a split row's two partial slots per
  // reduction when its cluster keeps them in shared memory.
  size_t reductions = 0;
  for (ValueId v : spec.members) reductions += op_family(g.node(v).op) == OpFamily::kReduce ? 1 : 0;
  const bool cluster_partials =
      spec.schedule == ScheduleKind::kSplitRow && spec.split.residency == GroupResidency::kCluster;
  const size_t scratch =
      row_exchange_scratch_bytes(g, spec) + (cluster_partials ? 2 * sizeof(double) * reductions : 0);
  size_t bytes = scratch;
  for (DType t : types) {
    // Checked: a row may be far longer than any shared memory (up to 2^62 elements). Each
    // buffer starts at a 16-byte boundary.
    // A block of a split row keeps its slice only.
    const std::optional<size_t> row_bytes = shared_cache_row_bytes(shared_cache_cols(spec), t);
    const std::optional<size_t> total = row_bytes ? checked_add(bytes, *row_bytes) : std::nullopt;
    if (!total || *total > budget) return false;
    bytes = *total;
  }
  spec.dynamic_shared_bytes = bytes > kStaticSharedLimit ? bytes - scratch : 0;
  std::vector<size_t> by_value(cached.size());
  for (size_t i = 0; i < by_value.size(); ++i) by_value[i] = i;
  std::sort(by_value.begin(), by_value.end(), [&](size_t a, size_t b) { return cached[a] < cached[b]; });
  spec.cached.clear();
  spec.cache_buffer.clear();
  for (size_t i : by_value) {
    spec.cached.push_back(cached[i]);
    spec.cache_buffer.push_back(buffer_of[i]);
  }
  spec.shared_buffer_types = types;
  spec.shared_cache_bytes = bytes;
  spec.cache = RowCache::kShared;
  return true;
}

bool KernelSpec::is_column_total(ValueId v) const {
  return std::binary_search(column_totals.begin(), column_totals.end(), v);
}

int KernelSpec::index_of(ValueId v) const {
  auto it = std::lower_bound(members.begin(), members.end(), v);
  return it != members.end() && *it == v ? static_cast<int>(it - members.begin()) : -1;
}

const char* fusion_policy_name(FusionPolicy p) {
  switch (p) {
    case FusionPolicy::kStitch:
      return "stitch";
    case FusionPolicy::kLoop:
      return "loop";
    case FusionPolicy::kNone:
      return "none";
  }
  return "?";
}

const char* value_role_name(ValueRole r) {
  switch (r) {
    case ValueRole::kElement:
      return "element";
    case ValueRole::kRow:
      return "row";
    case ValueRole::kIndexed:
      return "indexed";
    case ValueRole::kColumnTotal:
      return "column total";
    case ValueRole::kPermutedElement:
      return "permuted element";
  }
  return "?";
}

const char* row_stages_name(RowStages s) {
  switch (s) {
    case RowStages::kOne:
      return "one row loop";
    case RowStages::kRowsAfterTotals:
      return "rows, grid barrier, rows again";
  }
  return "?";
}

const char* barrier_crossing_name(BarrierCrossing c) {
  switch (c) {
    case BarrierCrossing::kReadAgain:
      return "read again";
    case BarrierCrossing::kSharedRows:
      return "kept in shared memory";
  }
  return "?";
}

const char* schedule_kind_name(ScheduleKind s) {
  switch (s) {
    case ScheduleKind::kElementwise:
      return "elementwise";
    case ScheduleKind::kThreadPerRow:
      return "thread-per-row";
    case ScheduleKind::kSubWarpPerRow:
      return "subwarp-per-row";
    case ScheduleKind::kWarpPerRow:
      return "warp-per-row";
    case ScheduleKind::kBlockPerRow:
      return "block-per-row";
    case ScheduleKind::kColumnTile:
      return "column-tile";
    case ScheduleKind::kSplitRow:
      return "split-row";
  }
  return "?";
}

const char* stitch_scheme_name(StitchScheme s) {
  switch (s) {
    case StitchScheme::kLocal:
      return "local";
    case StitchScheme::kWarp:
      return "warp";
    case StitchScheme::kRegional:
      return "regional";
    case StitchScheme::kCluster:
      return "cluster";
    case StitchScheme::kGlobal:
      return "global";
  }
  return "?";
}

PlanInputs make_plan_inputs(const Graph& graph, FusionPolicy policy, const ArchParams& arch) {
  PlanInputs in;
  in.graph = &graph;
  in.policy = policy;
  in.arch = arch;
  const size_t n = graph.size();
  in.users.assign(n, {});
  in.live.assign(n, false);
  in.graph_output.assign(n, false);
  in.output_count.assign(n, 0);
  for (const GraphOutput& out : graph.outputs()) {
    in.graph_output[static_cast<size_t>(out.value)] = true;
    ++in.output_count[static_cast<size_t>(out.value)];
    in.live[static_cast<size_t>(out.value)] = true;
  }
  for (size_t i = n; i-- > 0;) {
    if (!in.live[i]) continue;
    for (ValueId op : graph.node(static_cast<ValueId>(i)).operands) {
      in.live[static_cast<size_t>(op)] = true;
      auto& u = in.users[static_cast<size_t>(op)];
      if (u.empty() || u.back() != static_cast<ValueId>(i)) u.push_back(static_cast<ValueId>(i));
    }
  }
  for (auto& u : in.users) std::sort(u.begin(), u.end());
  // What an opaque operation reads must exist in memory when the caller runs it, so such a
  // value is never inlined (recomputed inside kernels) but stored by a kernel, as an output is.
  std::vector<bool> read_by_opaque(n, false);
  for (size_t i = 0; i < n; ++i) {
    for (ValueId u : in.users[i]) {
      if (graph.node(u).op == OpKind::kOpaque) read_by_opaque[i] = true;
    }
  }
  in.inlined.assign(n, false);
  for (size_t i = 0; i < n; ++i) {
    if (read_by_opaque[i]) continue;
    if (policy == FusionPolicy::kNone) {
      // One kernel per operation: only constants are folded into their users.
      in.inlined[i] = graph.node(static_cast<ValueId>(i)).op == OpKind::kConstant && !in.graph_output[i];
      continue;
    }
    const Node& node = graph.node(static_cast<ValueId>(i));
    if (in.graph_output[i]) continue;  // an output is stored by a kernel of its own
    bool sources_only = true;
    for (ValueId op : node.operands) {
      const bool source = in_memory_before_run(graph, op) || in.inlined[static_cast<size_t>(op)];
      sources_only = sources_only && source;
    }
    switch (op_family(node.op)) {
      case OpFamily::kConstant:
      case OpFamily::kIota:
        in.inlined[i] = true;
        break;
      case OpFamily::kBroadcast:
        in.inlined[i] = sources_only;
        break;
      case OpFamily::kUnary:
      case OpFamily::kBinary:
      case OpFamily::kSelect: {
        // Arithmetic on constants only: free to recompute anywhere.
        bool constants_only = true;
        for (ValueId op : node.operands)
          constants_only = constants_only && in.inlined[static_cast<size_t>(op)];
        in.inlined[i] = constants_only;
        break;
      }
      default:
        break;
    }
  }
  in.view_root = find_view_roots(graph, in);
  in.view_output_count.assign(n, 0);
  for (const GraphOutput& out : graph.outputs()) {
    const ValueId root = in.view_root[static_cast<size_t>(out.value)];
    if (root >= 0) ++in.view_output_count[static_cast<size_t>(root)];
  }
  return in;
}

bool is_fusable(const PlanInputs& in, ValueId id) {
  if (!in.live[static_cast<size_t>(id)]) return false;
  if (in.inlined[static_cast<size_t>(id)]) return false;
  if (!in.view_root.empty() && in.view_root[static_cast<size_t>(id)] >= 0) return false;
  OpKind op = in.graph->node(id).op;
  return op != OpKind::kInput && op != OpKind::kConstant && op != OpKind::kTensor && op != OpKind::kOpaque;
}

namespace {

// Column totals keep one running sum per row slot of the block and column in shared memory:
// they must fit beside what the schedule already declares, under the static limit.
bool fit_column_totals(const Graph& g, KernelSpec& spec) {
  if (spec.cache == RowCache::kShared) return false;  // the row cache takes the shared memory
  if (spec.cols > static_cast<int64_t>(kStaticSharedLimit)) return false;  // (and the product below fits)
  const int64_t slots = spec.block_threads / std::max(1, spec.threads_per_row);
  // Room beside what else the block declares statically: its row reductions' scratch, and a
  // bf16 GELU table should the kernel take one.
  uint64_t declared = bf16_gelu_table_bytes();
  declared += row_exchange_scratch_bytes(g, spec);
  if (declared >= kStaticSharedLimit) return false;
  uint64_t bytes = 0;
  for (ValueId v : spec.column_totals) {
    const Node& n = g.node(v);
    bytes +=
        accumulator_bytes(n.op, n.dtype) * static_cast<uint64_t>(slots) * static_cast<uint64_t>(spec.cols);
    if (bytes > kStaticSharedLimit - declared) return false;
  }
  spec.column_total_shared_bytes = static_cast<size_t>(bytes);
  return true;
}

// The bytes of total v's partials for `grid` blocks in groups of spec.column_total_group: one
// accumulator per block and column, then one per group and column (and where a later walk
// reads the totals one more row, the totals), 16-byte aligned.
uint64_t one_total_partials_for_grid(const Graph& g, const KernelSpec& spec, ValueId v, int64_t grid) {
  const int64_t group = std::max<int64_t>(1, spec.column_total_group);
  const int64_t groups = (grid + group - 1) / group;
  const int64_t totals_rows = spec.releases_grid_after(spec.walk_of(v)) ? 1 : 0;
  const Node& n = g.node(v);
  const uint64_t region = accumulator_bytes(n.op, n.dtype) *
                          static_cast<uint64_t>(grid + groups + totals_rows) *
                          static_cast<uint64_t>(spec.cols);
  return (region + 15) / 16 * 16;
}

uint64_t column_total_partials_for_grid(const Graph& g, const KernelSpec& spec, int64_t grid) {
  uint64_t bytes = 0;
  for (ValueId v : spec.column_totals) bytes += one_total_partials_for_grid(g, spec, v, grid);
  return bytes;
}

// The rows of totals a later walk reads, which every block of the grid reads after its
// barrier.
uint64_t totals_rows_bytes(const Graph& g, const KernelSpec& spec) {
  uint64_t bytes = 0;
  for (ValueId v : spec.column_totals) {
    if (spec.releases_grid_after(spec.walk_of(v)))
      bytes += accumulator_bytes(g.node(v).op, g.node(v).dtype) * static_cast<uint64_t>(spec.cols);
  }
  return bytes;
}

// Each total's partials, placed for the largest grid a launch may take (fixed_grid_capacity).
// Groups of about the square root of the planned grid: each of the two combining steps then
// reads about as few partials as the other.
void place_column_total_partials(const Graph& g, KernelSpec& spec) {
  const int64_t grid = std::max<int64_t>(1, spec.grid_blocks);
  int64_t group = 1;
  while (group * group < grid) ++group;
  spec.column_total_group = group;
  spec.column_total_groups = (grid + group - 1) / group;
  spec.column_total_offsets.clear();
  const int64_t capacity = spec.fixed_grid_capacity();
  uint64_t offset = 0;
  for (ValueId v : spec.column_totals) {
    spec.column_total_offsets.push_back(offset);
    offset += one_total_partials_for_grid(g, spec, v, capacity);
  }
  spec.column_total_partial_bytes = offset;
  spec.column_total_traffic_bytes = column_total_partials_for_grid(g, spec, grid);
  // The partials are placed for this grid, and each block's sums depend on the rows it
  // took: a launch keeps the grid it chose for every run, so results are the same in each.
  spec.grid_policy = GridPolicy::kFixed;
}

// What the partials (and the later walks' reads of the totals) add to a kernel's traffic at
// its planned grid: each block writes its partials once and the combining blocks read them.
void add_column_total_traffic(const Graph& g, KernelSpec& spec) {
  spec.bytes_read = add_traffic(spec.bytes_read, spec.column_total_traffic_bytes);
  spec.bytes_read =
      add_traffic(spec.bytes_read, totals_rows_bytes(g, spec), static_cast<uint64_t>(spec.grid_blocks));
  spec.bytes_written = add_traffic(spec.bytes_written, spec.column_total_traffic_bytes);
}

}  // namespace

KernelSpec launched_at_grid(const Graph& g, const KernelSpec& spec, int64_t grid) {
  KernelSpec s = spec;
  if (spec.column_totals.empty()) {
    s.grid_blocks = grid;
    return s;
  }
  // Without the partials' and totals' traffic of the planned grid, then with the grid's own.
  s.bytes_read -= spec.column_total_traffic_bytes;
  s.bytes_written -= spec.column_total_traffic_bytes;
  s.bytes_read -= totals_rows_bytes(g, spec) * static_cast<uint64_t>(spec.grid_blocks);
  s.grid_blocks = std::max<int64_t>(1, grid);
  s.column_total_groups =
      (s.grid_blocks + spec.column_total_group - 1) / std::max<int64_t>(1, spec.column_total_group);
  s.column_total_traffic_bytes = column_total_partials_for_grid(g, s, s.grid_blocks);
  add_column_total_traffic(g, s);
  return s;
}

// The register estimate sizes a column-total kernel's fixed grid, and it is kept above what
// ptxas uses (the norm backwards and Sinkhorn kernels compile to 22-73 registers fewer). Where the cost model
// scores a larger grid faster at an occupancy that registers alone would forbid, the grid
// may grow to it at launch when the compiled kernel fits those blocks (launch_grid): the
// best such grid is the ceiling, and the partials are placed for it.
void choose_grid_ceiling(const PlanInputs& in, KernelSpec& spec) {
  if (spec.column_totals.empty()) return;
  const Graph& g = *in.graph;
  const int64_t sms = std::max(1, in.arch.sm_count);
  const size_t shared = kernel_shared_bytes(g, spec);
  const int estimated = occupancy(in.arch, spec.block_threads, spec.registers_estimate, shared).blocks_per_sm;
  const int most = occupancy(in.arch, spec.block_threads, 0, shared).blocks_per_sm;
  const int64_t units = std::max<int64_t>(1, spec.work_units);
  if (estimated <= 0 || most <= estimated || spec.grid_blocks >= units) return;
  double best_seconds = estimate_kernel_at_occupancy(in.arch, g, spec, estimated).total_seconds;
  int64_t best_grid = 0;
  for (int per_sm = estimated + 1; per_sm <= most; ++per_sm) {
    const int64_t grid = std::min(int64_t{per_sm} * sms, units);
    if (grid <= std::max(spec.grid_blocks, best_grid)) continue;
    const double seconds =
        estimate_kernel_at_occupancy(in.arch, g, launched_at_grid(g, spec, grid), per_sm).total_seconds;
    if (seconds < best_seconds * (1 - kEstimateResolution)) {
      best_seconds = seconds;
      best_grid = grid;
    }
  }
  if (best_grid <= spec.grid_blocks) return;
  spec.grid_ceiling = best_grid;
  place_column_total_partials(g, spec);
}

namespace {

void add_reads_of_walk(const Graph& g, KernelSpec& spec, int walk);

// The kept rows' buffers: a crossing value is written in the last element loop of its walk and
// read until the last walk that reads it; a value of that walk or a later one, of the same
// slot size, may take its buffer (in that walk every read of an element comes before the write
// of the same element: codegen computes what a walk keeps before it writes any of it).
void assign_kept_buffers(const Graph& g, KernelSpec& spec) {
  spec.crossing_buffers.clear();
  spec.kept_buffer_slot_bytes.clear();
  std::vector<int> free_from;  // per buffer: the walk from which it may be written again
  std::vector<size_t> order(spec.crossing_values.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return spec.walk_of(spec.crossing_values[a]) < spec.walk_of(spec.crossing_values[b]);
  });
  spec.crossing_buffers.assign(spec.crossing_values.size(), -1);
  for (size_t i : order) {
    const ValueId v = spec.crossing_values[i];
    const DType t = g.node(v).dtype;  // kept as its compute type: double, long long, else 4 bytes
    const int bytes = t == DType::kF64 || t == DType::kI64 ? 8 : 4;
    int last_read = spec.walk_of(v);
    for (size_t m = 0; m < spec.members.size(); ++m) {
      const auto& operands = g.node(spec.members[m]).operands;
      if (std::find(operands.begin(), operands.end(), v) != operands.end())
        last_read = std::max(last_read, spec.walks[m]);
    }
    int buffer = -1;
    for (size_t b = 0; b < free_from.size() && buffer < 0; ++b) {
      if (free_from[b] <= spec.walk_of(v) && spec.kept_buffer_slot_bytes[b] == bytes)
        buffer = static_cast<int>(b);
    }
    if (buffer < 0) {
      buffer = static_cast<int>(free_from.size());
      free_from.push_back(0);
      spec.kept_buffer_slot_bytes.push_back(bytes);
    }
    free_from[static_cast<size_t>(buffer)] = last_read;
    spec.crossing_buffers[i] = buffer;
  }
}

// RowStages::kRowsAfterTotals with BarrierCrossing::kSharedRows: the rows of its crossing
// values each block keeps for the grid it has, in dynamic shared memory; false when they do
// not fit a block, or the blocks that hold them cannot all be resident. Sets the planned
// occupancy from what they take.
bool keep_crossing_rows(const PlanInputs& in, KernelSpec& spec) {
  const Graph& g = *in.graph;
  if (spec.crossing_values.empty()) return false;  // nothing crosses: reading again is free
  for (ValueId v : spec.crossing_values) {
    if (spec.role(v) != ValueRole::kElement) return false;  // a row value has no element slot
  }
  assign_kept_buffers(g, spec);
  uint64_t slot_bytes = 0;
  for (int bytes : spec.kept_buffer_slot_bytes) slot_bytes += static_cast<uint64_t>(bytes);
  const int64_t rows_per_block = std::max(1, spec.block_threads / std::max(1, spec.threads_per_row));
  const int64_t grid = std::max<int64_t>(1, spec.grid_blocks);
  const int64_t per_loop = grid * rows_per_block;  // both at most a few million
  const int64_t iterations = spec.rows / per_loop + (spec.rows % per_loop != 0 ? 1 : 0);
  spec.kept_rows = iterations * rows_per_block;
  const std::optional<uint64_t> bytes =
      checked_mul(static_cast<uint64_t>(spec.kept_rows) * slot_bytes, static_cast<uint64_t>(spec.cols));
  const uint64_t room = static_cast<uint64_t>(std::max(0, in.arch.max_shared_bytes_per_block));
  if (!bytes || *bytes + kernel_shared_bytes(g, spec) > room) return false;
  spec.dynamic_shared_bytes = static_cast<size_t>(*bytes);
  const Occupancy occ =
      occupancy(in.arch, spec.block_threads, spec.registers_estimate, kernel_shared_bytes(g, spec));
  spec.planned_blocks_per_sm = std::max(1, occ.blocks_per_sm);
  if (occ.blocks_per_sm == 0) return false;
  // What the values after a barrier read from global memory themselves (z = y / s + x reads
  // x there, directly or through inlined values) is read again, in each walk that reads it.
  for (int walk = 1; walk < spec.row_walks; ++walk) add_reads_of_walk(g, spec, walk);
  return true;
}

// The loaded values the members of `walk` read (directly or through inlined values), added
// to the kernel's reads once more.
void add_reads_of_walk(const Graph& g, KernelSpec& spec, int walk) {
  std::vector<ValueId> pending, seen;
  for (size_t i = 0; i < spec.members.size(); ++i) {
    if (spec.walks[i] != walk) continue;
    for (ValueId op : g.node(spec.members[i]).operands) {
      if (!spec.is_member(op)) pending.push_back(op);
    }
  }
  while (!pending.empty()) {
    const ValueId w = pending.back();
    pending.pop_back();
    if (std::find(seen.begin(), seen.end(), w) != seen.end()) continue;
    seen.push_back(w);
    if (std::binary_search(spec.inlined.begin(), spec.inlined.end(), w)) {
      for (ValueId op : g.node(w).operands) pending.push_back(op);
    } else if (std::find(spec.loaded.begin(), spec.loaded.end(), w) != spec.loaded.end()) {
      spec.bytes_read = add_traffic(spec.bytes_read, value_bytes(g, w));
    }
  }
}

}  // namespace

bool analyze_kernel(const PlanInputs& in, std::vector<ValueId> members, KernelSpec* out, Rejection* why_not,
                    const ScheduleConstraint& constraint) {
  const Graph& g = *in.graph;
  auto reject = [&](const std::string& why, RejectionKind kind = RejectionKind::kStructure) {
    if (why_not) *why_not = {kind, why};
    return false;
  };
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  if (members.empty()) return reject("no operations");
  const MemberIndex index(g.size(), members);
  auto member = [&](ValueId v) { return index(v) >= 0; };
  for (ValueId v : members) {
    if (!is_fusable(in, v)) return reject("%" + std::to_string(v) + " cannot be a kernel member");
  }

  // Filled in place: a caller that analyzes many candidates into one KernelSpec reuses its
  // vectors' storage instead of allocating them again.
  KernelSpec& spec = *out;
  reset(spec);
  spec.members = members;

  // Stored values: used after the kernel or graph outputs.
  for (ValueId v : members) {
    bool leaves = in.graph_output[static_cast<size_t>(v)];
    for (ValueId u : in.users[static_cast<size_t>(v)]) leaves = leaves || !member(u);
    if (leaves) spec.stored.push_back(v);
  }

  // The domain: the reductions' operand shape and axes, or the stored values' shape. Where
  // reductions over the same shape disagree, the row reductions are those whose axes end at
  // the last axis (rows are then contiguous), and one over exactly the other axes is a
  // column total, accumulated across the rows.
  bool has_reduction = false;
  {
    ValueId row_reduction = -1;
    for (ValueId v : members) {
      const Node& n = g.node(v);
      if (op_family(n.op) != OpFamily::kReduce) continue;
      const int64_t last = static_cast<int64_t>(g.node(n.operands[0]).dims.size()) - 1;
      if (row_reduction < 0 || (n.axes.back() == last && g.node(row_reduction).axes.back() != last))
        row_reduction = v;
    }
    if (row_reduction >= 0) {
      spec.domain = g.node(g.node(row_reduction).operands[0]).dims;
      spec.reduced_axes = g.node(row_reduction).axes;
      has_reduction = true;
      const int64_t rank = static_cast<int64_t>(spec.domain.size());
      std::vector<int64_t> kept_axes;
      for (int64_t a = 0; a < rank; ++a) {
        if (!std::binary_search(spec.reduced_axes.begin(), spec.reduced_axes.end(), a))
          kept_axes.push_back(a);
      }
      const bool rows_contiguous = spec.reduced_axes.back() == rank - 1;
      for (ValueId v : members) {
        const Node& n = g.node(v);
        if (op_family(n.op) != OpFamily::kReduce) continue;
        const bool same_domain = g.node(n.operands[0]).dims == spec.domain;
        if (same_domain && n.axes == spec.reduced_axes) continue;
        if (!same_domain || n.axes != kept_axes || !rows_contiguous || kept_axes.empty())
          return reject("reductions over different domains or axes");
        spec.column_totals.push_back(v);
      }
    }
  }
  if (!has_reduction) {
    if (spec.stored.empty()) return reject("nothing leaves the kernel");
    // Without a reduction the domain is flat: every value of its element count is read and
    // written at the flat index, whatever its dims (q, k and v of one split, say).
    spec.domain = g.node(spec.stored[0]).dims;
    for (ValueId v : spec.stored) {
      if (element_count(g.node(v).dims) != element_count(spec.domain))
        return reject("stored values of different sizes");
    }
  }
  const Dims row_dims = kept_dims(spec.domain, spec.reduced_axes);
  spec.rows = element_count(row_dims);
  spec.cols = element_count(spec.domain) / spec.rows;
  spec.contiguous_rows = true;
  for (size_t i = 0; i < spec.reduced_axes.size(); ++i) {
    if (spec.reduced_axes[spec.reduced_axes.size() - 1 - i] !=
        static_cast<int64_t>(spec.domain.size() - 1 - i)) {
      spec.contiguous_rows = false;
    }
  }

  // Whether a member's elements reach the kernel's domain through a broadcast or a take
  // (which may read one element for many): then each is computed many times. Slices,
  // pads, concats, permutes and reshapes compute each element at most once per use.
  auto replicated_in_kernel = [&](ValueId from) {
    std::vector<ValueId> stack = {from}, seen = {from};  // members: at most a few dozen
    while (!stack.empty()) {
      const ValueId w = stack.back();
      stack.pop_back();
      for (ValueId u : in.users[static_cast<size_t>(w)]) {
        if (!member(u)) continue;
        const Node& user = g.node(u);
        if (user.op == OpKind::kBroadcast || (user.op == OpKind::kTake && user.operands[0] == w)) return true;
        if (std::find(seen.begin(), seen.end(), u) != seen.end()) continue;
        seen.push_back(u);
        stack.push_back(u);
      }
    }
    return false;
  };

  // A reshape keeps each element's flat index, and so does an elementwise operation on what
  // it gives: such a value of the domain's element count, computed from element values, is
  // read and written at the element's flat index like a value of the domain's dims
  // (GroupNorm: statistics over [N, G, C/G x HW], the affine over [N, C, HW]; channels last,
  // over [N, HW, G, C/G] and [N, HW, C]). Every schedule computes an element's flat index in
  // the domain's row-major layout, contiguous rows or not.
  auto flat_element = [&](const Node& n) {
    if (!has_reduction || element_count(n.dims) != element_count(spec.domain)) return false;
    if (!is_elementwise(n.op) && n.op != OpKind::kReshape) return false;
    for (ValueId op : n.operands) {
      const int k = index(op);
      if (k >= 0 && !spec.pures[static_cast<size_t>(k)] &&
          spec.roles[static_cast<size_t>(k)] == ValueRole::kElement)
        return true;
    }
    return false;
  };

  // A permute of an impure element value that leaves the kernel is written through the
  // permutation (ValueRole::kPermutedElement) instead of ending the kernel.
  auto permuted_element = [&](const Node& n) {
    if (!has_reduction || n.op != OpKind::kPermute) return false;
    const int k = index(n.operands[0]);
    return k >= 0 && !spec.pures[static_cast<size_t>(k)] &&
           spec.roles[static_cast<size_t>(k)] == ValueRole::kElement;
  };

  // Roles, purity, levels; then every internal edge must be one the schedule can carry.
  for (ValueId v : members) {
    const Node& n = g.node(v);
    const bool reduce = op_family(n.op) == OpFamily::kReduce;
    const bool column_total = reduce && spec.is_column_total(v);
    ValueRole role;
    if (column_total) {
      role = ValueRole::kColumnTotal;
    } else if (reduce) {
      role = ValueRole::kRow;
    } else if (permuted_element(n)) {
      role = ValueRole::kPermutedElement;
    } else if (n.dims == spec.domain ||
               (!has_reduction && element_count(n.dims) == element_count(spec.domain)) || flat_element(n)) {
      role = ValueRole::kElement;
    } else if (has_reduction &&
               (n.dims == row_dims || is_aligned_row_shape(n.dims, spec.domain, spec.reduced_axes))) {
      role = ValueRole::kRow;
    } else {
      role = ValueRole::kIndexed;
    }
    bool pure = !reduce;
    int level = 0;
    // The walk: after the barrier of every column total it reads, and no earlier than its
    // operands'.
    int walk = 0;
    for (ValueId op : n.operands) {
      const int k = index(op);
      if (k < 0) continue;
      pure = pure && spec.pures[static_cast<size_t>(k)];
      level = std::max(level, spec.levels[static_cast<size_t>(k)]);
      walk = std::max(walk, spec.walks[static_cast<size_t>(k)] +
                                (spec.roles[static_cast<size_t>(k)] == ValueRole::kColumnTotal ? 1 : 0));
    }
    const bool after_totals = walk > 0;
    if (reduce && !column_total) level += 1;  // a column total accumulates in the last pass
    spec.roles.push_back(role);
    spec.pures.push_back(pure ? 1 : 0);
    spec.levels.push_back(level);
    spec.walks.push_back(walk);
    spec.row_walks = std::max(spec.row_walks, walk + 1);
    spec.phases = std::max(spec.phases, level);
    // After the barrier, a value of the totals' own shape computed from them alone (1 / s,
    // |s| + 1, a reshape of s) is computed at each element's column, where an element value
    // reads it through a broadcast.
    bool column_value = false;
    if (after_totals) {
      // A walk after a grid barrier walks the rows again and computes element values from
      // the totals and what the rows give, row reductions of them with the row values they
      // give (a walk that reads the rows again has passes of its own), and column totals of
      // them, complete at the next grid barrier. Not a permuted store.
      spec.stages = RowStages::kRowsAfterTotals;
      column_value = role == ValueRole::kIndexed && (is_elementwise(n.op) || n.op == OpKind::kReshape) &&
                     is_aligned_column_shape(n.dims, spec.domain, spec.reduced_axes);
      if (role != ValueRole::kElement && role != ValueRole::kRow && role != ValueRole::kColumnTotal &&
          !column_value)
        return reject("%" + std::to_string(v) + " (" + value_role_name(role) +
                      ") reads a column total: only element, row and column-total values are computed after "
                      "the totals' "
                      "grid barrier");
    }

    if (role == ValueRole::kIndexed && !pure && !column_value)
      return reject("%" + std::to_string(v) + " has a shape off the kernel's grid");
    if (role == ValueRole::kIndexed && classify(g, v) == OpClass::kExpensiveElementwise &&
        element_count(n.dims) < element_count(spec.domain) && replicated_in_kernel(v)) {
      return reject("expensive %" + std::to_string(v) + " would be recomputed across a broadcast");
    }
    for (ValueId op : n.operands) {
      const int k = index(op);
      if (k < 0 || spec.pures[static_cast<size_t>(k)]) continue;
      const ValueRole from = spec.roles[static_cast<size_t>(k)];
      bool ok = false;
      if (is_elementwise(n.op)) {
        ok = from == role || (from == ValueRole::kRow && spec.cols == 1) ||
             (column_value && from == ValueRole::kColumnTotal);
      } else if (n.op == OpKind::kReshape) {
        ok = (from == role && role != ValueRole::kIndexed) ||
             (column_value && (from == ValueRole::kColumnTotal || from == ValueRole::kIndexed));
      } else if (role == ValueRole::kPermutedElement) {
        ok = from == ValueRole::kElement;
      } else if (n.op == OpKind::kBroadcast) {
        ok = (from == ValueRole::kRow && role == ValueRole::kElement &&
              is_aligned_row_shape(g.node(op).dims, spec.domain, spec.reduced_axes)) ||
             ((from == ValueRole::kColumnTotal ||
               (from == ValueRole::kIndexed && spec.walks[static_cast<size_t>(k)] != 0)) &&
              role == ValueRole::kElement &&
              is_aligned_column_shape(g.node(op).dims, spec.domain, spec.reduced_axes));
      } else if (op_family(n.op) == OpFamily::kReduce) {
        ok = from == ValueRole::kElement;
      }
      if (!ok) {
        return reject("%" + std::to_string(op) + " (" + value_role_name(from) + ") cannot feed %" +
                      std::to_string(v) + " (" + op_name(n.op) + ", " + value_role_name(role) +
                      ") in one kernel");
      }
    }
    if (role == ValueRole::kPermutedElement) {
      for (ValueId u : in.users[static_cast<size_t>(v)]) {
        if (member(u))
          return reject("permuted %" + std::to_string(v) + " feeds %" + std::to_string(u) +
                        ": a permuted element value is only written, at its index in the permuted shape");
      }
    }
    if (in.policy == FusionPolicy::kLoop && reduce) {
      for (ValueId u : in.users[static_cast<size_t>(v)]) {
        if (member(u)) return reject("loop fusion ends a kernel at each reduction");
      }
    }
  }
  for (ValueId v : spec.stored) {
    if (spec.role(v) == ValueRole::kIndexed)
      return reject("%" + std::to_string(v) + " leaves the kernel off its grid");
  }

  // The values a walk reads from an earlier one: members that a member of a later walk reads
  // (not the totals, which every block reads after their barrier).
  if (spec.stages == RowStages::kRowsAfterTotals) {
    for (size_t i = 0; i < members.size(); ++i) {
      for (ValueId op : g.node(members[i]).operands) {
        const int k = index(op);
        if (k < 0 || spec.walks[static_cast<size_t>(k)] >= spec.walks[i] ||
            spec.roles[static_cast<size_t>(k)] == ValueRole::kColumnTotal)
          continue;
        spec.crossing_values.push_back(op);
      }
    }
    std::sort(spec.crossing_values.begin(), spec.crossing_values.end());
    spec.crossing_values.erase(std::unique(spec.crossing_values.begin(), spec.crossing_values.end()),
                               spec.crossing_values.end());
  }

  // Loaded values, in first-use order.
  SeenSet seen(g.size());
  std::vector<ValueId> pending;
  auto reach = [&](ValueId op) {
    if (member(op) || !seen.insert(op)) return;
    if (in.inlined[static_cast<size_t>(op)]) {
      pending.push_back(op);
      spec.inlined.push_back(op);
    } else {
      spec.loaded.push_back(op);
    }
  };
  for (ValueId v : members) {
    for (ValueId op : g.node(v).operands) reach(op);
    while (!pending.empty()) {
      ValueId w = pending.back();
      pending.pop_back();
      for (ValueId op : g.node(w).operands) reach(op);
    }
  }
  std::sort(spec.inlined.begin(), spec.inlined.end());
  // A view of a member reads the buffer this kernel writes: only a later kernel may.
  for (ValueId v : spec.loaded) {
    const ValueId root = in.view_root[static_cast<size_t>(v)];
    if (root >= 0 && member(root))
      return reject("%" + std::to_string(v) + " views the buffer of member %" + std::to_string(root));
  }

  // Every pointer the kernel takes must fit the parameter space: one per loaded value, one
  // per output or workspace slot a stored value goes to, and a split's two scratch buffers.
  uint64_t pointers = spec.loaded.size() + 2;
  for (ValueId v : spec.stored) {
    pointers +=
        uint64_t{in.output_count[static_cast<size_t>(v)]} + in.view_output_count[static_cast<size_t>(v)] + 1;
  }
  if (pointers * sizeof(void*) > static_cast<uint64_t>(in.arch.kernel_param_bytes)) {
    return reject("resources: " + std::to_string(spec.loaded.size()) + " inputs and " +
                      std::to_string(spec.stored.size()) + " results need up to " +
                      std::to_string(pointers * sizeof(void*)) + " bytes of kernel parameters, over the " +
                      std::to_string(in.arch.kernel_param_bytes) + " a launch takes",
                  RejectionKind::kResource);
  }

  // Passes over each row: reductions of level L accumulate in pass L-1; stored element
  // values are written in the last pass. Element values needed by several passes are kept in
  // registers or shared memory when they fit, else recomputed from global memory.
  if (spec.phases > 62)
    return reject("resources: more than 62 chained reductions in one kernel", RejectionKind::kResource);
  // Passes as bit sets: bit p set when the value is needed in pass p.
  // `masks` receives, parallel to `cached`, the passes in which each cached value is needed.
  std::vector<uint64_t> masks;
  auto need_passes = [&](bool allow_cache, std::vector<ValueId>* cached) {
    const int final_pass = spec.phases;
    masks.clear();
    std::vector<uint64_t> need(members.size(), 0);
    std::vector<int> first(members.size(), -1);  // pass that fills the register cache
    auto contribute = [&](ValueId user) -> uint64_t {
      const int k = index(user);
      const Node& u = g.node(user);
      if (spec.roles[static_cast<size_t>(k)] == ValueRole::kColumnTotal ||
          spec.roles[static_cast<size_t>(k)] == ValueRole::kPermutedElement)
        return uint64_t{1} << final_pass;
      // An online sum reads its max's operand in the max's pass, not its own operand.
      if (online_sum_of(spec.online_sums, user)) return 0;
      if (op_family(u.op) == OpFamily::kReduce)
        return uint64_t{1} << (spec.levels[static_cast<size_t>(k)] - 1);
      if (spec.roles[static_cast<size_t>(k)] == ValueRole::kElement &&
          (is_elementwise(u.op) || u.op == OpKind::kReshape)) {
        return first[static_cast<size_t>(k)] >= 0 ? uint64_t{1} << first[static_cast<size_t>(k)]
                                                  : need[static_cast<size_t>(k)];
      }
      return 0;
    };
    for (size_t i = members.size(); i-- > 0;) {
      ValueId v = members[i];
      if (spec.roles[i] != ValueRole::kElement) continue;
      uint64_t s = 0;
      if (std::find(spec.stored.begin(), spec.stored.end(), v) != spec.stored.end())
        s |= uint64_t{1} << final_pass;
      for (ValueId u : in.users[static_cast<size_t>(v)]) {
        if (member(u)) s |= contribute(u);
      }
      need[i] = s;
      // A cheap value needed by several passes that reads at most one element value is
      // recomputed from it (which is then cached instead): caching x - mean beside x would
      // double the cache, while x + bias + residual is cheaper cached than its two operands.
      int element_operands = 0;
      for (ValueId o : g.node(v).operands) {
        const int k = index(o);
        // A broadcast row value is at hand in every pass: it does not count.
        const bool element = k >= 0 ? spec.roles[static_cast<size_t>(k)] == ValueRole::kElement &&
                                          !spec.pures[static_cast<size_t>(k)] &&
                                          g.node(o).op != OpKind::kBroadcast
                                    : g.node(o).dims == spec.domain && !in.inlined[static_cast<size_t>(o)];
        element_operands += element ? 1 : 0;
      }
      const bool worth_caching = classify(g, v) == OpClass::kExpensiveElementwise || element_operands > 1;
      if (allow_cache && popcount64(s) >= 2 && worth_caching) {
        int p = 0;
        while (!((s >> p) & 1)) ++p;
        first[i] = p;
        cached->push_back(v);
        masks.push_back(s);
      }
    }
    uint64_t reads = 0;
    for (ValueId v : spec.loaded) {
      uint64_t s = 0;
      const bool element_load = g.node(v).dims == spec.domain;
      for (ValueId u : in.users[static_cast<size_t>(v)]) {
        const int k = index(u);
        if (k < 0) continue;
        if (element_load) {
          s |= contribute(u);
        } else {
          const int lvl =
              spec.levels[static_cast<size_t>(k)] - (op_family(g.node(u).op) == OpFamily::kReduce ? 1 : 0);
          s |= uint64_t{1} << std::max(0, lvl);
        }
      }
      int passes = popcount64(s);
      if (element_load && allow_cache && passes >= 2) {
        cached->push_back(v);
        masks.push_back(s);
        passes = 1;
      }
      reads = add_traffic(reads, value_bytes(g, v), static_cast<uint64_t>(std::max(1, passes)));
    }
    return reads;
  };
  // The passes of the kernel's levels as analyzed, and (a column kernel with online sums)
  // those of the levels with each online sum in its max's pass: what each pass reads, and
  // the values a cache would keep across them.
  struct PassPlan {
    std::vector<int> levels;
    int phases = 0;
    std::vector<OnlineSum> online_sums;
    std::vector<ValueId> candidates;  // cache candidates
    std::vector<uint64_t> masks;      // the passes each candidate is needed in
    std::vector<ValueId> loads;       // the candidates read from global memory
    uint64_t reads_cached = 0;
    uint64_t reads_recomputed = 0;
  };
  auto use_levels = [&](const PassPlan& p) {
    spec.levels = p.levels;
    spec.phases = p.phases;
    spec.online_sums = p.online_sums;
  };
  auto plan_passes = [&](PassPlan& p) {
    use_levels(p);
    p.reads_cached = need_passes(true, &p.candidates);
    p.masks = masks;
    std::vector<ValueId> none;
    p.reads_recomputed = p.candidates.empty() ? p.reads_cached : need_passes(false, &none);
    for (ValueId v : p.candidates) {
      if (std::find(spec.loaded.begin(), spec.loaded.end(), v) != spec.loaded.end()) p.loads.push_back(v);
    }
  };
  PassPlan plain{spec.levels, spec.phases, {}, {}, {}, {}, 0, 0};
  plan_passes(plain);
  std::optional<PassPlan> online;
  if (has_reduction && !spec.contiguous_rows && spec.cols > 1) {
    std::vector<OnlineSum> sums = find_online_sums(g, spec);
    if (!sums.empty()) {
      std::vector<int> levels = levels_with_online_sums(g, spec, sums);
      const int phases = *std::max_element(levels.begin(), levels.end());
      online = PassPlan{std::move(levels), phases, std::move(sums), {}, {}, {}, 0, 0};
      plan_passes(*online);
    }
  }
  // The plan's values the mappings below use; select() makes them (and the spec's levels)
  // the plain or the online ones.
  std::vector<ValueId> cache_candidates, cache_loads;
  std::vector<uint64_t> cache_masks;
  uint64_t reads_cached = 0, reads_recomputed = 0;
  auto select = [&](const PassPlan& p) {
    use_levels(p);
    cache_candidates = p.candidates;
    cache_loads = p.loads;
    cache_masks = p.masks;
    reads_cached = p.reads_cached;
    reads_recomputed = p.reads_recomputed;
  };
  select(plain);
  uint64_t written = 0;
  for (ValueId v : spec.stored) {
    // Once per output holding it, itself or as a free view.
    const uint64_t outputs =
        uint64_t{in.output_count[static_cast<size_t>(v)]} + in.view_output_count[static_cast<size_t>(v)];
    written = add_traffic(written, value_bytes(g, v), std::max<uint64_t>(1, outputs));
  }
  spec.bytes_written = written;

  // Schedule: every applicable mapping of threads onto rows and block size is scored by the
  // cost model (plan/cost_model.hpp); the best estimate wins, the first on a tie.
  const int64_t C = spec.cols, R = spec.rows;
  const int64_t n = element_count(spec.domain);
  int elementwise_vector = 1;
  if (!has_reduction) {
    // 16-byte accesses of the widest element-shaped value (codegen/emit.cpp does the same).
    size_t widest = 0;
    for (ValueId v : spec.loaded) {
      if (element_count(g.node(v).dims) == n) widest = std::max(widest, dtype_size(g.node(v).dtype));
    }
    for (ValueId v : spec.stored) widest = std::max(widest, dtype_size(g.node(v).dtype));
    if (widest > 0 && n >= static_cast<int64_t>(16 / widest))
      elementwise_vector = static_cast<int>(16 / widest);
  }
  // A mapping of threads onto rows and a block size, with where the row's multi-pass values
  // are kept: registers, shared memory (block per row) or nowhere (re-read in each pass).
  struct Mapping {
    ScheduleKind schedule;
    int threads_per_row;
    int block_threads;
    RowCache cache = RowCache::kRegisters;
    int split_blocks = 1;  // kSplitRow: blocks per row
    RowVectorAlignment alignment = RowVectorAlignment::kRowStart;
    RowPrefetch prefetch = RowPrefetch::kNone;
    // Kernels with column totals: resident blocks per SM the grid is held to (0: a full wave).
    // Each block adds a row of partials per total, so fewer blocks may move fewer bytes.
    int grid_blocks_per_sm = 0;
    KeptValues kept = KeptValues::kAll;  // RowCache::kRegisters: which candidates are kept
    PassLevels levels = PassLevels::kAsAnalyzed;  // the column tile's online sums, if any
    RowVectorSlots slots = RowVectorSlots::kScalarShare;  // whole-row schedules' vectors
    BarrierCrossing crossing = BarrierCrossing::kReadAgain;  // RowStages::kRowsAfterTotals
  };
  std::vector<Mapping> mappings;
  // Rows that are not whole vectors (GPT-2's 50257 columns) also get shifted vectors, scored
  // against the narrower vectors that divide the row.
  const int64_t widest_vector = widest_row_vector(g, spec);
  const bool odd_rows = has_reduction && spec.contiguous_rows && widest_vector > 1 && C % widest_vector != 0;
  // Whether the widest vector that divides the row (and its innermost run) gives t threads
  // more steps than their scalar share holds (the scalar share would narrow it), with a
  // vector for every thread (fewer would leave threads idle through the whole row).
  const int64_t row_run = has_reduction ? innermost_row_run(spec) : 0;
  auto ceil_div = [](int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); };  // no overflow
  auto share_narrows_vectors = [&](int t) {
    int64_t V = widest_vector;
    while (V > 1 && (C % V != 0 || row_run % V != 0)) V /= 2;
    if (V <= 1 || row_run == 0 || C / V < t) return false;
    return ceil_div(C / V, int64_t{t}) * V > ceil_div(C, int64_t{t});
  };
  auto add_row_mapping = [&](ScheduleKind kind, int t, int b, int split = 1) {
    auto add = [&](RowVectorAlignment a, RowVectorSlots slots) {
      auto push = [&](RowCache cache, RowPrefetch prefetch) {
        Mapping m{kind, t, b, cache, split, a, prefetch};
        m.slots = slots;
        mappings.push_back(m);
      };
      push(RowCache::kRegisters, RowPrefetch::kNone);
      // The same with the next row read ahead, where apply finds that the schedule allows it.
      if (kind != ScheduleKind::kSplitRow && kind != ScheduleKind::kThreadPerRow && !cache_candidates.empty())
        push(RowCache::kRegisters, RowPrefetch::kNextRow);
      if (cache_candidates.empty()) return;
      if (kind == ScheduleKind::kBlockPerRow || kind == ScheduleKind::kSplitRow)
        push(RowCache::kShared, RowPrefetch::kNone);
      push(RowCache::kRecompute, RowPrefetch::kNone);
    };
    for (RowVectorAlignment a : {RowVectorAlignment::kRowStart, RowVectorAlignment::kShifted}) {
      if (a == RowVectorAlignment::kShifted && (!odd_rows || kind == ScheduleKind::kThreadPerRow)) continue;
      add(a, RowVectorSlots::kScalarShare);
    }
    // Whole vectors with a few more slots, scored against the narrower ones (a split row
    // sizes its slices itself).
    if (walks_whole_rows(kind) && share_narrows_vectors(t))
      add(RowVectorAlignment::kRowStart, RowVectorSlots::kWholeVectors);
  };
  // Column totals: each row mapping also with grids of one, two and four blocks per SM.
  auto add_partial_grids = [&](size_t from) {
    if (spec.column_totals.empty()) return;
    const size_t end = mappings.size();
    for (size_t i = from; i < end; ++i) {
      // A second stage's crossing values kept in shared memory: the grid decides how many
      // rows each block keeps (a full wave at the estimated occupancy, or one held below).
      if (spec.stages == RowStages::kRowsAfterTotals && mappings[i].prefetch == RowPrefetch::kNone) {
        Mapping m = mappings[i];
        m.crossing = BarrierCrossing::kSharedRows;
        mappings.push_back(m);
      }
      for (int per_sm : {1, 2, 4}) {
        Mapping m = mappings[i];
        m.grid_blocks_per_sm = per_sm;
        mappings.push_back(m);
        if (spec.stages == RowStages::kRowsAfterTotals && m.prefetch == RowPrefetch::kNone) {
          m.crossing = BarrierCrossing::kSharedRows;
          mappings.push_back(m);
        }
      }
    }
  };
  // Threads, warps, blocks or groups of blocks per row. Rows that are not contiguous (a
  // BatchNorm's channel: its elements over the batch and the image, in runs of H x W) are
  // walked one element at a time at their unraveled flat index (codegen's
  // element_index_expr).
  auto add_row_schedules = [&] {
    for (int t = 2; t <= 16 && t / 2 < C; t *= 2) {
      for (int b : {128, 256}) add_row_mapping(ScheduleKind::kSubWarpPerRow, t, b);
    }
    if (C > 16) {
      for (int b : {128, 256}) add_row_mapping(ScheduleKind::kWarpPerRow, 32, b);
    }
    for (int t = 64; t <= 1024 && t / 2 < C; t *= 2) add_row_mapping(ScheduleKind::kBlockPerRow, t, t);
    // Rows that split into whole 16-byte vectors over a block of another multiple of 32.
    for (int t : vector_fitting_row_threads(g, spec)) add_row_mapping(ScheduleKind::kBlockPerRow, t, t);
    // Groups of blocks per row, for rows too few or too long for a block each.
    // Blocks of 256 or 512 threads: a split row keeps its slice bounds, group and parity live
    // across the row loop, which the 64 registers of a 1024-thread block cannot spare (ptxas
    // spills a 1024-thread 1x100000 softmax).
    // Any group size up to 16: the one whose grid fills the device is rarely a power of two
    // (64 rows in groups of 6 to 12 fill an H100's 132 SMs at 3 to 6 blocks each).
    // Groups as large as the device: one, two or four blocks per SM shared by the groups
    // resident at once, for rows so few and long that sixteen blocks each leave most SMs idle.
    std::vector<int> group_sizes;
    for (int blocks = 2; blocks <= 16; ++blocks) group_sizes.push_back(blocks);
    for (int per_sm : {1, 2, 4}) {
      for (int64_t resident = 1; resident <= std::min<int64_t>(R, 4); ++resident) {
        const int64_t blocks = int64_t{in.arch.sm_count} * per_sm / resident;
        if (blocks > 16 && std::find(group_sizes.begin(), group_sizes.end(), blocks) == group_sizes.end())
          group_sizes.push_back(static_cast<int>(blocks));
      }
    }
    // A part of a packed cooperative launch: also a group of its whole share of the wave.
    if (constraint.max_split_blocks > 16 &&
        std::find(group_sizes.begin(), group_sizes.end(), constraint.max_split_blocks) == group_sizes.end())
      group_sizes.push_back(constraint.max_split_blocks);
    for (int blocks : group_sizes) {
      if (constraint.sharing == LaunchSharing::kPackedSplitRowPart && blocks > constraint.max_split_blocks)
        continue;
      for (int t = 256; t <= 512 && int64_t{t} * blocks <= C; t *= 2)
        add_row_mapping(ScheduleKind::kSplitRow, t, t, blocks);
    }
  };
  if (!has_reduction) {
    for (int b : {128, 256, 512}) mappings.push_back({ScheduleKind::kElementwise, 1, b});
  } else if (!spec.contiguous_rows || C == 1) {
    // The column tile (plan/schedule_columns.hpp) sizes itself; thread per row is its fallback.
    // With several passes, also with the values they share kept in registers, and in blocks
    // of 512 and 1024 threads (fit_column_tile applies them to several passes only).
    // With online sums, each mapping also with the sums in their maxes' passes.
    auto add_column_mappings = [&](const PassPlan& p, PassLevels levels) {
      for (int b : {256, 512, 1024}) {
        auto add = [&](RowCache cache, KeptValues kept = KeptValues::kAll) {
          Mapping m{ScheduleKind::kColumnTile, 0, b, cache};
          m.kept = kept;
          m.levels = levels;
          mappings.push_back(m);
        };
        add(RowCache::kRecompute);
        if (!p.candidates.empty()) add(RowCache::kRegisters);
        // Only the loads kept: fewer registers (more blocks, shorter chunks) for recomputing
        // what the passes derive from them.
        const bool fewer_loads = !p.loads.empty() && p.loads.size() < p.candidates.size();
        if (fewer_loads) add(RowCache::kRegisters, KeptValues::kLoadsOnly);
        // Kept in shared memory, as many of a thread's rows as fit (the rest read again):
        // every value, or only the loads (their storage bits, half the bytes of a 16-bit row).
        if (!p.candidates.empty()) add(RowCache::kShared);
        if (fewer_loads) add(RowCache::kShared, KeptValues::kLoadsOnly);
      }
    };
    if (!spec.contiguous_rows && C > 1) {
      add_column_mappings(plain, PassLevels::kAsAnalyzed);
      if (online) add_column_mappings(*online, PassLevels::kOnlineSums);
    }
    for (int b : {128, 256}) add_row_mapping(ScheduleKind::kThreadPerRow, 1, b);
    // Only where the innermost axis is reduced: a row's consecutive columns are then
    // consecutive in memory (in runs of the innermost reduced axes), so its threads' loads
    // coalesce; down columns of a non-innermost axis, the column tile's do instead.
    if (!spec.contiguous_rows && C > 1 &&
        spec.reduced_axes.back() == static_cast<int64_t>(spec.domain.size()) - 1)
      add_row_schedules();
  } else {
    add_row_schedules();
  }
  add_partial_grids(0);
  // Whether the schedule applied to spec meets the constraint.
  auto meets_constraint = [&] {
    if (constraint.block_threads > 0 && spec.block_threads != constraint.block_threads) return false;
    if (constraint.sharing == LaunchSharing::kOwnLaunch) return true;
    if (!spec.column_totals.empty()) return false;
    // A packed launch's parts share its one dynamic buffer (plan/packing.hpp): a split row's
    // longer slice may keep its row there.
    if (constraint.sharing == LaunchSharing::kPackedSplitRowPart)
      return spec.schedule == ScheduleKind::kSplitRow &&
             spec.split.residency == GroupResidency::kCooperative &&
             spec.split.blocks <= constraint.max_split_blocks;
    return spec.schedule != ScheduleKind::kSplitRow &&
           !(spec.schedule == ScheduleKind::kColumnTile && spec.column.split > 1) &&
           spec.dynamic_shared_bytes == 0;
  };
  // Applies a mapping to spec; false when its cache placement does not fit, or it does not
  // meet the constraint.
  auto apply = [&](const Mapping& m) {
    select(m.levels == PassLevels::kOnlineSums && online ? *online : plain);
    reset_cache_and_tiling(spec);
    spec.bytes_written = written;
    // Column totals run in the row loops of a whole-row schedule: a column's running sum
    // belongs to the threads that own the column in every row.
    if (!spec.column_totals.empty() &&
        (m.schedule == ScheduleKind::kColumnTile || m.schedule == ScheduleKind::kSplitRow))
      return false;
    if (m.schedule == ScheduleKind::kColumnTile) {
      spec.vector_width = 1;
      spec.cache = m.cache;
      if (m.cache == RowCache::kRegisters || m.cache == RowCache::kShared) {
        spec.cached = m.kept == KeptValues::kLoadsOnly ? cache_loads : cache_candidates;
        std::sort(spec.cached.begin(), spec.cached.end());
      }
      if (!fit_column_tile(in, spec, m.block_threads)) return false;
      spec.vector_width = spec.column.vector;
      const ColumnTiling& t = spec.column;
      if (t.passes == 1) {
        // One pass that also stores the element values: every load is read once, nothing is
        // cached; a split adds its partials and counters, written once and read once.
        uint64_t reads = 0;
        for (ValueId v : spec.loaded) reads = add_traffic(reads, value_bytes(g, v));
        const uint64_t scratch = add_traffic(spec.column.partial_bytes, spec.column.counter_bytes);
        spec.bytes_read = add_traffic(reads, scratch);
        spec.bytes_written = add_traffic(written, scratch);
      } else {
        // The passes read what they do not keep again. A group's blocks each write their
        // partials once per tile; the last to arrive reads them all and writes the totals,
        // which every block reads.
        spec.bytes_read = m.cache == RowCache::kRegisters ? reads_cached : reads_recomputed;
        if (m.cache == RowCache::kShared) {
          // The rows the shared memory holds are read once; the rest in every pass.
          const double again = column_rows_read_again(t);
          spec.bytes_read =
              reads_cached +
              static_cast<uint64_t>(std::ceil(again * static_cast<double>(reads_recomputed - reads_cached)));
        }
        uint64_t partials_written = 0, partials_read = 0;
        if (t.releases_groups()) {
          const uint64_t per_tile = static_cast<uint64_t>(t.tile_elements()) * static_cast<uint64_t>(t.tiles);
          for (ValueId v : spec.members) {
            const Node& r = g.node(v);
            if (op_family(r.op) != OpFamily::kReduce) continue;
            const uint64_t acc = accumulator_bytes(r.op, r.dtype) * per_tile;
            partials_written = add_traffic(partials_written, acc, static_cast<uint64_t>(t.split + 1));
            partials_read = add_traffic(partials_read, acc, 2 * static_cast<uint64_t>(t.split));
          }
        }
        spec.bytes_read = add_traffic(spec.bytes_read, add_traffic(partials_read, t.counter_bytes));
        spec.bytes_written = add_traffic(written, add_traffic(partials_written, t.counter_bytes));
      }
      // The tiling sizes its own grid, for the occupancy its register estimate allows; the
      // kernel's minimum-blocks hint holds ptxas to it.
      spec.work_units = work_units(g, spec);
      spec.registers_estimate = estimate_registers(g, spec);
      spec.planned_blocks_per_sm = spec.column.blocks_per_sm;
      if (!meets_constraint()) return false;
      find_gelu_rounded_to_16bit(in, spec);
      spec.est_seconds = estimate_seconds(in, spec);
      return true;
    }
    if (m.schedule == ScheduleKind::kSplitRow) {
      if (!fit_split_row(in, spec, m.split_blocks, m.block_threads, m.alignment)) return false;
    } else {
      spec.schedule = m.schedule;
      spec.threads_per_row = m.threads_per_row;
      spec.block_threads = m.block_threads;
      spec.elems_per_thread = (C + spec.threads_per_row - 1) / spec.threads_per_row;
      spec.vector_width =
          has_reduction ? row_vector_width(g, spec, m.alignment, m.slots) : elementwise_vector;
      if (m.slots == RowVectorSlots::kWholeVectors) {
        // Only where the scalar share narrows the vectors; each thread holds its whole ones.
        if (spec.vector_width <= row_vector_width(g, spec, m.alignment)) return false;
        const int64_t V = spec.vector_width;
        spec.elems_per_thread = ceil_div(C / V, int64_t{spec.threads_per_row}) * V;
      }
      if (m.alignment == RowVectorAlignment::kShifted) {
        if (spec.vector_width == 1) return false;
        spec.elems_per_thread = shifted_row_slots(C, spec.threads_per_row, spec.vector_width);
      }
    }
    spec.row_alignment = m.alignment;
    spec.cache = m.cache;
    spec.bytes_read = reads_cached;
    switch (m.cache) {
      case RowCache::kRegisters:
        // Register slots: cached.size() x elems_per_thread at most half the register cap,
        // compared by division because a row may hold up to 2^62 elements.
        if (!cache_candidates.empty() &&
            spec.elems_per_thread >
                static_cast<int64_t>(in.register_cap / 2) / static_cast<int64_t>(cache_candidates.size()))
          return false;
        spec.cached = cache_candidates;
        std::sort(spec.cached.begin(), spec.cached.end());
        break;
      case RowCache::kShared:
        // Buffers reused by values whose passes do not overlap, within the budget.
        if (!assign_shared_cache(in, spec, cache_candidates, cache_masks)) return false;
        break;
      case RowCache::kRecompute:
        spec.bytes_read = reads_recomputed;
        break;
    }
    spec.prefetch = m.prefetch;
    if (spec.prefetch == RowPrefetch::kNextRow && !row_prefetch_applies(spec)) return false;
    if (!spec.column_totals.empty() && !fit_column_totals(g, spec)) return false;
    choose_gelu_evaluation(in, spec);  // sizes the grid
    if (!spec.column_totals.empty()) {
      if (m.grid_blocks_per_sm > 0) {
        const int64_t held = int64_t{m.grid_blocks_per_sm} * in.arch.sm_count;
        if (held >= spec.grid_blocks) return false;  // the same grid as another mapping
        spec.grid_blocks = std::max<int64_t>(1, held);
      }
      if (spec.stages == RowStages::kRowsAfterTotals) {
        // Every block waits at the grid barrier: the grid must be resident at once. The
        // stage after it reads the rows' inputs again, or the crossing values from shared
        // memory; each block reads the totals.
        if (spec.prefetch == RowPrefetch::kNextRow) return false;
        spec.crossing = m.crossing;
        if (spec.crossing == BarrierCrossing::kSharedRows) {
          if (!keep_crossing_rows(in, spec)) return false;
        } else {
          // Each walk reads the rows' inputs again.
          spec.bytes_read = add_traffic(0, spec.bytes_read, static_cast<uint64_t>(spec.row_walks));
        }
        const int64_t sms = std::max(1, in.arch.sm_count);
        if (spec.grid_blocks > int64_t{spec.planned_blocks_per_sm} * sms) return false;
        // The blocks per SM the grid needs resident: what the kernel's bounds hold ptxas to.
        spec.planned_blocks_per_sm = static_cast<int>((spec.grid_blocks + sms - 1) / sms);
      }
      place_column_total_partials(g, spec);
      // Each block writes its partials once; the last block reads them all (and with a
      // second stage every block reads the totals' row).
      add_column_total_traffic(g, spec);
    }
    if (spec.schedule == ScheduleKind::kSplitRow) {
      place_split_partials(g, spec);
      // Each partial is written once and read by every block of its group.
      const uint64_t blocks = static_cast<uint64_t>(spec.split.blocks);
      spec.bytes_read = add_traffic(spec.bytes_read, spec.split.partial_bytes, blocks);
      spec.bytes_written = add_traffic(written, spec.split.partial_bytes);
    }
    if (!meets_constraint()) return false;
    spec.est_seconds = estimate_seconds(in, spec);
    return true;
  };
  size_t best = mappings.size();
  double best_seconds = std::numeric_limits<double>::infinity();
  int best_vector = 0;
  uint64_t best_bytes = std::numeric_limits<uint64_t>::max();
  double best_idle = std::numeric_limits<double>::infinity();
  size_t last_applied = mappings.size();  // the mapping spec holds, when the last apply succeeded
  double smallest_code_over = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < mappings.size(); ++i) {
    // A mapping that does not apply leaves spec half-applied: the best is applied again.
    last_applied = mappings.size();
    if (!apply(mappings[i])) continue;
    last_applied = i;
    const double code = code_instructions(g, spec);
    if (code > in.code_budget) {
      smallest_code_over = std::min(smallest_code_over, code);
      continue;
    }
    // Estimates within the model's resolution are a tie, broken for fewer bytes moved (a
    // launch-bound kernel cannot tell one read of its rows from two, a larger one can), then
    // for the wider accesses: once bandwidth saturates the memory time cannot tell 8-byte
    // from 16-byte vectors, which issue half the memory instructions and keep twice the
    // bytes in flight per thread; then for fewer idle slots: a whole-row schedule whose
    // threads share the row evenly (96 threads of one bf16 vector each for 768 columns)
    // over one whose last step leaves some of them waiting (64 threads, 1.5 vectors each).
    const uint64_t bytes = add_traffic(spec.bytes_read, spec.bytes_written);
    const double idle =
        walks_whole_rows(spec.schedule)
            ? std::max(0.0, static_cast<double>(spec.elems_per_thread) * spec.threads_per_row -
                                static_cast<double>(C))
            : 0.0;
    const bool faster = spec.est_seconds < best_seconds * (1 - kEstimateResolution);
    const bool tied = !faster && spec.est_seconds <= best_seconds * (1 + kEstimateResolution);
    const bool wins_tie =
        tied && std::make_tuple(-static_cast<double>(bytes), spec.vector_width, -idle, -spec.est_seconds) >
                    std::make_tuple(-static_cast<double>(best_bytes), best_vector, -best_idle, -best_seconds);
    if (faster || wins_tie) {
      best = i;
      best_seconds = spec.est_seconds;
      best_vector = spec.vector_width;
      best_bytes = bytes;
      best_idle = idle;
    }
  }
  if (best == mappings.size() && smallest_code_over < std::numeric_limits<double>::infinity()) {
    return reject("resources: about " + std::to_string(static_cast<int64_t>(smallest_code_over)) +
                      " instructions of code, over the " +
                      std::to_string(static_cast<int64_t>(in.code_budget)) +
                      " a kernel may hold for its compile time",
                  RejectionKind::kResource);
  }
  if (best == mappings.size() &&
      (constraint.sharing != LaunchSharing::kOwnLaunch || constraint.block_threads > 0)) {
    return reject(
        "no schedule of blocks of " +
        (constraint.block_threads > 0 ? std::to_string(constraint.block_threads) : std::string("any")) +
        " threads fits" +
        (constraint.sharing == LaunchSharing::kPackedPart ? " a packed launch"
         : constraint.sharing == LaunchSharing::kPackedSplitRowPart
             ? " a packed cooperative launch in groups of at most " +
                   std::to_string(constraint.max_split_blocks) + " blocks"
             : std::string()));
  }
  if (best == mappings.size()) {
    return reject(
        "resources: no schedule fits the device, every mapping needs more registers or shared memory "
        "than an SM has",
        RejectionKind::kResource);
  }
  if (best != last_applied) apply(mappings[best]);
  return true;
}

uint64_t add_traffic(uint64_t total, uint64_t bytes, uint64_t times) {
  auto too_much = [] {
    return std::string("the graph would move more than 2^64 bytes of global memory; it is too large");
  };
  return add_or_fail(total, mul_or_fail(bytes, times, StatusCode::kOutOfMemory, too_much),
                     StatusCode::kOutOfMemory, too_much);
}

double estimate_seconds(const PlanInputs& in, const KernelSpec& spec) {
  return estimate_kernel(in.arch, *in.graph, spec).total_seconds;
}

}  // namespace fstitch
