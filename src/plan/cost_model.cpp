#include "plan/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "plan/gelu_evaluation.hpp"
#include "plan/launch_grid.hpp"
#include "plan/op_class.hpp"
#include "plan/row_exchange.hpp"
#include "plan/row_prefetch.hpp"

namespace fstitch {
namespace {

bool wide(DType t) {
  return t == DType::kF64 || t == DType::kI64;
}

// A 16-bit value the kernel computes in f32 and rounds (an arithmetic op or a cast from a
// 32-bit or narrower type): the generated code keeps the f32 beside it and a store
// converts that (codegen/emit.cpp define_rounded).
bool rounded_from_f32(const Graph& g, const KernelSpec& s, ValueId v) {
  const Node& n = g.node(v);
  if ((n.dtype != DType::kBF16 && n.dtype != DType::kF16) || !s.is_member(v)) return false;
  if (s.gelu == GeluEvaluation::kBf16Table && is_bf16_gelu(g, v)) return false;  // looked up
  const OpFamily f = op_family(n.op);
  if (f == OpFamily::kCast) return g.node(n.operands[0]).dtype != DType::kF64;
  return f == OpFamily::kUnary || f == OpFamily::kBinary;
}

bool used_in_kernel(const Graph& g, const KernelSpec& s, ValueId v) {
  auto uses = [&](ValueId u) {
    const std::vector<ValueId>& ops = g.node(u).operands;
    return std::find(ops.begin(), ops.end(), v) != ops.end();
  };
  return std::any_of(s.members.begin(), s.members.end(), uses) ||
         std::any_of(s.inlined.begin(), s.inlined.end(), uses);
}

// Thread-instructions of one element of an operation in the generated code (f32 unless the
// dtype is wider): libdevice's correctly rounded sequences, read off compiled SASS. A
// 16-bit result is rounded to its dtype after the operation, unless only stores use it:
// they convert its f32 (the rounded float is dead code).
double op_instructions(const Graph& g, const KernelSpec& s, ValueId v) {
  const Node& n = g.node(v);
  // fst_gelu_bf16 (codegen/gelu_lookup.cpp): the index, a shared load and the rules outside
  // the table, its result already bf16. 22 per element in the SASS of bf16 GELU(x + bias)
  // [8192, 4096] on sm_90, against the same kernel without the GELU.
  if (s.gelu == GeluEvaluation::kBf16Table && is_bf16_gelu(g, v)) return 22;
  // fst_gelu_f32_for_16bit (codegen/prelude.cpp) on sm_90: 18.4 per element in the SASS of
  // bf16 GELU(x + bias) [8192, 4096], against the same kernel without the GELU.
  if (std::binary_search(s.gelu_to_16bit.begin(), s.gelu_to_16bit.end(), v)) return 18;
  double k = 1;
  switch (n.op) {
    case OpKind::kDiv:
      k = is_float(n.dtype) ? 9 : 20;
      break;
    case OpKind::kReciprocal:
      k = 7;
      break;
    case OpKind::kSqrt:
      k = 8;
      break;
    case OpKind::kRsqrt:
      k = 6;
      break;
    case OpKind::kExp:
      k = 8;
      break;
    case OpKind::kLog:
      k = 12;
      break;
    case OpKind::kTanh:
      k = 14;
      break;
    case OpKind::kSigmoid:
      k = 18;
      break;
    case OpKind::kSilu:
      k = 19;
      break;
    case OpKind::kErf:
      k = 22;
      break;
    case OpKind::kGelu:
      k = 42;  // fst_gelu_f32 (codegen/prelude.cpp) on sm_90; 0.5 x erfcf(-x / sqrt 2) took 51
      break;
    case OpKind::kGeluTanh:
      k = 21;
      break;
    case OpKind::kSin:
    case OpKind::kCos:
      k = 22;
      break;
    case OpKind::kPow:
      k = 40;
      break;
    case OpKind::kSign:
      k = 2;
      break;
    case OpKind::kBroadcast:
    case OpKind::kReshape:
    case OpKind::kPermute:
      k = 0;  // index arithmetic only, counted with the loads
      break;
    case OpKind::kSlice:
    case OpKind::kConcat:
    case OpKind::kPad:
    case OpKind::kTake:
      k = 4;  // coordinates and a select
      break;
    default:
      break;
  }
  if (wide(n.dtype) && is_float(n.dtype)) k *= 4;  // f64: half-rate FMA, software transcendentals
  if (rounded_from_f32(g, s, v) && !used_in_kernel(g, s, v)) return k;
  // Only what the kernel computes is rounded: a broadcast, view or select passes its operand's
  // bits on, and a constant is a literal already of its dtype.
  const OpFamily family = op_family(n.op);
  if (family != OpFamily::kUnary && family != OpFamily::kBinary && family != OpFamily::kCast &&
      family != OpFamily::kIota)
    return k;
  if (n.dtype == DType::kF16) k += 2;   // cvt to f16 and back
  // cvt.rn.bf16.f32, the NaN rule and back; an add, subtract or multiply needs no NaN rule
  // (fst_round_bf16_arith), and its cvt leaves the float's bits in place.
  if (n.dtype == DType::kBF16) k += result_has_canonical_nan(n.op) ? 1 : 4;
  return k;
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

double sm_balance(int64_t units, int64_t grid, int sm_count, int blocks_per_sm) {
  units = std::max<int64_t>(1, units);
  grid = std::max<int64_t>(1, grid);
  const int64_t sms = std::max(1, sm_count);
  const int64_t capacity = sms * std::max(1, blocks_per_sm);
  if (grid > capacity) {
    // Later rounds take the blocks as SMs free up: the busiest block's rounds bound it.
    const double ideal = static_cast<double>(units) / static_cast<double>(capacity);
    return std::min(1.0, ideal / static_cast<double>(ceil_div(grid, capacity) * ceil_div(units, grid)));
  }
  // One wave, blocks dealt to the SMs in turn: SM 0 holds the most blocks, and the most of
  // the first units % grid blocks, which take one unit more than the rest.
  const int64_t used = std::min(sms, grid);
  const int64_t busiest = ceil_div(grid, sms) * (units / grid) + ceil_div(units % grid, sms);
  return std::min(1.0, static_cast<double>(units) / static_cast<double>(used) / static_cast<double>(busiest));
}

const char* occupancy_limit_name(OccupancyLimit limit) {
  switch (limit) {
    case OccupancyLimit::kThreads:
      return "threads";
    case OccupancyLimit::kRegisters:
      return "registers";
    case OccupancyLimit::kSharedMemory:
      return "shared memory";
    case OccupancyLimit::kBlocks:
      return "blocks";
  }
  return "?";
}

Occupancy occupancy(const ArchParams& a, int block_threads, int registers, size_t shared_bytes) {
  Occupancy o;
  o.block_threads = block_threads;
  if (block_threads <= 0) return o;
  const int warps = (block_threads + 31) / 32;
  const int per_warp = ((std::max(registers, 1) * 32 + a.register_granularity - 1) / a.register_granularity) *
                       a.register_granularity;
  const int by_threads = a.max_threads_per_sm / block_threads;
  const int by_registers =
      registers > a.max_registers_per_thread ? 0 : (a.registers_per_sm / per_warp) / warps;
  const size_t block_shared = shared_bytes + static_cast<size_t>(a.shared_reserved_per_block);
  const int by_shared = shared_bytes > static_cast<size_t>(a.max_shared_bytes_per_block)
                            ? 0
                            : static_cast<int>(static_cast<size_t>(a.shared_bytes_per_sm) / block_shared);
  o.blocks_per_sm = by_threads;
  o.limit = OccupancyLimit::kThreads;
  auto bound = [&](int b, OccupancyLimit why) {
    if (b < o.blocks_per_sm) {
      o.blocks_per_sm = b;
      o.limit = why;
    }
  };
  bound(by_registers, OccupancyLimit::kRegisters);
  bound(by_shared, OccupancyLimit::kSharedMemory);
  bound(a.max_blocks_per_sm, OccupancyLimit::kBlocks);
  o.blocks_per_sm = std::max(o.blocks_per_sm, 0);
  return o;
}

int element_shaped_loads(const Graph& g, const KernelSpec& s) {
  int loads = 0;
  for (ValueId v : s.loaded) loads += element_count(g.node(v).dims) == element_count(s.domain) ? 1 : 0;
  return loads;
}

int vector_store_count(const std::vector<size_t>& sizes, int V) {
  int stores = 0;
  for (size_t size : sizes) stores += stores_as_vector(V, size) ? 1 : 0;
  return stores;
}

int vector_element_stores(const Graph& g, const KernelSpec& s) {
  std::vector<size_t> sizes;
  for (ValueId v : s.stored) {
    if (s.role(v) == ValueRole::kElement) sizes.push_back(dtype_size(g.node(v).dtype));
  }
  return vector_store_count(sizes, s.column.vector);
}

int column_tile_registers(const ColumnTileThread& t) {
  // An unraveled row base: its coordinates and their products, two registers a row live at
  // once, beside the divisors' constants (ptxas spilled a softmax over axes 0 and 2 of
  // [64, 128, 512, 4] keeping 16 rows a thread without them).
  const int64_t unraveled = t.unraveled_rows > 0 ? 6 + 2 * t.unraveled_rows : 0;
  // The base (32-bit indices, pointers, the loop), a 16-byte vector of each element input
  // per reduced row in flight, two deep (the loop is unrolled twice), and two per
  // accumulator. The kernel's minimum-blocks hint holds ptxas to the occupancy this allows:
  // one input and one reduction fit the 32 registers of eight 256-thread blocks per SM,
  // f32, bf16 and f16, two- and three-dimensional, without spills (CUDA 13, sm_80 and sm_90).
  const int64_t base = 16 + 8 * std::max(1, t.element_loads) + 2 * std::max(1, t.reductions);
  const int64_t V = std::max(1, t.vector);
  int64_t regs = 0;
  if (t.passes <= 1) {
    // A row's lanes of each vector-stored output wait for the store together (16-bit ones as
    // their f32, converted two at a time): V more registers each; without them ptxas spilled
    // a bf16 tile with one stored product at the 40 registers of six 256-thread blocks.
    regs = base + (V > 1 ? V * t.element_stores : 0);
  } else if (t.cache_slots <= 0) {
    // Several passes: each lane's totals and row values live across them, and the group's
    // indices. Fitted to ptxas (CUDA 13, sm_90) on softmax, normalization and centering down
    // columns of [4096, 1024], [65536, 512], [4096, 256], [33, 1000] and the middle axis of
    // [64, 96, 32] and [1, 20000, 12], f32 and bf16: 32 to 58 registers re-read, 38 to 80
    // with 4 to 32 slots kept (each slot about one register: the kept rows' loop unrolls).
    regs = base + V * (std::max(1, t.reductions) + 2);
    // A thread walking several rows of its chunk: ptxas unrolls the walk and keeps a few
    // rows' vectors in flight. 46 to 63 registers against 38 to 50 estimated without this
    // (centering, normalization and softmax down [4096, 1024] and [65536, 512], f32 and
    // bf16, 5 to 76 rows a thread, sm_80 and sm_90), 92 and 96 against 76 for a bf16
    // softmax with an online sum down [4096, 1024].
    if (t.rows_per_thread > 1) regs += 20;
  } else {
    regs = base + 16 + t.cache_slots + (V > 4 ? 8 : 0);
  }
  // An online sum's running sum and its rescale live beside the max's lanes in the max's
  // pass: two registers a lane (ptxas spilled 28 bytes of a bf16 softmax down the columns of
  // [4096, 1024] keeping 64 slots in 512-thread blocks, estimated 116 without them, at its
  // cap of 128).
  if (t.passes > 1) regs += 2 * V * t.online_sums;
  return static_cast<int>(std::min<int64_t>(255, regs + unraveled));
}

int estimate_registers(const Graph& g, const KernelSpec& s) {
  // Fitted to ptxas (sm_90, CUDA 13) on the canonical row graphs at LLM and ViT shapes, and
  // kept above every kernel measured: the grid is sized from it.
  const int V = std::max(1, s.vector_width);
  double regs = 36;  // indices, pointers, loop state, the row's combine
  if (s.schedule == ScheduleKind::kColumnTile) {
    int reductions = 0;
    for (ValueId v : s.members) reductions += op_family(g.node(v).op) == OpFamily::kReduce ? 1 : 0;
    const int64_t slots = keeps_values_in_registers(s) ? static_cast<int64_t>(s.cached.size()) *
                                                             s.column.rows_per_thread * s.column.vector
                                                       : 0;
    ColumnTileThread thread;
    thread.reductions = reductions;
    thread.element_loads = element_shaped_loads(g, s);
    thread.cache_slots = slots;
    thread.passes = s.column.passes;
    thread.rows_per_thread = s.column.rows_per_thread;
    thread.vector = s.column.vector;
    thread.element_stores = vector_element_stores(g, s);
    thread.unraveled_rows = column_unraveled_rows(s.column, s.reduced_axes, slots > 0);
    thread.online_sums = static_cast<int>(s.online_sums.size());
    return column_tile_registers(thread);
  }
  if (keeps_values_in_registers(s)) {
    // A cached slot takes about three registers for a 32-bit value (the slot, the load
    // beside it, the temporaries of its uses), two and a half when loaded as 16 bits.
    regs = 32;
    for (ValueId v : s.cached) {
      const DType t = g.node(v).dtype;
      const double per_slot = wide(t) ? 6 : dtype_size(t) <= 2 ? 2.5 : 3;
      regs += per_slot * static_cast<double>(s.elems_per_thread);
    }
  } else if (s.schedule == ScheduleKind::kSplitRow) {
    // A slice's passes are loops bounded at run time (its slice, its row's shift): ptxas
    // keeps one vector of each in flight, not the slice. Fitted to ptxas (CUDA 13, sm_90) on
    // LayerNorm and log-softmax split rows of [64, 50257], [4, 32000] and [1, 100000] at 256
    // and 512 threads, 4 to 16 blocks per row, shared and re-read: 31 to 40 registers for
    // 16-bit rows, 32 to 51 for f32 (the f32 LayerNorm highest).
    size_t widest = 0;
    for (ValueId v : s.loaded) {
      if (element_count(g.node(v).dims) == element_count(s.domain))
        widest = std::max(widest, dtype_size(g.node(v).dtype));
    }
    int reductions = 0;
    for (ValueId v : s.members) reductions += op_family(g.node(v).op) == OpFamily::kReduce ? 1 : 0;
    return 36 + 2 * reductions + (widest >= 4 ? 11 : 0);
  } else {
    // Vectors a thread issues before it uses them, beyond the four the base covers, each
    // element-shaped load taking about three registers per vector. The pass is a strided
    // loop: ptxas unrolls a few steps, not a long row's hundreds (a 50257-wide row of 256
    // threads compiles to 30-32 registers, f32 or bf16, in shared memory or re-read), so
    // at most eight vectors count.
    const int element_loads = element_shaped_loads(g, s);
    const double vectors = std::min(8.0, std::ceil(static_cast<double>(s.elems_per_thread) / V));
    regs += 3.0 * std::max(0.0, vectors - 4) * std::max(1, element_loads);
  }
  for (ValueId v : s.members) {
    if (op_family(g.node(v).op) == OpFamily::kReduce) regs += wide(g.node(v).dtype) ? 4 : 2;
  }
  // The next row's vectors stay live across the whole row.
  if (s.prefetch == RowPrefetch::kNextRow) regs += row_prefetch_registers(g, s);
  regs += 10;  // margin
  return std::min(255, static_cast<int>(std::ceil(regs)));
}

size_t kernel_shared_bytes(const Graph& g, const KernelSpec& s) {
  const size_t table = s.gelu == GeluEvaluation::kBf16Table ? bf16_gelu_table_bytes() : 0;
  if (s.cache == RowCache::kShared) return s.shared_cache_bytes + table;
  // Beside column totals, dynamic shared memory holds a second stage's crossing rows.
  if (s.threads_per_row <= 32) return table + s.column_total_shared_bytes + s.dynamic_shared_bytes;
  return table + s.column_total_shared_bytes + s.dynamic_shared_bytes + row_exchange_scratch_bytes(g, s);
}

double bytes_in_flight_per_thread(const Graph& g, const KernelSpec& s) {
  double element_bytes = 0;  // one element of every value read per domain element
  const int64_t n = element_count(s.domain);
  for (ValueId v : s.loaded) {
    if (element_count(g.node(v).dims) == n) element_bytes += static_cast<double>(dtype_size(g.node(v).dtype));
  }
  if (element_bytes == 0) element_bytes = 4;  // reads of smaller operands only
  const int V = std::max(1, s.vector_width);
  if (s.schedule == ScheduleKind::kElementwise) return element_bytes * V;
  // A column tile's thread walks its chunk of reduced rows: independent vector loads, which
  // the compiler pipelines about two deep.
  // Kept in registers across passes, the thread's rows are loaded before the first is used
  // (the loop over them unrolls fully).
  if (s.schedule == ScheduleKind::kColumnTile) {
    const bool kept = keeps_values_in_registers(s);
    return element_bytes * V *
           (kept ? static_cast<double>(std::max<int64_t>(1, s.column.rows_per_thread)) : 2.0);
  }
  // Shifted rows: the head and tail, one element at a time, are not in flight with the
  // vectors.
  const double cols = static_cast<double>(std::max<int64_t>(1, s.cols));
  const double vector_share =
      s.row_alignment == RowVectorAlignment::kShifted ? std::max(0.0, cols - (V - 1)) / cols : 1.0;
  if (keeps_values_in_registers(s) && (V > 1 || s.threads_per_row == 1)) {
    // The whole row share is loaded before it is used: vector code issues it up front, and a
    // thread that owns its row has no per-element guard to serialize the unrolled loads.
    // Whole vectors give some threads a step more than others: the row's threads have no
    // more in flight than the row holds, a scalar share each.
    if (s.row_alignment == RowVectorAlignment::kShifted)
      return element_bytes * static_cast<double>(s.elems_per_thread) * vector_share;
    const int64_t T = std::max(1, s.threads_per_row);
    const int64_t share = s.cols / T + (s.cols % T != 0 ? 1 : 0);
    return element_bytes * static_cast<double>(std::min(s.elems_per_thread, share));
  }
  // One vector per loop step. A scalar row loop strides by the row's threads with one bound
  // check per step: ptxas unrolls it and issues four or more loads before their first use (16
  // in the SASS of the bf16 [64, 50257] split row); four are counted, and no more than the
  // thread's elements.
  if (V > 1) return element_bytes * V * vector_share;
  return element_bytes * std::min(4.0, std::max(1.0, static_cast<double>(s.elems_per_thread)));
}

int unraveled_axis_runs(const KernelSpec& s) {
  int runs = 0, last_kind = -1;
  for (size_t i = 0; i < s.domain.size(); ++i) {
    if (s.domain[i] == 1) continue;
    const int kind =
        std::binary_search(s.reduced_axes.begin(), s.reduced_axes.end(), static_cast<int64_t>(i)) ? 1 : 0;
    if (kind != last_kind) ++runs;
    last_kind = kind;
  }
  return runs;
}

double instructions_per_element(const Graph& g, const KernelSpec& s) {
  const double domain = static_cast<double>(std::max<int64_t>(1, element_count(s.domain)));
  const int V = std::max(1, s.vector_width);
  double k = 0;
  for (ValueId v : s.members) {
    const Node& n = g.node(v);
    if (op_family(n.op) == OpFamily::kReduce) {
      // One combine per element; a column total's running sum is in shared memory.
      k += (wide(n.dtype) ? 2 : 1) + (s.is_column_total(v) ? 2 : 0);
      continue;
    }
    k += op_instructions(g, s, v) * static_cast<double>(element_count(n.dims)) / domain;
  }
  for (ValueId v : s.inlined) k += op_instructions(g, s, v);  // recomputed at each element
  // Rows that are not contiguous: each element's (or vector's) flat index unraveled from the
  // row and its column (codegen's element_index_of), about four instructions per run of
  // adjacent kept or reduced axes (a division by a constant, the remainder, the multiply-add).
  if (!s.reduced_axes.empty() && !s.contiguous_rows && s.schedule != ScheduleKind::kColumnTile)
    k += 4.0 * static_cast<double>(unraveled_axis_runs(s)) / std::max(1, s.vector_width);
  // A column tile over several runs of reduced axes (the innermost kept): each reduced row's
  // base unravels likewise, once per V elements.
  if (s.schedule == ScheduleKind::kColumnTile && !reduced_axes_in_one_run(s.reduced_axes))
    k += 4.0 * static_cast<double>(unraveled_axis_runs(s)) / std::max(1, s.vector_width);
  // An online sum's step (codegen/column_passes_body.inc): exp(a - max) against the running
  // max, its guard, the max's comparison and branch (the rescale is rare), besides the
  // exp(a - max) the kernel computes again where it uses it.
  for (const OnlineSum& o : s.online_sums)
    k += op_instructions(g, s, o.exp) + op_instructions(g, s, o.sub) + 4;
  if (s.gelu == GeluEvaluation::kBf16Table) {
    // Each block copies the table into shared memory: a 16-byte load and store, the loop.
    const double vectors = static_cast<double>(bf16_gelu_table_bytes() / 16);
    k += vectors * 4.0 * static_cast<double>(std::max<int64_t>(1, s.grid_blocks)) / domain;
  }
  // Address arithmetic, the load or store and the conversion from or to a 16-bit type.
  auto conversion = [&](ValueId v) {
    const DType t = g.node(v).dtype;
    return t == DType::kF16 || t == DType::kBF16 ? 1.0 : 0.0;
  };
  auto access = [&](ValueId v) {
    return static_cast<double>(element_count(g.node(v).dims)) / domain * (3.0 / V + conversion(v));
  };
  // A smaller operand (gamma, a bias) is read at every element, in vectors where its lanes
  // are consecutive (a row kernel's columns; an elementwise step whose lanes share the
  // operand's row), else one load each; a row kernel reads a row-shaped one once per row.
  auto broadcast_load = [&](ValueId v) {
    const Node& n = g.node(v);
    const int64_t count = element_count(n.dims);
    if (count >= element_count(s.domain) || (!s.reduced_axes.empty() && count == s.rows)) return access(v);
    // Shifted rows read them one element at a time: a row's vectors do not line up with
    // the operand's.
    const bool vectors = s.schedule == ScheduleKind::kElementwise
                             ? broadcast_lanes(s.domain, n.dims, V) != BroadcastLanes::kScattered
                             : s.row_alignment != RowVectorAlignment::kShifted;
    return (vectors ? 3.0 / V : 3.0) + conversion(v);
  };
  for (ValueId v : s.loaded) k += broadcast_load(v);
  // A stored bf16 value already rounded takes its bits with a NaN rule; one rounded from
  // its f32 at the store converts pairs of lanes with one cvt and tests them for NaNs: the
  // access's one conversion.
  for (ValueId v : s.stored)
    k += access(v) + (g.node(v).dtype == DType::kBF16 && !rounded_from_f32(g, s, v) ? 3 : 0);
  if (s.row_alignment == RowVectorAlignment::kShifted) {
    // About V - 1 elements of each row pass (its head and tail) move one at a time.
    double element_accesses = 0;
    for (ValueId v : s.loaded)
      element_accesses += element_count(g.node(v).dims) == element_count(s.domain) ? 1 : 0;
    for (ValueId v : s.stored) element_accesses += stored_per_element(s.role(v)) ? 1 : 0;
    k += (V - 1.0) / static_cast<double>(std::max<int64_t>(1, s.cols)) *
         (element_accesses * (3.0 - 3.0 / V) + 2.0);
  }
  k += 2.0 / V;  // the loop
  // Combining a row across its threads: shuffles, then shared memory across warps.
  if (!s.reduced_axes.empty() && s.threads_per_row > 1 && s.schedule != ScheduleKind::kColumnTile) {
    int reductions = 0;
    for (ValueId v : s.members)
      reductions += op_family(g.node(v).op) == OpFamily::kReduce && !s.is_column_total(v) ? 1 : 0;
    const double T = s.threads_per_row;
    const double steps = std::log2(std::min(32.0, T));
    const double per_row = T * reductions * (3 * steps + (T > 32 ? 4 + T / 32 : 0));
    k += per_row / static_cast<double>(std::max<int64_t>(1, s.cols));
  }
  return k;
}

double code_instructions(const Graph& g, const KernelSpec& s) {
  double body = 0;
  for (ValueId v : s.members)
    body += op_family(g.node(v).op) == OpFamily::kReduce ? 2 : op_instructions(g, s, v);
  for (ValueId v : s.inlined) body += op_instructions(g, s, v);
  const int64_t lanes = std::max(1, s.vector_width);
  double copies = static_cast<double>(lanes);
  if (s.schedule == ScheduleKind::kColumnTile && s.column.passes > 1) {
    // Each pass has its loop; kept in registers, a thread's rows unroll fully, else twice.
    const bool kept = keeps_values_in_registers(s);
    copies *= static_cast<double>(s.column.passes) *
              static_cast<double>(kept ? std::max<int64_t>(1, s.column.rows_per_thread) : 2);
  }
  if (!s.reduced_axes.empty() && s.schedule != ScheduleKind::kColumnTile) {
    // A register row cache is indexed by the step, so its loops unroll fully.
    const int64_t steps =
        keeps_values_in_registers(s) ? ceil_div(std::max<int64_t>(1, s.elems_per_thread), lanes) : 1;
    copies *= static_cast<double>(s.phases + 1) * static_cast<double>(steps);
    // Walks after grid barriers that read the rows again compute the earlier walks' values
    // again: code of their own.
    if (s.stages == RowStages::kRowsAfterTotals && s.crossing == BarrierCrossing::kReadAgain)
      copies *= static_cast<double>(s.row_walks);
  }
  return body * copies;
}

int64_t work_units(const Graph& g, const KernelSpec& s) {
  (void)g;
  if (s.schedule == ScheduleKind::kColumnTile) return std::max<int64_t>(1, s.column.tiles * s.column.split);
  if (s.schedule == ScheduleKind::kElementwise) {
    const int64_t vectors =
        ceil_div(std::max<int64_t>(1, element_count(s.domain)), std::max(1, s.vector_width));
    return std::max<int64_t>(1, ceil_div(vectors, s.block_threads));
  }
  if (s.schedule == ScheduleKind::kSplitRow) return std::max<int64_t>(1, s.rows * s.split.blocks);
  const int64_t rows_per_block = std::max(1, s.block_threads / std::max(1, s.threads_per_row));
  return std::max<int64_t>(1, ceil_div(s.rows, rows_per_block));
}

void size_grid(const PlanInputs& in, KernelSpec& s) {
  const Graph& g = *in.graph;
  s.registers_estimate = estimate_registers(g, s);
  const Occupancy occ = occupancy(in.arch, s.block_threads, s.registers_estimate, kernel_shared_bytes(g, s));
  s.planned_blocks_per_sm = std::max(1, occ.blocks_per_sm);
  // A split row's grid is whole groups (grid_multiple G, set by fit_split_row), all resident.
  s.work_units = work_units(g, s);
  s.grid_blocks = grid_for_occupancy(s, s.planned_blocks_per_sm, in.arch.sm_count);
}

// The estimate of `s` with `registers` per thread and `occ` resident blocks per SM.
static CostBreakdown estimate_at(const ArchParams& a, const Graph& g, const KernelSpec& s, int registers,
                                 const Occupancy& occ) {
  CostBreakdown c;
  c.registers = registers;
  c.occ = occ;
  if (c.occ.blocks_per_sm == 0) {
    // Not one block fits an SM: the kernel could not launch (or would spill to fit).
    c.total_seconds = std::numeric_limits<double>::infinity();
    return c;
  }
  const int64_t per_sm = std::max(1, c.occ.blocks_per_sm);
  const int64_t capacity = static_cast<int64_t>(a.sm_count) * per_sm;
  const int64_t grid = std::max<int64_t>(1, s.grid_blocks);
  c.resident_blocks = std::min(grid, capacity);
  c.waves = static_cast<double>(grid) / static_cast<double>(capacity);
  // Grid-stride loops: block b takes units b, b + grid, ...; blocks beyond the device's
  // capacity run in later rounds. Balance = the mean SM's work / the busiest SM's.
  const int64_t units = work_units(g, s);
  c.balance = sm_balance(units, grid, a.sm_count, c.occ.blocks_per_sm);

  const double threads = static_cast<double>(c.resident_blocks) * s.block_threads;
  // Threads with work: one per row lane, or one per vector step of an elementwise domain.
  const double work_threads =
      s.schedule == ScheduleKind::kColumnTile ? static_cast<double>(units) * s.block_threads
      : s.schedule == ScheduleKind::kElementwise
          ? static_cast<double>(
                ceil_div(std::max<int64_t>(1, element_count(s.domain)), std::max(1, s.vector_width)))
      : s.schedule == ScheduleKind::kSplitRow ? static_cast<double>(units) * s.block_threads
                                              : static_cast<double>(s.rows) * std::max(1, s.threads_per_row);
  const double active_threads = std::min(threads, work_threads);
  const int64_t per_block = ceil_div(units, grid);
  // A row kernel whose blocks each take one row in a single wave runs its passes in
  // lockstep (below). Over several rows a thread has its loads in flight only for part of
  // each row (row_load_duty in plan/row_prefetch.hpp), unless it reads the next row ahead.
  // So does a column tile whose blocks pass over their chunk several times, each block one
  // chunk.
  const bool lockstep = !s.reduced_axes.empty() &&
                        (s.schedule != ScheduleKind::kColumnTile || s.column.passes > 1) && s.phases > 0 &&
                        per_block <= 1 && grid <= capacity;
  const double thread_in_flight =
      bytes_in_flight_per_thread(g, s) * (lockstep ? 1.0 : row_load_duty(a, g, s));
  c.bytes_in_flight = active_threads * thread_in_flight;
  // Loads stall their thread until the data arrives, so reads flow at most at bytes in
  // flight / latency (Little's law); stores retire without waiting and share the peak.
  const double peak = a.dram_bandwidth * a.copy_efficiency;
  c.bandwidth = std::max(1.0, std::min(peak, c.bytes_in_flight / a.memory_latency_seconds));
  const double bytes = static_cast<double>(s.bytes_read) + static_cast<double>(s.bytes_written);
  c.memory_seconds = std::max(bytes / peak, static_cast<double>(s.bytes_read) / c.bandwidth) / c.balance;
  // In lockstep (each block one row, or one slice of a split row, in a single wave) every
  // block reads and reduces its row before any block stores, so no store overlaps the
  // reads. Over several rows per block the blocks drift apart and one block's stores overlap
  // another's loads.
  if (lockstep) {
    c.memory_seconds =
        (static_cast<double>(s.bytes_read) / c.bandwidth + static_cast<double>(s.bytes_written) / peak) /
        c.balance;
  }
  // The busiest block's own path: once the SM's other blocks are done it reads alone, at its
  // own bytes in flight / latency. Past one wave the rounds already count it.
  const double block_work_threads =
      std::min<double>(s.block_threads, work_threads / static_cast<double>(grid));
  const double unit_share = static_cast<double>(per_block) / static_cast<double>(units);
  if (grid <= capacity) {
    const double block_bandwidth =
        std::max(1.0, block_work_threads * thread_in_flight / a.memory_latency_seconds);
    c.memory_seconds =
        std::max(c.memory_seconds, static_cast<double>(s.bytes_read) * unit_share / block_bandwidth);
  }

  const double sms = std::min<double>(
      a.sm_count, std::ceil(static_cast<double>(c.resident_blocks) / static_cast<double>(per_sm)));
  const double warps_per_sm = std::min(threads, active_threads) / std::max(1.0, sms) / 32;
  // A warp issues about a twentieth of an SM's lanes per clock on its own (dependent
  // instructions wait on each other); sixteen warps or more keep it at 80%.
  auto issue_of = [](double warps) { return std::max(0.05, std::min(0.8, 0.05 * warps)); };
  const double issue = issue_of(warps_per_sm);
  // A walk after a grid barrier that reads the rows again recomputes what the earlier ones
  // computed.
  const double row_loops =
      s.stages == RowStages::kRowsAfterTotals && s.crossing == BarrierCrossing::kReadAgain
          ? static_cast<double>(s.row_walks)
          : 1.0;
  const double instructions = row_loops * instructions_per_element(g, s) *
                              static_cast<double>(std::max<int64_t>(1, element_count(s.domain)));
  c.compute_seconds = instructions / (sms * a.lanes_issued_per_clock * a.clock_hz * issue) / c.balance;
  if (grid <= capacity) {
    const double block_issue = issue_of(std::ceil(block_work_threads / 32));
    c.compute_seconds = std::max(
        c.compute_seconds, instructions * unit_share / (a.lanes_issued_per_clock * a.clock_hz * block_issue));
  }

  if (s.threads_per_row > 32 && s.schedule != ScheduleKind::kColumnTile) {
    // The row's exchanges and the barrier that may end it (plan/row_exchange.hpp); other
    // blocks on the SM hide part of them.
    const int barriers = row_barriers(g, s);
    const double rows_per_sm = static_cast<double>(s.rows) / static_cast<double>(a.sm_count);
    c.barrier_seconds =
        row_loops * rows_per_sm * barriers * a.block_barrier_seconds / static_cast<double>(per_sm);
  }
  if (s.schedule == ScheduleKind::kSplitRow) {
    // A group meets once per pass over each of its rows; all groups wait at the same time.
    // A group larger than the device holds at once could never meet.
    const int64_t groups = std::max<int64_t>(1, grid / std::max(1, s.split.blocks));
    if (grid > capacity) {
      c.total_seconds = std::numeric_limits<double>::infinity();
      return c;
    }
    const double barrier =
        s.split.residency == GroupResidency::kCluster ? a.cluster_barrier_seconds : a.group_barrier_seconds;
    c.barrier_seconds += static_cast<double>(ceil_div(s.rows, groups)) * std::max(1, s.phases) * barrier;
  }
  if (s.schedule == ScheduleKind::kColumnTile && s.column.releases_groups()) {
    // A tile's group meets once per reduction pass; the last block's combine and the
    // release that follows cost about another barrier. A group larger than the device holds
    // at once could never meet.
    if (grid > capacity) {
      c.total_seconds = std::numeric_limits<double>::infinity();
      return c;
    }
    const int64_t groups = std::max<int64_t>(1, grid / std::max<int64_t>(1, s.column.split));
    c.barrier_seconds += static_cast<double>(ceil_div(s.column.tiles, groups)) * std::max(1, s.phases) * 2.0 *
                         a.group_barrier_seconds;
  }
  if (!s.column_totals.empty()) {
    // The last block of a group sums the group's partials, then the last group's block sums
    // the groups': each alone, at one SM's share of the bandwidth (the partials are fresh in
    // L2, so twice the DRAM share), each after a fence and an atomic arrival (two of a group
    // barrier's three L2 round trips).
    const double sm_bandwidth = 2.0 * a.dram_bandwidth / std::max(1, a.sm_count);
    const double per_row = static_cast<double>(s.column_total_traffic_bytes) /
                           static_cast<double>(std::max<int64_t>(1, grid + s.column_total_groups));
    const double rows_read = static_cast<double>(s.column_total_group + s.column_total_groups);
    // Each walk's totals are combined in turn (per_row spans all of them).
    std::vector<int> walks_with_totals;
    for (ValueId v : s.column_totals) walks_with_totals.push_back(s.walk_of(v));
    std::sort(walks_with_totals.begin(), walks_with_totals.end());
    const auto combines = static_cast<double>(
        std::unique(walks_with_totals.begin(), walks_with_totals.end()) - walks_with_totals.begin());
    c.barrier_seconds +=
        rows_read * per_row / sm_bandwidth + combines * 2 * a.group_barrier_seconds * 2.0 / 3.0;
    if (s.stages == RowStages::kRowsAfterTotals) {
      // Every block waits for the totals at each grid barrier: a grid that is not resident
      // at once could never meet.
      if (grid > capacity) {
        c.total_seconds = std::numeric_limits<double>::infinity();
        return c;
      }
      c.barrier_seconds += static_cast<double>(s.row_walks - 1) * a.grid_barrier_seconds;
    }
  }
  c.launch_seconds = a.launch_overhead_seconds;
  // A split column tile's counters are cleared before the launch: a memset on the stream.
  if ((s.schedule == ScheduleKind::kColumnTile && s.column.split > 1) ||
      (s.schedule == ScheduleKind::kSplitRow && s.split.residency == GroupResidency::kCooperative) ||
      !s.column_totals.empty())
    c.launch_seconds += 0.5 * a.launch_overhead_seconds;
  // Memory and compute overlap, but not perfectly: a fifth of the smaller one shows.
  c.total_seconds = c.launch_seconds + std::max(c.memory_seconds, c.compute_seconds) +
                    0.2 * std::min(c.memory_seconds, c.compute_seconds) + c.barrier_seconds;
  return c;
}

CostBreakdown estimate_kernel(const ArchParams& a, const Graph& g, const KernelSpec& s) {
  const int registers = s.registers_estimate > 0 ? s.registers_estimate : estimate_registers(g, s);
  return estimate_at(a, g, s, registers, occupancy(a, s.block_threads, registers, kernel_shared_bytes(g, s)));
}

CostBreakdown estimate_kernel_at_occupancy(const ArchParams& a, const Graph& g, const KernelSpec& s,
                                           int blocks_per_sm) {
  const int registers = s.registers_estimate > 0 ? s.registers_estimate : estimate_registers(g, s);
  Occupancy occ = occupancy(a, s.block_threads, registers, kernel_shared_bytes(g, s));
  occ.blocks_per_sm = std::max(0, blocks_per_sm);
  return estimate_at(a, g, s, registers, occ);
}

double copy_seconds(const ArchParams& a, double bytes) {
  return a.launch_overhead_seconds + bytes / (a.dram_bandwidth * a.copy_efficiency);
}

}  // namespace fstitch
