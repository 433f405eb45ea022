// Owning handles for the fstitch C API objects the benchmark creates, and a status check
// that turns a failed call into an exception carrying fstitch's own message.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/capi_handles.hpp"
#include "fstitch.h"

namespace fstitch::bench_gpu {

using testing::ContextHandle;
using testing::ContextOptionsHandle;
using testing::FuseOptionsHandle;
using testing::FusionHandle;
using testing::GraphHandle;

// Throws std::runtime_error "<call>: FST_ERROR_... <message>" unless `status` is FST_OK.
inline void require_ok(fst_status status, const char* call) {
  if (status == FST_OK) return;
  throw std::runtime_error(std::string(call) + ": " + fst_status_string(status) + ": " +
                           fst_last_error_message());
}

// A context on the CUDA backend of device `ordinal`; throws when the backend cannot start.
ContextHandle create_cuda_context(int ordinal);

// Parses graph text into a graph of `context`.
GraphHandle parse_graph_text(fst_context* context, const std::string& text);

// Fuses `graph` with `policy`, for the context's device.
FusionHandle fuse_graph(const fst_graph* graph, fst_fusion_policy policy);

// A graph input or output as the C API describes it.
struct TensorSpec {
  std::string name;
  fst_dtype dtype = FST_F32;
  std::vector<int64_t> dims;
  int64_t count() const;  // elements
  size_t bytes() const;
};

std::vector<TensorSpec> graph_inputs(const fst_graph* graph);
std::vector<TensorSpec> graph_outputs(const fst_graph* graph);

}  // namespace fstitch::bench_gpu
