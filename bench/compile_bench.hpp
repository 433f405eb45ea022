// Sections 2 and 3: NVRTC compile time of the stitch plans (cold, memory hit, disk hit)
// and the registers and spills ptxas reports for each stitch kernel.
#pragma once

#include <ostream>

#include "bench_config.hpp"
#include "machine_info.hpp"

namespace fstitch::bench {

void write_compile_sections(std::ostream& out, const BenchConfig& config, const MachineInfo& machine,
                            Findings& findings);

}  // namespace fstitch::bench
