// The report's closing sections: the findings collected while measuring, and how to read
// every table.
#pragma once

#include <ostream>

#include "bench_config.hpp"

namespace fstitch::bench {

void write_findings(std::ostream& out, const Findings& findings);
void write_reading_notes(std::ostream& out);

}  // namespace fstitch::bench
