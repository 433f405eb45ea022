#include "api/context.hpp"

#include "support/env.hpp"

namespace fstitch {

ContextConfig default_context_config() {
  ContextConfig c;
  if (auto level = env_string("FSTITCH_LOG")) {
    LogLevel parsed;
    if (parse_log_level(*level, &parsed)) c.log_level = parsed;
  }
  if (auto dir = env_string("FSTITCH_CACHE_DIR")) {
    c.cache_dir = *dir;
  } else if (auto xdg = env_string("XDG_CACHE_HOME")) {
    c.cache_dir = *xdg + "/fstitch";
  } else if (auto home = env_string("HOME")) {
    c.cache_dir = *home + "/.cache/fstitch";
  } else {
    c.cache_dir = "off";
  }
  return c;
}

}  // namespace fstitch
