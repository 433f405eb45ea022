// The text of emulation.h, embedded in the library at build time.
#pragma once

#include <string_view>

namespace fstitch::host {

std::string_view emulation_header_text();

}  // namespace fstitch::host
