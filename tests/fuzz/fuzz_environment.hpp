// The environment both fuzz targets run in: the host backend only (no CUDA driver is ever
// loaded, even on a GPU machine), no disk cache, no log output.
#pragma once

#include <cstdlib>

namespace fstitch::fuzz {

inline void set_fuzz_environment() {
  setenv("FSTITCH_CUDA_DRIVER", "/nonexistent/fstitch-fuzz/libcuda.so.1", 1);
  setenv("FSTITCH_BACKEND", "host", 1);
  setenv("FSTITCH_CACHE_DIR", "off", 1);
  setenv("FSTITCH_LOG", "off", 1);
  unsetenv("FSTITCH_DUMP");
}

}  // namespace fstitch::fuzz
