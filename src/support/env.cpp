#include "support/env.hpp"

#include <cstdlib>

namespace fstitch {

std::optional<std::string> env_string(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

}  // namespace fstitch
