// Runs a fusion on its context's backend with host arrays, so one test serves both
// backends: the host backend takes the arrays as they are; on the CUDA backend they are
// copied to device buffers (outputs too, so elements nobody writes keep their fill), the
// fusion runs on the default stream, and the outputs are copied back after synchronizing.
#pragma once

#include <cstddef>
#include <vector>

#include "fstitch.h"

namespace fstitch::testing {

struct HostArray {
  void* data;
  size_t bytes;
};

// Returns the status of the run (or of a failed copy, with the thread's last error set as
// fstitch sets it).
fst_status run_on_backend(const fst_fusion* fusion, const std::vector<HostArray>& inputs,
                          const std::vector<HostArray>& outputs);

}  // namespace fstitch::testing
