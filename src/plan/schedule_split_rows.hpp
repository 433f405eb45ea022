// Rows split across a group of blocks (ScheduleKind::kSplitRow): for graphs with too few rows
// to fill the device, or rows longer than one block should walk, each row is cut into G
// slices, one per block of a group. A block reduces its slice like a block-per-row kernel,
// publishes its partial, and the group meets at a barrier; every block then combines the G
// partials in one fixed order (bit-identical in every block and every run: slice order in a
// cluster, a strided share per thread and the block's reduction tree through global memory)
// and goes on with the row's next pass over its own slice, which it keeps on chip.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/graph.hpp"
#include "plan/arch.hpp"

namespace fstitch {

struct PlanInputs;
struct KernelSpec;
enum class RowVectorAlignment : uint8_t;  // plan/kernel_spec.hpp

// How the blocks of a group are kept resident together so they can wait for each other: a
// thread-block cluster (sm_90 and later; the group is one cluster), or a cooperative launch
// that keeps the whole grid resident.
enum class GroupResidency : uint8_t { kCluster, kCooperative };
const char* group_residency_name(GroupResidency r);

struct RowSplit {
  int blocks = 1;          // G: blocks per row (1: not split)
  int64_t slice_cols = 0;  // columns of one block's slice; the last slice may be shorter
  int64_t groups = 1;      // groups planned (grid = groups x G); they loop over the rows
  GroupResidency residency = GroupResidency::kCooperative;
  uint64_t partial_bytes = 0;             // [reduction][group][2 (row parity)][G] accumulators
  uint64_t counter_bytes = 0;             // one 32-bit arrival counter per group
  // A packed launch's part: its first counter among the launch's counters, which all its
  // parts share (one range zeroed before the launch); 0 for a kernel of its own.
  uint64_t counter_offset = 0;
  std::vector<uint64_t> partial_offsets;  // per reduction member (member order): its region
};

// Most threads a group may hold: the host backend keeps a group's threads resident at once,
// at most its kMaxResidentThreads (runtime/host/host_options.hpp). A group is also held to
// one wave of the device by the cost model.
inline constexpr int64_t kMaxGroupThreads = int64_t{1} << 19;
// Clusters of up to 8 blocks are portable on every sm_90 device.
inline constexpr int kMaxPortableClusterBlocks = 8;

// Applies the split-row schedule with `blocks` per row and `block_threads` threads to `spec`
// (analyzed up to its schedule, contiguous rows with a reduction): slice, groups, residency
// and scratch, with vectors aligned as `alignment` asks (kShifted applies only to rows that
// are not whole vectors). The grid is sized by size_grid afterwards. False, leaving the
// schedule unset, when the split does not apply (slices shorter than a block's vectors, a
// group too large, or arrival counts that would not fit 32 bits).
bool fit_split_row(const PlanInputs& in, KernelSpec& spec, int blocks, int block_threads,
                   RowVectorAlignment alignment);

// Once the grid is sized (spec.grid_blocks, a multiple of G): the groups and the partials'
// and counters' sizes, each reduction's partials at a 16-byte boundary.
void place_split_partials(const Graph& g, KernelSpec& spec);

}  // namespace fstitch
