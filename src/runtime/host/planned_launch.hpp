// How the host backend keeps a planned kernel's blocks resident: one rule for the library's
// runs and for anything else that launches planned kernels on a host module (tests, tools).
#pragma once

#include <cstdint>

#include "plan/plan.hpp"
#include "runtime/host/host_options.hpp"

namespace fstitch::host {

// A split row's blocks wait only for the blocks of their own group, and so do the blocks of
// a column tile's group: the host keeps each group resident, as a cluster, whichever launch a
// device needs for it (a cluster or a cooperative grid). Any other cooperative kernel keeps
// its whole grid resident. A packed launch of split rows in clusters keeps its clusters, and
// one of split rows across a cooperative grid its groups where they are of one size.
// A packed cooperative launch whose parts are all split rows in groups of one size G, each
// part's range starting at a multiple of G: its groups are runs of G blocks, which the host
// keeps resident one after another as it does a split row's. 0 otherwise (the whole grid).
inline int packed_group_blocks(const PlannedKernel& k) {
  if (!k.packed() || k.launch != LaunchKind::kCooperative) return 0;
  const int G = k.parts.front().spec.split.blocks;
  for (const KernelPart& part : k.parts) {
    if (part.spec.schedule != ScheduleKind::kSplitRow || part.spec.split.blocks != G || G < 1 ||
        part.first_block % G != 0 || part.spec.grid_blocks % G != 0)
      return 0;
  }
  return G;
}

inline void set_residency(const PlannedKernel& k, HostLaunchOptions& options) {
  options.cooperative = false;
  options.cluster_blocks = 1;
  if (k.spec.schedule == ScheduleKind::kSplitRow || (k.packed() && k.launch == LaunchKind::kCluster)) {
    options.cluster_blocks = static_cast<std::uint32_t>(k.spec.split.blocks);
  } else if (const int blocks = packed_group_blocks(k); blocks > 0) {
    options.cluster_blocks = static_cast<std::uint32_t>(blocks);
  } else if (k.spec.schedule == ScheduleKind::kColumnTile && k.spec.column.releases_groups()) {
    options.cluster_blocks = static_cast<std::uint32_t>(k.spec.column.split);
  } else {
    options.cooperative = k.launch == LaunchKind::kCooperative;
  }
}

}  // namespace fstitch::host
