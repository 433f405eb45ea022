#include "plan/schedule_split_rows.hpp"

#include <algorithm>

#include "plan/kernel_spec.hpp"
#include "plan/op_class.hpp"
#include "plan/row_vectors.hpp"

namespace fstitch {

const char* group_residency_name(GroupResidency r) {
  return r == GroupResidency::kCluster ? "cluster" : "cooperative";
}

bool fit_split_row(const PlanInputs& in, KernelSpec& spec, int blocks, int block_threads,
                   RowVectorAlignment alignment) {
  const Graph& g = *in.graph;
  if (spec.reduced_axes.empty() || blocks < 2 || block_threads < 64) return false;
  // Rows that are not contiguous only in runs along the innermost axis (coalesced loads).
  if (!spec.contiguous_rows && spec.reduced_axes.back() != static_cast<int64_t>(spec.domain.size()) - 1)
    return false;
  if (int64_t{blocks} * block_threads > kMaxGroupThreads) return false;
  // Slices are indexed in 32 bits (a longer row is gigabytes: 16 blocks would not fill a
  // device for it anyway, and its scratch could not join a workspace already at its limit).
  if (spec.cols >= (int64_t{1} << 31)) return false;
  const int64_t C = spec.cols, T = block_threads;
  // Each arrival adds one to a group's 32-bit counter: rows x passes x G arrivals at most
  // (one group walking every row).
  if (spec.rows > (int64_t{1} << 31) / (int64_t{blocks} * std::max(1, spec.phases) + 1)) return false;
  // The widest element-shaped access sets the vector. Slices start at multiples of it: with
  // row-start alignment the row must be made of whole vectors; shifted, each slice takes the
  // elements before its first vector boundary one at a time.
  const int64_t widest_vector = widest_row_vector(g, spec);  // 0: no element-shaped access
  int64_t V = std::max<int64_t>(1, widest_vector);
  // Rows that are not contiguous: vectors within the runs of their innermost axes, aligned
  // at each run's start.
  if (!spec.contiguous_rows) {
    if (alignment == RowVectorAlignment::kShifted) return false;
    while (V > 1 && innermost_row_run(spec) % V != 0) V /= 2;
  }
  const int64_t widest = widest_vector > 0 ? 16 / widest_vector : 0;  // bytes
  if (alignment == RowVectorAlignment::kShifted) {
    if (V == 1 || C % V == 0 || V * widest < 4) return false;
  } else {
    while (V > 1 && C % V != 0) V /= 2;
    if (V * widest < 4) V = 1;
  }
  const int64_t even = (C + blocks - 1) / blocks;
  const int64_t slice = (even + V - 1) / V * V;
  // Every block needs a slice, and every thread of it an element at least: a smaller group
  // (or block) does the same work with fewer barriers.
  if (slice * (blocks - 1) >= C || slice < T) return false;
  spec.schedule = ScheduleKind::kSplitRow;
  spec.threads_per_row = block_threads;
  spec.block_threads = block_threads;
  spec.vector_width = static_cast<int>(V);
  spec.elems_per_thread = alignment == RowVectorAlignment::kShifted
                              ? shifted_row_slots(slice, T, static_cast<int>(V))
                              : (slice + T * V - 1) / (T * V) * V;
  spec.split = RowSplit{};
  spec.split.blocks = blocks;
  spec.split.slice_cols = slice;
  spec.split.residency =
      blocks <= in.arch.max_cluster_blocks ? GroupResidency::kCluster : GroupResidency::kCooperative;
  // Whole groups: the grid is a multiple of G, any number of groups computes the same (they
  // stride over the rows by gridDim.x / G), and a cooperative grid only shrinks (its partials
  // are placed for the planned groups).
  spec.grid_multiple = blocks;
  spec.grid_policy = GridPolicy::kStrided;
  return true;
}

void place_split_partials(const Graph& g, KernelSpec& spec) {
  RowSplit& split = spec.split;
  split.groups = std::max<int64_t>(1, spec.grid_blocks / std::max(1, split.blocks));
  split.partial_offsets.clear();
  split.partial_bytes = split.counter_bytes = 0;
  // A cluster's partials stay in its blocks' shared memory: no workspace.
  if (split.residency == GroupResidency::kCluster) return;
  uint64_t offset = 0;
  for (ValueId v : spec.members) {
    const Node& n = g.node(v);
    if (op_family(n.op) != OpFamily::kReduce) continue;
    split.partial_offsets.push_back(offset);
    const uint64_t bytes = accumulator_bytes(n.op, n.dtype) * static_cast<uint64_t>(split.groups) * 2 *
                           static_cast<uint64_t>(split.blocks);
    offset += (bytes + 15) / 16 * 16;
  }
  split.partial_bytes = offset;
  split.counter_bytes = 4 * static_cast<uint64_t>(split.groups);
}

}  // namespace fstitch
