// The per-function resource usage that ptxas prints with -v, parsed from the NVRTC log so
// that register, shared-memory and spill budgets can be checked without a GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fstitch::jit {

struct FunctionResources {
  std::string name;
  bool entry = false;        // a __global__ kernel, not a called device function
  int registers = 0;         // per thread; ptxas reports them for entry functions
  int barriers = 0;          // named barriers used (CUDA 13 and later report them)
  int64_t shared_bytes = 0;  // static shared memory
  int64_t stack_frame_bytes = 0;
  int64_t spill_store_bytes = 0;
  int64_t spill_load_bytes = 0;
};

// Functions in the order ptxas first mentions them. Lines that are not resource reports
// are ignored, so any NVRTC log can be passed; an empty result means no -v output.
std::vector<FunctionResources> parse_ptxas_report(const std::string& log);

// The entry named `name`, or nullptr.
const FunctionResources* find_function(const std::vector<FunctionResources>& report, const std::string& name);

}  // namespace fstitch::jit
