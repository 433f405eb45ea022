// The cost model of one kernel on one device: occupancy from registers, shared memory and
// threads; waves and tails of the grid; bytes in flight against the bandwidth-latency
// product; instructions per element. The planner scores fusion candidates with it and the
// schedule of a kernel is the candidate it scores best.
#pragma once

#include <cstdint>
#include <string>

#include "plan/kernel_spec.hpp"

namespace fstitch {

// What bounds the resident blocks of an SM.
enum class OccupancyLimit : uint8_t { kThreads, kRegisters, kSharedMemory, kBlocks };
const char* occupancy_limit_name(OccupancyLimit limit);

struct Occupancy {
  int blocks_per_sm = 0;  // 0: the block does not fit an SM at all
  OccupancyLimit limit = OccupancyLimit::kThreads;
  int threads_per_sm() const { return blocks_per_sm * block_threads; }
  int block_threads = 0;
};

// Resident blocks per SM for blocks of `block_threads` threads using `registers` registers
// per thread and `shared_bytes` of shared memory per block.
Occupancy occupancy(const ArchParams& arch, int block_threads, int registers, size_t shared_bytes);

// Estimated registers per thread of a kernel's generated code, kept above what ptxas uses
// (the grid is sized from it: a low estimate would plan more resident blocks than fit).
int estimate_registers(const Graph& graph, const KernelSpec& spec);

// Loaded values of the kernel with one element per element of its domain (not broadcast).
int element_shaped_loads(const Graph& graph, const KernelSpec& spec);

// Registers of a column-tile thread (plan/schedule_columns.hpp sizes its grid with it).
int column_tile_registers(const ColumnTileThread& thread);

// Whether V lanes of elements of `element_bytes` are stored as one vector (4 to 16 bytes).
inline bool stores_as_vector(int V, size_t element_bytes) {
  const size_t bytes = static_cast<size_t>(V) * element_bytes;
  return V > 1 && bytes >= 4 && bytes <= 16;
}
// How many element outputs of `sizes` bytes a row of V lanes stores as one vector each;
// vector_element_stores counts those of column tile `s`.
int vector_store_count(const std::vector<size_t>& sizes, int V);
int vector_element_stores(const Graph& g, const KernelSpec& s);

// Shared memory per block the kernel declares.
size_t kernel_shared_bytes(const Graph& graph, const KernelSpec& spec);

// Global-memory bytes one thread has in flight at once: the loads it issues before it waits
// on any of them.
double bytes_in_flight_per_thread(const Graph& graph, const KernelSpec& spec);

// Estimated instructions one thread issues per element of the domain, loads, stores and
// reduction combines included.
double instructions_per_element(const Graph& graph, const KernelSpec& spec);

// Runs of adjacent axes of one kind (kept or reduced) in the kernel's domain, axes of extent
// 1 skipped: the coordinates a row kernel over rows that are not contiguous unravels each
// element's flat index into.
int unraveled_axis_runs(const KernelSpec& spec);

// Estimated instructions of the kernel's code (not of a thread's run): each operation's
// instructions times the copies the emitter writes of it, one per lane of a vector step and,
// in a row kernel, one per pass and per unrolled step. NVRTC's compile time grows faster than
// linearly in it (bench report, "Compile time against kernel size").
double code_instructions(const Graph& graph, const KernelSpec& spec);

// Work units a grid-stride kernel hands out (rows per block, vector steps per block), the
// granule of its tail.
int64_t work_units(const Graph& graph, const KernelSpec& spec);

// Two estimates closer than this (relative) are a tie: the model does not resolve them.
inline constexpr double kEstimateResolution = 0.01;

// The mean SM's share of a grid-stride kernel's work over the busiest SM's: `units` work
// units over `grid` blocks (block b takes units b, b + grid, ...), `blocks_per_sm` resident
// per SM; blocks past one wave run in later rounds.
double sm_balance(int64_t units, int64_t grid, int sm_count, int blocks_per_sm);

struct CostBreakdown {
  Occupancy occ;
  int registers = 0;
  int64_t resident_blocks = 0;  // blocks of the grid resident at once
  double waves = 0;             // grid / resident capacity of the device
  double balance = 1;           // the mean SM's work / the busiest SM's (sm_balance)
  double bytes_in_flight = 0;   // across the device
  double bandwidth = 0;         // bytes per second the kernel can draw
  double memory_seconds = 0;
  double compute_seconds = 0;
  double barrier_seconds = 0;
  double launch_seconds = 0;
  double total_seconds = 0;
  bool compute_bound() const { return compute_seconds > memory_seconds; }
};

// The estimate of a kernel whose schedule fields (schedule, threads_per_row, block_threads,
// grid_blocks, cache) and traffic (bytes_read, bytes_written) are set.
CostBreakdown estimate_kernel(const ArchParams& arch, const Graph& graph, const KernelSpec& spec);

// The same estimate with `blocks_per_sm` resident blocks per SM in place of the occupancy of
// the estimated registers and shared memory: for a kernel whose compiled occupancy is known
// (the static kernel report re-estimates launches at it). The formulas are estimate_kernel's.
CostBreakdown estimate_kernel_at_occupancy(const ArchParams& arch, const Graph& graph, const KernelSpec& spec,
                                           int blocks_per_sm);

// Resident blocks per SM (from the register estimate and shared memory) and the grid at that
// occupancy, grid_for_occupancy (plan/launch_grid.hpp): one full wave of the device, or the
// work units when there are fewer. Sets spec.registers_estimate, spec.planned_blocks_per_sm,
// spec.work_units and spec.grid_blocks.
void size_grid(const PlanInputs& in, KernelSpec& spec);

// Time of a copy of `bytes` at the device's copy bandwidth (the speed of light the kernels
// are measured against), launch included.
double copy_seconds(const ArchParams& arch, double bytes);

}  // namespace fstitch
