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
// its whole grid resident. A packed launch of split rows in clusters keeps its clusters.
inline void set_residency(const PlannedKernel& k, HostLaunchOptions& options) {
  options.cooperative = false;
  options.cluster_blocks = 1;
  if (k.spec.schedule == ScheduleKind::kSplitRow || (k.packed() && k.launch == LaunchKind::kCluster)) {
    options.cluster_blocks = static_cast<std::uint32_t>(k.spec.split.blocks);
  } else if (k.spec.schedule == ScheduleKind::kColumnTile && k.spec.column.releases_groups()) {
    options.cluster_blocks = static_cast<std::uint32_t>(k.spec.column.split);
  } else {
    options.cooperative = k.launch == LaunchKind::kCooperative;
  }
}

}  // namespace fstitch::host
