// The vector width of a row kernel: how many consecutive elements of a row one thread moves
// with one memory access (KernelSpec::vector_width).
#pragma once

#include <vector>

#include "ir/graph.hpp"
#include "plan/kernel_spec.hpp"

namespace fstitch {

// The widest vector of a row kernel: 16 bytes of its widest element-shaped load or element
// store, in elements; 0 when it has none (or one wider than 16 bytes).
int64_t widest_row_vector(const Graph& g, const KernelSpec& spec);

// How a row kernel's thread share of a pass relates to its vectors.
enum class RowVectorSlots : uint8_t {
  // No more elements than the scalar mapping gives a thread (ceil(cols / T)): the vector
  // narrows until its steps fit that share.
  kScalarShare,
  // Whole vectors of the widest width that divides the row: a thread holds
  // ceil(vectors / T) x V elements, a few more slots than its scalar share where the
  // vectors do not divide evenly among the threads (a row of 3136 f32 columns: 13 steps of 4
  // elements for 64 threads, against 49 scalars).
  kWholeVectors,
};

// For a row kernel whose schedule, threads_per_row, elems_per_thread, loaded and stored are
// set, with rows aligned as `alignment` asks:
// - kRowStart: widest_row_vector, halved until it divides cols and (kScalarShare) no thread
//   holds more than elems_per_thread elements of a pass (so the register budget of the row
//   cache is the one the scalar mapping has);
// - kShifted: widest_row_vector itself when cols is not a multiple of it and every row has
//   a whole vector (cols >= 2V - 1), else 1 (the row-start alignment covers the rest).
// Rows that are not contiguous take vectors that divide their innermost run
// (innermost_row_run), row-start aligned only. 1 when the rows are not contiguous and the
// innermost axis is kept, the kernel is elementwise, or a vector of the widest type would
// span fewer than 4 bytes.
int row_vector_width(const Graph& g, const KernelSpec& spec, RowVectorAlignment alignment,
                     RowVectorSlots slots = RowVectorSlots::kScalarShare);

// The consecutive elements a row of a reduction kernel holds in memory at a time: the whole
// row when rows are contiguous, else the extent of the run of reduced axes that ends the
// domain (a BatchNorm's H x W), 0 when the innermost axis is kept. A vector that divides it
// stays within one run, and starts at a multiple of its width in the flat index.
int64_t innermost_row_run(const KernelSpec& spec);

// The elements a thread holds in one pass over `cols` columns (a row, or a split row's slice)
// of shifted vectors of V with T threads: its whole vectors, at most ceil(cols / V / T), and
// its share of the head and tail, at most 2 (V - 1) elements between the T threads. The
// slots of an unrolled pass's register row cache.
int64_t shifted_row_slots(int64_t cols, int64_t threads, int vector);

// Threads per row, besides the powers of two, for which a contiguous row kernel's row (loaded
// and stored set) is a whole number of full 16-byte vectors of its widest access per thread:
// multiples of 32 from 64 to 1024 (768 bf16 columns: 96 threads of one 8-element vector).
// The planner scores a block per row of each; empty when the row is not a whole number of
// such vectors.
std::vector<int> vector_fitting_row_threads(const Graph& g, const KernelSpec& spec);

}  // namespace fstitch
