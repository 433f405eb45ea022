#include "plan/schedule_columns.hpp"

#include "plan/cost_model.hpp"

#include <algorithm>

#include "ir/graph.hpp"
#include "plan/kernel_spec.hpp"
#include "plan/row_cache.hpp"

namespace fstitch {
namespace {

int64_t pow2_ceil(int64_t x) {
  int64_t p = 1;
  while (p < x) p <<= 1;
  return p;
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// Rounded so every reduction's partials start 16-byte aligned.
uint64_t round_up16(uint64_t x) {
  return (x + 15) / 16 * 16;
}

}  // namespace

size_t accumulator_bytes(OpKind op, DType result) {
  const bool fp = is_float(result);
  if (op == OpKind::kReduceSum || op == OpKind::kReduceMean || op == OpKind::kReduceProd)
    return fp ? (result == DType::kF64 ? 8 : 4) : 8;
  return result == DType::kF64 || result == DType::kI64 ? 8 : 4;
}

uint64_t group_release_slots(const ColumnTiling& t) {
  return static_cast<uint64_t>(t.groups) * 2 * static_cast<uint64_t>(t.split + 1) *
         static_cast<uint64_t>(t.tile_elements());
}

bool fit_column_tile(const PlanInputs& in, KernelSpec& spec, int block_threads) {
  const Graph& g = *in.graph;
  const std::vector<int64_t>& axes = spec.reduced_axes;
  if (axes.empty() || spec.phases < 1) return false;
  // The reduced axes: one run that is not innermost, or several runs when the innermost
  // axis is kept (the tile's lanes run along the kept axes after the last reduced one; its
  // reduced rows and outer index unravel over the others, codegen's column_base).
  if (!reduced_axes_in_one_run(axes) && axes.back() == static_cast<int64_t>(spec.domain.size()) - 1)
    return false;
  std::vector<ValueId> reductions;
  bool stores_elements = false, stores_after_reductions = false;
  for (size_t i = 0; i < spec.members.size(); ++i) {
    if (stored_per_element(spec.roles[i]) &&
        std::find(spec.stored.begin(), spec.stored.end(), spec.members[i]) != spec.stored.end()) {
      stores_elements = true;
      stores_after_reductions = stores_after_reductions || !spec.pures[i];
    }
    if (op_family(g.node(spec.members[i]).op) == OpFamily::kReduce) reductions.push_back(spec.members[i]);
  }
  ColumnShape shape;
  shape.block_threads = block_threads;
  shape.reduced_axes = axes;
  // One pass stores its element values as it goes; a reduction of a reduction, or element
  // values computed from one, take a pass each (and a last one that stores).
  shape.passes = spec.phases == 1 && !stores_after_reductions ? 1 : spec.phases + (stores_elements ? 1 : 0);
  // Online sums are finished in their passes' combines, which the one-pass tile (its last
  // block combining each tile) does not run.
  if (shape.passes == 1 && !spec.online_sums.empty()) return false;
  shape.online_sums = static_cast<int>(spec.online_sums.size());
  // Blocks larger than 256 threads only for several passes: fewer chunks per tile, so fewer
  // partials to combine, where the rows a thread keeps bound the chunk.
  if (shape.passes == 1 && block_threads != 256) return false;
  if (shape.passes > 1 && spec.cache == RowCache::kRegisters && !spec.cached.empty()) {
    shape.cache_slots = in.register_cap;
    shape.cached_values = static_cast<int>(spec.cached.size());
  } else if (spec.cache == RowCache::kShared) {
    // Several passes keep what spec.cached names in shared memory, sized once tiled.
    if (shape.passes == 1 || spec.cached.empty()) return false;
  } else if (spec.cache != RowCache::kRecompute) {
    return false;  // one pass keeps nothing; several keep what spec.cached names
  }
  for (size_t i = 0; i < spec.domain.size(); ++i) {
    const auto axis = static_cast<int64_t>(i);
    if (std::binary_search(axes.begin(), axes.end(), axis)) {
      shape.reduced *= spec.domain[i];
    } else if (axis > axes.back()) {
      shape.inner *= spec.domain[i];
    } else {
      shape.outer *= spec.domain[i];
    }
  }
  shape.element_loads = element_shaped_loads(g, spec);
  for (ValueId v : spec.loaded) {
    shape.input_bytes += value_bytes(g, v);
    if (g.node(v).dims == spec.domain)
      shape.widest_element_bytes = std::max(shape.widest_element_bytes, dtype_size(g.node(v).dtype));
  }
  for (ValueId v : spec.stored) {
    if (spec.role(v) != ValueRole::kElement) continue;
    shape.widest_element_bytes = std::max(shape.widest_element_bytes, dtype_size(g.node(v).dtype));
    shape.element_store_sizes.push_back(dtype_size(g.node(v).dtype));
  }
  for (ValueId r : reductions) shape.accumulator_bytes += accumulator_bytes(g.node(r).op, g.node(r).dtype);
  shape.reductions = static_cast<int>(reductions.size());
  // The block combine keeps every thread's accumulators in shared memory: within the budget
  // (static shared memory, at most 48 KiB, less a little for the split's flag).
  const size_t limit = std::min<size_t>(in.shared_budget, 48 * 1024);
  if (limit <= 64) return false;
  const size_t budget = limit - 64;
  ColumnTiling t;
  for (shape.max_vector = 8;; shape.max_vector /= 2) {
    t = choose_column_tiling(shape, in.arch);
    const size_t shared =
        static_cast<size_t>(t.block_threads) * static_cast<size_t>(t.vector) * shape.accumulator_bytes;
    if (shared <= budget) break;
    if (shape.max_vector == 1) return false;
  }
  if (t.releases_groups()) {
    // A group waits for all its blocks: it must fit one wave of the device. Each arrival adds
    // one to the group's 32-bit counter, S + 1 per pass and tile.
    const int64_t wave = static_cast<int64_t>(in.arch.sm_count) * t.blocks_per_sm;
    if (t.split > wave) return false;
    const int64_t tiles_per_group = (t.tiles + t.groups - 1) / t.groups;
    if (tiles_per_group > (int64_t{1} << 31) / ((t.split + 1) * std::max(1, spec.phases) + 1)) return false;
  }
  if (shape.cached_values > 0 &&
      t.rows_per_thread * t.vector * shape.cached_values > static_cast<int64_t>(shape.cache_slots))
    return false;
  spec.column_partial_offsets.clear();
  if (t.split > 1) {
    uint64_t offset = 0;
    const uint64_t slots = t.releases_groups()
                               ? group_release_slots(t)
                               : static_cast<uint64_t>(t.split) * static_cast<uint64_t>(t.tiles) *
                                     static_cast<uint64_t>(t.tile_elements());
    for (ValueId r : reductions) {
      spec.column_partial_offsets.push_back(offset);
      offset = round_up16(offset + slots * accumulator_bytes(g.node(r).op, g.node(r).dtype));
    }
    t.partial_bytes = offset;
  }
  const ColumnTiling before = spec.column;
  spec.column = t;
  if (spec.cache == RowCache::kShared && !fit_column_shared_cache(in, spec)) {
    spec.column = before;
    return false;
  }
  spec.schedule = ScheduleKind::kColumnTile;
  spec.block_threads = t.block_threads;
  spec.grid_blocks = t.grid_blocks;
  if (t.releases_groups()) {
    // Whole groups that walk the tiles by gridDim.x / S: any number of them computes the
    // same, and the cooperative launch only shrinks the grid (the scratch is placed for the
    // planned groups).
    spec.grid_multiple = static_cast<int>(t.split);
  }
  spec.threads_per_row = static_cast<int>(std::min<int64_t>(int64_t{1} << 30, t.rd_threads * t.split));
  return true;
}

size_t column_static_shared_bytes(const ColumnTiling& t, size_t accumulator_bytes) {
  // Each array may start at a 16-byte boundary: a little slack for the flag and padding.
  return static_cast<size_t>(t.block_threads) * static_cast<size_t>(t.vector) * accumulator_bytes + 64;
}

bool fit_column_shared_cache(const PlanInputs& in, KernelSpec& spec) {
  const Graph& g = *in.graph;
  ColumnTiling& t = spec.column;
  if (spec.cached.empty() || t.passes < 2) return false;
  size_t accumulators = 0;
  for (ValueId v : spec.members) {
    const Node& n = g.node(v);
    if (op_family(n.op) == OpFamily::kReduce) accumulators += accumulator_bytes(n.op, n.dtype);
  }
  // The shared memory of one of the planned resident blocks, less what it declares itself.
  const ArchParams& arch = in.arch;
  const int64_t per_sm =
      arch.shared_bytes_per_sm / std::max(1, t.blocks_per_sm) - arch.shared_reserved_per_block;
  const int64_t per_block =
      std::min<int64_t>({per_sm, arch.max_shared_bytes_per_block,
                         static_cast<int64_t>(std::min<size_t>(in.shared_budget, 1 << 30))});
  const int64_t room = per_block - static_cast<int64_t>(column_static_shared_bytes(t, accumulators));
  // One row of a thread's values: each cached value's V lanes for every thread of the block.
  spec.cache_buffer.clear();
  spec.shared_buffer_types.clear();
  int64_t row_bytes = 0;
  for (size_t i = 0; i < spec.cached.size(); ++i) {
    const DType type = shared_cache_dtype(g, spec, spec.cached[i]);
    spec.cache_buffer.push_back(static_cast<int>(i));
    spec.shared_buffer_types.push_back(type);
    row_bytes += static_cast<int64_t>(t.block_threads) * t.vector * static_cast<int64_t>(dtype_size(type));
  }
  if (room <= 0 || row_bytes <= 0 || room < row_bytes) {
    spec.cache_buffer.clear();
    spec.shared_buffer_types.clear();
    return false;
  }
  t.shared_rows = std::min<int64_t>(t.rows_per_thread, room / row_bytes);
  spec.dynamic_shared_bytes = static_cast<size_t>(t.shared_rows * row_bytes);
  spec.shared_cache_bytes = column_static_shared_bytes(t, accumulators) + spec.dynamic_shared_bytes;
  return true;
}

double column_rows_read_again(const ColumnTiling& t) {
  const int64_t kept = t.shared_rows * t.rd_threads;
  if (t.chunk <= 0 || kept >= t.chunk) return 0.0;
  return static_cast<double>(t.chunk - kept) / static_cast<double>(t.chunk);
}

int resident_blocks_per_sm(const ArchParams& arch, int block_threads, const ColumnTileThread& thread) {
  const Occupancy occ = occupancy(arch, std::max(1, block_threads), column_tile_registers(thread), 0);
  return std::max(1, occ.blocks_per_sm);
}

bool reduced_axes_in_one_run(const std::vector<int64_t>& reduced_axes) {
  return reduced_axes.empty() ||
         reduced_axes.back() - reduced_axes.front() + 1 == static_cast<int64_t>(reduced_axes.size());
}

int64_t column_unraveled_rows(const ColumnTiling& t, const std::vector<int64_t>& reduced_axes,
                              bool keeps_rows) {
  if (reduced_axes_in_one_run(reduced_axes)) return 0;
  return keeps_rows ? std::max<int64_t>(1, t.rows_per_thread) : 2;
}

namespace {

// The tiling with `lanes` threads along the inner axis of V-element groups.
ColumnTiling tiling_with_lanes(const ColumnShape& shape, const ArchParams& arch, int vector, int lanes) {
  ColumnTiling t;
  t.vector = vector;
  t.lanes = lanes;
  t.rd_threads = static_cast<int>(
      std::min<int64_t>(shape.block_threads / t.lanes, pow2_ceil(std::max<int64_t>(1, shape.reduced))));
  t.block_threads = t.lanes * t.rd_threads;
  t.inner_tiles = ceil_div(shape.inner, t.tile_elements());
  t.tiles = shape.outer * t.inner_tiles;

  // The split for a wave of `wave` blocks.
  auto split_for = [&](int64_t wave) {
    int64_t split = 1;
    if (t.tiles < wave) {
      // As many work items as one wave holds, not more: 1088 items on 1056 resident blocks
      // would give 32 blocks a second item and double the kernel's time.
      split = wave / t.tiles;
      // Every thread of a chunk gets at least two rows of the reduced axis.
      split = std::min<int64_t>(split, std::max<int64_t>(1, shape.reduced / (2 * t.rd_threads)));
      // The partials, written once and read once, within their share of the input bytes. A
      // tile's passes meet as a group whose partials are scored by the cost model instead.
      if (shape.passes > 1) return split;
      const double per_split = 2.0 * static_cast<double>(t.tiles) * static_cast<double>(t.tile_elements()) *
                               static_cast<double>(std::max<size_t>(1, shape.accumulator_bytes));
      const double by_traffic = kPartialTrafficShare * static_cast<double>(shape.input_bytes) / per_split;
      split = std::min<int64_t>(split, std::max<int64_t>(1, static_cast<int64_t>(by_traffic)));
    }
    if (shape.cached_values > 0) {
      // Kept in registers across the passes: chunks short enough that a thread's rows fit.
      const int64_t rows_kept =
          std::max<int64_t>(1, shape.cache_slots / (static_cast<int64_t>(shape.cached_values) * t.vector));
      split = std::max(split, ceil_div(std::max<int64_t>(1, shape.reduced), rows_kept * t.rd_threads));
    }
    return split;
  };
  // Registers (the rows a thread walks, the slots it keeps across passes) lower the
  // occupancy, which sets the wave and so the split and the rows: a few rounds until the
  // estimate no longer changes.
  int64_t slots = 0;
  int64_t wave = 1;
  auto thread = [&] {
    ColumnTileThread h;
    h.reductions = shape.reductions;
    h.element_loads = shape.element_loads;
    h.cache_slots = slots;
    h.passes = shape.passes;
    h.rows_per_thread = t.rows_per_thread;
    h.vector = t.vector;
    h.element_stores = vector_store_count(shape.element_store_sizes, t.vector);
    h.unraveled_rows = column_unraveled_rows(t, shape.reduced_axes, shape.cached_values > 0);
    h.online_sums = shape.online_sums;
    return h;
  };
  int registers = -1;
  for (int round = 0; round < 4; ++round) {
    const int now = column_tile_registers(thread());
    if (now == registers) break;
    registers = now;
    t.blocks_per_sm = resident_blocks_per_sm(arch, t.block_threads, thread());
    wave = static_cast<int64_t>(arch.sm_count) * t.blocks_per_sm;
    t.chunk = ceil_div(std::max<int64_t>(1, shape.reduced), split_for(wave));
    t.split = ceil_div(std::max<int64_t>(1, shape.reduced), t.chunk);  // no empty chunk
    t.rows_per_thread = ceil_div(t.chunk, t.rd_threads);
    slots = shape.cached_values > 0 ? t.rows_per_thread * t.vector * shape.cached_values : 0;
  }
  t.blocks_per_sm = resident_blocks_per_sm(arch, t.block_threads, thread());
  wave = static_cast<int64_t>(arch.sm_count) * t.blocks_per_sm;
  t.passes = shape.passes;
  t.combine = shape.passes > 1 ? ColumnCombine::kGroupRelease : ColumnCombine::kLastBlock;
  if (t.split > 1) {
    t.partial_bytes = static_cast<uint64_t>(t.split) * static_cast<uint64_t>(t.tiles) *
                      static_cast<uint64_t>(t.tile_elements()) * shape.accumulator_bytes;
    t.counter_bytes = static_cast<uint64_t>(t.tiles) * 4;
  }
  t.grid_blocks = std::max<int64_t>(1, std::min<int64_t>(t.tiles * t.split, std::max<int64_t>(wave, 1)));
  if (t.releases_groups()) {
    // As many whole groups as one wave holds (at least one: fit_column_tile rejects a group
    // larger than the wave), no more than the tiles.
    t.groups = std::max<int64_t>(1, std::min<int64_t>(t.tiles, wave / t.split));
    t.grid_blocks = t.groups * t.split;
    t.partial_bytes = group_release_slots(t) * shape.accumulator_bytes;
    t.counter_bytes = static_cast<uint64_t>(t.groups) * 4;
  }
  return t;
}

}  // namespace

ColumnTiling choose_column_tiling(const ColumnShape& shape, const ArchParams& arch) {
  // Vector width: 16 bytes of the widest element, only when it divides the inner extent (so
  // every thread's first element is aligned like the row it belongs to).
  int v = shape.widest_element_bytes == 0 ? 1 : static_cast<int>(16 / shape.widest_element_bytes);
  v = std::max(1, std::min(v, shape.max_vector));
  while (v > 1 && (shape.inner % v != 0 || shape.inner < v)) v /= 2;
  const int64_t groups = ceil_div(shape.inner, v);  // thread positions along the inner axis
  // A warp's worth of lanes first; narrower tiles (more of them, so fewer splits and less
  // partial traffic for the same grid) while each row of a tile still spans a 128-byte line,
  // when they give a clearly larger grid: the partials' share bounds the split, not the tiles.
  const int64_t row_bytes =
      static_cast<int64_t>(v) * static_cast<int64_t>(std::max<size_t>(1, shape.widest_element_bytes));
  const int widest_lanes = static_cast<int>(std::min<int64_t>(32, pow2_ceil(groups)));
  ColumnTiling best = tiling_with_lanes(shape, arch, v, widest_lanes);
  for (int lanes = widest_lanes / 2; lanes >= 1 && lanes * row_bytes >= 128; lanes /= 2) {
    const ColumnTiling t = tiling_with_lanes(shape, arch, v, lanes);
    if (static_cast<double>(t.grid_blocks) > 1.1 * static_cast<double>(best.grid_blocks)) best = t;
  }
  return best;
}

}  // namespace fstitch
