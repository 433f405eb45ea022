// Horizontal packing: independent kernels of any shapes share one launch, each part running
// on its own range of the launch's blocks (as fused multi-tensor optimizers do), when the
// cost model estimates the packed launch faster than the kernels apart: a launch saved per
// part, and small parts that each leave most of the device idle running side by side, against
// the occupancy of the packed launch, which is that of its widest part.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "plan/kernel_spec.hpp"

namespace fstitch {

// A packed launch's parts sized for the launch and its summary (PlannedKernel::spec).
struct PackedLaunch {
  // The parts at the launch's occupancy: its resident blocks per SM and registers; a
  // grid-stride part's grid is one wave at that occupancy (or its work, when less).
  std::vector<KernelSpec> parts;
  KernelSpec summary;
};

// Sizes `parts` (two or more independent kernels that can share a launch: can_share_launch)
// for one launch and estimates it: the launch overhead once, then the longest of the parts'
// own times, their sum weighted by the share of the device each part keeps busy, and their
// bytes at the copy bandwidth.
PackedLaunch make_packed_launch(const PlanInputs& in, std::vector<KernelSpec> parts);

// The estimate of a packed launch's parts (sized by make_packed_launch) at `blocks_per_sm`
// resident blocks per SM: the compiled occupancy, for the static kernel report.
double packed_seconds_at_occupancy(const ArchParams& arch, const Graph& graph,
                                   const std::vector<KernelSpec>& parts, int blocks_per_sm);

// Why a kernel cannot be a part of a packed launch (it needs a launch of its own kind, or
// scratch of its own), or empty when it can.
std::string why_not_packable(const KernelSpec& spec);

// The launches of a plan's kernels and why independent kernels stayed apart.
struct Packing {
  // Per launch: the kernels it runs (indices into the specs), one, or the parts of a packed
  // launch in block order.
  std::vector<std::vector<int>> launches;
  // Per launch: for a packed one, its kernels as its parts (unsized: make_packed_launch sizes
  // them), each with the best schedule that can share a launch of the pack's block size,
  // which may differ from the kernel's own; empty for a launch of one kernel.
  std::vector<std::vector<KernelSpec>> parts;
  // Per kernel launched alone although others of its level could have shared its launch:
  // the kernel and why.
  std::vector<std::pair<int, std::string>> notes;
  // Per packed launch that opened beside others of its level: its first kernel and why that
  // kernel joined none of the open packs (the refusal of the first it tried).
  std::vector<std::pair<int, std::string>> opened;
};

// Packs kernels of one level of the launch graph (the longest chain of launches before them,
// `successors` including the order opaque operations impose): no path joins two of them, and
// contracting each level's packs keeps the graph acyclic. `order` is a topological order of
// the kernels; `params` bounds each kernel's parameters. A kernel joins the open pack whose
// estimate it improves most (against its own schedule launched alone), or opens a pack.
Packing pack_independent_kernels(const PlanInputs& in, const std::vector<KernelSpec>& specs,
                                 const std::vector<std::vector<int>>& successors,
                                 const std::vector<int>& order, const std::vector<size_t>& params);

}  // namespace fstitch
