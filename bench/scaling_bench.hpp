// Section 4: planner time on random graphs of growing size, to show how it scales.
#pragma once

#include <ostream>

#include "bench_config.hpp"

namespace fstitch::bench {

void write_scaling_section(std::ostream& out, const BenchConfig& config, Findings& findings);

}  // namespace fstitch::bench
