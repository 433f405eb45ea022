// Reading the next row ahead (RowPrefetch::kNextRow). A row kernel's thread spends each row
// in two phases: its first pass issues the row's loads and waits for them, then the row is
// combined across its threads (shuffles, block barriers), finished by the later passes and
// stored, with no load in flight. Reading the block's next row into registers at the end of
// the first pass keeps loads in flight through the second phase too. It takes registers (the
// thread's share of each element-shaped input, in its storage words), so the cost model weighs
// the bytes it keeps in flight against the occupancy it costs.
#pragma once

#include "ir/graph.hpp"
#include "plan/arch.hpp"
#include "plan/kernel_spec.hpp"

namespace fstitch {

// Whether the kernel's schedule can read its next row ahead: one block's rows (sub-warp, warp
// or block per row, not split), a register row cache, and whole vectors from each row's start,
// so the first pass is unrolled and reads every vector of the thread before using one.
bool row_prefetch_applies(const KernelSpec& spec);

// Registers the read-ahead vectors hold: the thread's share of a row of every element-shaped
// input, one register per 4 bytes.
int row_prefetch_registers(const Graph& graph, const KernelSpec& spec);

// The phases of one row of a row kernel's thread, in seconds (estimates from the
// architecture's latencies and the kernel's instruction count).
struct RowTimeline {
  double loads = 0;       // from the first load's issue until the first pass has its data
  double first_pass = 0;  // the first pass's own instructions
  double rest = 0;        // combines, later passes and stores, the first pass's included
};
RowTimeline row_timeline(const ArchParams& arch, const Graph& graph, const KernelSpec& spec);

// The fraction of a row's time its thread has loads in flight: loads / (loads + rest)
// without read-ahead; with it, the next row's loads overlap the rest, so the row takes
// max(loads + first pass, rest). 1 for kernels that are not row kernels over several rows.
double row_load_duty(const ArchParams& arch, const Graph& graph, const KernelSpec& spec);

}  // namespace fstitch
