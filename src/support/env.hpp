// Reading fstitch's environment variables (FSTITCH_LOG, FSTITCH_CACHE_DIR, ...).
#pragma once

#include <optional>
#include <string>

namespace fstitch {

// The variable's value, or nothing when it is unset or empty.
std::optional<std::string> env_string(const char* name);

}  // namespace fstitch
