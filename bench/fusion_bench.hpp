// Section 1: the canonical graphs under each fusion policy: kernel counts, planned global
// memory traffic against the lower bound, and planner time.
#pragma once

#include <ostream>

#include "bench_config.hpp"

namespace fstitch::bench {

void write_fusion_section(std::ostream& out, const BenchConfig& config, Findings& findings);

}  // namespace fstitch::bench
