// The vector width of a row kernel: how many consecutive elements of a row one thread moves
// with one memory access (KernelSpec::vector_width).
#pragma once

#include <vector>

#include "ir/graph.hpp"
#include "plan/kernel_spec.hpp"

namespace fstitch {

// For a row kernel whose schedule, threads_per_row, elems_per_thread, loaded and stored are
// set: 16 bytes of the widest element-shaped load or element store, halved until it divides
// cols and no thread holds more than elems_per_thread elements of a pass (so the register
// budget of the row cache is the one the scalar mapping has). 1 when the rows are not
// contiguous, the kernel is elementwise, or a vector of the widest type would span fewer
// than 4 bytes.
int row_vector_width(const Graph& g, const KernelSpec& spec);

// Threads per row, besides the powers of two, for which a contiguous row kernel's row (loaded
// and stored set) is a whole number of full 16-byte vectors of its widest access per thread:
// multiples of 32 from 64 to 1024 (768 bf16 columns: 96 threads of one 8-element vector).
// The planner scores a block per row of each; empty when the row is not a whole number of
// such vectors.
std::vector<int> vector_fitting_row_threads(const Graph& g, const KernelSpec& spec);

}  // namespace fstitch
