// The vector width of a row kernel: how many consecutive elements of a row one thread moves
// with one memory access (KernelSpec::vector_width).
#pragma once

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

}  // namespace fstitch
