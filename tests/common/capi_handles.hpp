// Owning handles for the fstitch C API's objects, for C++ tests and benchmarks.
#pragma once

#include <memory>

#include "fstitch.h"

namespace fstitch::testing {

struct ContextDeleter {
  void operator()(fst_context* c) const { fst_context_destroy(c); }
};
struct GraphDeleter {
  void operator()(fst_graph* g) const { fst_graph_destroy(g); }
};
struct FusionDeleter {
  void operator()(fst_fusion* f) const { fst_fusion_destroy(f); }
};
struct FuseOptionsDeleter {
  void operator()(fst_fuse_options* o) const { fst_fuse_options_destroy(o); }
};
struct ContextOptionsDeleter {
  void operator()(fst_context_options* o) const { fst_context_options_destroy(o); }
};

using ContextHandle = std::unique_ptr<fst_context, ContextDeleter>;
using GraphHandle = std::unique_ptr<fst_graph, GraphDeleter>;
using FusionHandle = std::unique_ptr<fst_fusion, FusionDeleter>;
using FuseOptionsHandle = std::unique_ptr<fst_fuse_options, FuseOptionsDeleter>;
using ContextOptionsHandle = std::unique_ptr<fst_context_options, ContextOptionsDeleter>;

}  // namespace fstitch::testing
