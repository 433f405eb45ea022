// How a row kernel's threads combine a row's reductions when the row spans more than a warp
// (threads_per_row > 32). Each pass that finishes reductions ends in one exchange: the
// reductions' warp shuffles interleaved, then every warp's partial of every reduction through
// shared memory behind a single block barrier, not two barriers per reduction. Exchanges
// alternate between two scratch buffers, so an exchange's barrier also orders the reads of
// the exchange before it against the writes of the one after; a row with an odd number of
// exchanges ends with one more barrier, before the next row writes the first buffer again
// (codegen/row_body.inc).
#pragma once

#include <cstddef>

#include "ir/graph.hpp"
#include "plan/kernel_spec.hpp"

namespace fstitch {

// Exchanges of one row: one per pass that finishes a row reduction (column totals are not
// exchanged), two for a split row whose group meets through global memory (its blocks'
// slices, then the group's partials). 0 where a row fits a warp.
int row_exchanges(const Graph& graph, const KernelSpec& spec);

// Block barriers of one row: one per exchange, and one at the row's end after an odd count of
// exchanges or where shifted rows hand the slots of a shared row cache to other threads (the
// next row's first pass must wait until this row's last one has read them).
int row_barriers(const Graph& graph, const KernelSpec& spec);

// Static shared memory the exchange buffers take: for each accumulator type, two buffers
// holding a slot per warp for every row reduction of that type (16 bytes of alignment
// slack each). 0 where a row fits a warp.
size_t row_exchange_scratch_bytes(const Graph& graph, const KernelSpec& spec);

}  // namespace fstitch
