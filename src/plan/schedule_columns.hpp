// The tiled column schedule (ScheduleKind::kColumnTile): a reduction whose reduced axes form
// one contiguous run that is not innermost, with the domain viewed as [outer, reduced, inner].
// Threads of a block run along the inner axis (V consecutive elements each, 16-byte accesses
// where the inner extent allows), the block's rows of threads along chunks of the reduced
// axis, and the reduced axis is split into S chunks across blocks so the grid fills the
// device. Partials of a split are combined by the last block of each tile, in split order.
//
// A kernel with several passes over its columns (softmax over axis 0: a sum of exp(x - max),
// element values stored after their reductions) keeps the S blocks of a tile together as a
// group: after each pass the group's last block to arrive combines the partials and releases
// the others with the tile's totals, and every block goes on over its own chunk, kept in
// registers or read again (ColumnCombine::kGroupRelease).
#pragma once

#include <cstddef>
#include <cstdint>

#include <vector>

#include "ir/dtype.hpp"
#include "ir/op.hpp"
#include "plan/arch.hpp"

namespace fstitch {

struct PlanInputs;
struct KernelSpec;

// How the blocks of a tile split across blocks (S > 1) combine their partials.
enum class ColumnCombine : uint8_t {
  // One pass: each block publishes its partials and counts itself in on the tile's counter;
  // the last to arrive combines them in split order and finishes the tile. Any grid.
  kLastBlock,
  // Several passes: a tile's S blocks are a group, resident together (a cooperative launch),
  // that walks the tiles group, group + groups... After each pass every block publishes its
  // partials and arrives; the last to arrive combines them (split order, the same bits
  // whichever block it is), publishes the tile's totals and releases the group; each block
  // reads the totals and runs the next pass over its own chunk.
  kGroupRelease,
};

// What the choice depends on, all explicit so a cost model can score the alternatives.
struct ColumnShape {
  int64_t outer = 1;                // product of the kept axes before the reduced run
  int64_t reduced = 1;              // product of the reduced axes
  int64_t inner = 1;                // product of the kept axes after the reduced run
  size_t widest_element_bytes = 0;  // widest dtype among element loads and stores (0: none)
  uint64_t input_bytes = 0;         // bytes the kernel reads from global memory once
  size_t accumulator_bytes = 0;     // sum over the kernel's reductions of their accumulator size
  int max_vector = 8;               // most elements per thread along the inner axis
  std::vector<int64_t> reduced_axes;  // the kernel's (several runs: row bases unravel)
  int reductions = 1;               // accumulators per thread (they set its registers)
  int element_loads = 1;            // element-shaped inputs (their vectors in flight too)
  std::vector<size_t> element_store_sizes;  // dtype sizes of the element outputs (vector stores)
  int passes = 1;                   // passes over each chunk (reduction passes, plus a store pass)
  int online_sums = 0;              // sums accumulated beside their max (plan/online_sums.hpp)
  int block_threads = 256;          // threads of a block (lanes x thread rows)
  // Passes > 1 with values kept in registers: the register slots a thread may give them, and
  // how many values each element keeps (0: nothing kept, every pass reads again).
  int64_t cache_slots = 0;
  int cached_values = 0;
};

// How a column tile runs. A tile is one outer index and `lanes * vector` inner elements; a
// work item is one tile and one of its `split` chunks of the reduced axis.
struct ColumnTiling {
  int vector = 1;              // consecutive inner elements per thread (a 16-byte access when > 1)
  int lanes = 1;               // threads of a block along the inner axis
  int rd_threads = 1;          // threads of a block along the reduced axis
  int64_t inner_tiles = 1;     // tiles along the inner axis per outer index
  int64_t tiles = 1;           // outer x inner_tiles
  int64_t split = 1;           // S: chunks of the reduced axis, each reduced by its own block
  int64_t chunk = 1;           // reduced-axis extent of one chunk (the last may be shorter)
  int block_threads = 1;       // lanes x rd_threads
  int blocks_per_sm = 1;       // resident blocks per SM the wave is sized for (the kernel's hint)
  int64_t grid_blocks = 1;     // blocks launched; they loop over the tiles x split work items
  uint64_t partial_bytes = 0;  // the partials' size in the workspace (0 when split == 1)
  uint64_t counter_bytes = 0;  // one 32-bit counter per tile (0 when split == 1)
  int passes = 1;              // passes over each chunk
  ColumnCombine combine = ColumnCombine::kLastBlock;  // with split > 1
  // kGroupRelease: groups of `split` blocks in the grid (grid_blocks = groups x split)
  int64_t groups = 1;
  int64_t rows_per_thread = 1;  // ceil(chunk / rd_threads): a thread's rows of its chunk
  // RowCache::kShared: the first `shared_rows` of a thread's rows keep their values in
  // shared memory across the passes; the rest are read again in each pass.
  int64_t shared_rows = 0;

  bool releases_groups() const { return split > 1 && combine == ColumnCombine::kGroupRelease; }
  int64_t tile_elements() const { return static_cast<int64_t>(lanes) * vector; }
};

// What one column-tile thread holds, which sets its registers.
struct ColumnTileThread {
  int reductions = 1;           // accumulators
  int element_loads = 1;        // element-shaped inputs (their vectors in flight)
  int64_t cache_slots = 0;      // register slots of values kept across the passes
  int passes = 1;               // passes over each chunk
  int64_t rows_per_thread = 1;  // reduced rows of a chunk each thread walks
  int vector = 1;               // lanes along the inner axis
  int element_stores = 0;       // element outputs stored a row at a time as vectors
  int64_t unraveled_rows = 0;   // reduced axes in several runs: row bases unraveled at once
  int online_sums = 0;          // sums accumulated beside their max (plan/online_sums.hpp)
};

// Blocks resident per SM at `block_threads`, by the thread limit and the registers of a
// column-tile thread holding `thread` (plan/cost_model.hpp).
int resident_blocks_per_sm(const ArchParams& arch, int block_threads, const ColumnTileThread& thread = {});

// Whether sorted reduced axes form one run of adjacent axes (else a column tile's rows
// unravel over several runs).
bool reduced_axes_in_one_run(const std::vector<int64_t>& reduced_axes);

// The reduced rows whose unraveled bases a column-tile thread holds at once: none when the
// reduced axes are one run; with several, the rows it keeps in registers (their loop
// unrolls fully), else the two of a loop unrolled twice.
int64_t column_unraveled_rows(const ColumnTiling& t, const std::vector<int64_t>& reduced_axes,
                              bool keeps_rows);

// The tiling for `shape` on `arch`: at least one full wave of blocks when the work allows,
// each chunk long enough that the partials (written and read once, S x tiles x tile elements
// x accumulator bytes each way) stay within kPartialTrafficShare of the input bytes; S = 1
// when the tiles alone fill a wave.
ColumnTiling choose_column_tiling(const ColumnShape& shape, const ArchParams& arch);

// Bytes of the accumulator a reduction `op` producing `result` keeps per element (its
// partials in the workspace have this size): f32 for f32/f16/bf16 sums, f64 for f64, 64-bit
// integers for integer sums and products, the compute type for max and min.
size_t accumulator_bytes(OpKind op, DType result);

// Gives `spec` (analyzed up to its schedule: members, roles, levels, loads and stores, and
// the register cache it asks for in spec.cache and spec.cached) the column-tile schedule when
// it applies: a reduction over one contiguous run of axes that is not innermost,
// accumulators within the shared-memory budget. One reduction pass whose element values are
// free of the kernel's reductions stores them during the pass; otherwise the passes run in
// turn, a split tile's blocks as a group (ColumnCombine::kGroupRelease) whose S blocks fit
// one wave, the register cache within half the register cap; blocks of `block_threads`
// (256 for one pass; 256, 512 or 1024 for several). Fills schedule,
// column, column_partial_offsets, block_threads, grid_blocks, threads_per_row (the threads
// that reduce one output element: rd_threads x split) and elems_per_thread. Returns false,
// leaving `spec` as it was, when the schedule does not apply.
bool fit_column_tile(const PlanInputs& in, KernelSpec& spec, int block_threads = 256);

// Sizes the shared-memory cache of a column tile over several passes (spec.cache ==
// RowCache::kShared, spec.cached set): the thread rows whose values fit the shared memory
// each of the planned resident blocks gets, beside the block's combine arrays. Fills
// column.shared_rows, cache_buffer, shared_buffer_types, shared_cache_bytes and
// dynamic_shared_bytes; false when not one row fits.
bool fit_column_shared_cache(const PlanInputs& in, KernelSpec& spec);

// The share of a tile's reduced rows that a shared-memory column cache does not hold (read
// again by every pass after the first): 0 when every row fits, 1 with no cache.
double column_rows_read_again(const ColumnTiling& t);

// Bytes of the static shared memory a column tile over several passes declares: its combine
// arrays (one accumulator per thread and lane for each reduction) and its arrival flag.
size_t column_static_shared_bytes(const ColumnTiling& t, size_t accumulator_bytes);

// Scratch of a kGroupRelease tiling, per reduction: partials [groups][2][S][tile elements],
// then totals [groups][2][tile elements] (2: the tile's parity), in accumulators.
uint64_t group_release_slots(const ColumnTiling& t);

// The partials' traffic may grow to this share of the bytes the kernel reads.
inline constexpr double kPartialTrafficShare = 0.04;

}  // namespace fstitch
