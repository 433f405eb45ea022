// What the CUDA seam tests share: the stand-in driver's controls resolved from the same
// dlopen handle fstitch gets, a fixture that points fstitch at it, owners for the C API's
// handles, and the small graphs the tests fuse.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/capi_handles.hpp"
#include "cuda/fake_cuda.h"
#include "fstitch.h"
#include "ir/graph.hpp"
#include "runtime/cuda/driver_api.hpp"

// Expects `part` in `text`, printing the whole text when it is missing.
#define EXPECT_CONTAINS(text, part)                                                              \
  do {                                                                                           \
    const std::string text_ = (text);                                                            \
    const std::string part_ = (part);                                                            \
    EXPECT_NE(text_.find(part_), std::string::npos) << "\"" << part_ << "\" not in:\n" << text_; \
  } while (0)

namespace fstitch::cuda_test {

using cuda::CUcontext;
using cuda::CUresult;
using cuda::CUstream;

// One loaded copy of the stand-in driver: its control functions, and the driver entry
// points the tests call themselves.
class FakeCuda {
 public:
  // dlopens `path` (the handle stays open: fstitch keeps its driver for the whole process).
  // Throws std::runtime_error when the library or one of its functions is missing.
  explicit FakeCuda(std::string path);
  const std::string& path() const { return path_; }

  void (*reset)();
  void (*set_init_result)(int);
  void (*set_driver_version)(int);
  void (*set_device_count)(int);
  void (*set_compute_capability)(int, int);
  void (*set_multiprocessors)(int);
  void (*set_max_threads_per_block)(int);
  void (*set_cooperative_launch)(int);
  void (*set_memory_pools)(int);
  void (*set_max_active_blocks)(int);
  void (*set_kernel_registers)(const char*, int);
  void (*set_reject_cubin)(int);
  void (*set_param_count)(const char*, int);
  void (*inject)(const char*, int, int);
  void (*inject_after)(const char*, int, int, int);
  void* (*new_context)(int);
  void* (*primary_context)(int);
  int (*primary_retain_count)(int);
  int (*describe_function)(void*, void**, char*);
  void* (*current_context)();
  int (*context_stack_depth)();
  void (*clear_records)();
  size_t (*call_count)(const char*);
  size_t (*live_allocation_count)();

  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuStreamCreate)(CUstream*, unsigned);

  std::vector<std::string> call_log() const;
  std::vector<fake_cuda_launch_record> launches() const;
  std::vector<fake_cuda_allocation_record> allocations() const;
  std::vector<fake_cuda_memset_record> memsets() const;
  std::vector<fake_cuda_library_record> libraries() const;
  // Position of the first call to `entry_point` in call_log() at or after `from`, or SIZE_MAX.
  size_t find_call(const std::string& entry_point, size_t from = 0) const;
  // A stream the stand-in handed out.
  void* new_stream();
  // Any exported function of the stand-in, e.g. entry<CUresult(int*)>("cuDeviceGetCount").
  template <class Fn>
  Fn* entry(const char* name) const {
    return reinterpret_cast<Fn*>(symbol(name));
  }

 private:
  template <class Fn>
  void resolve(Fn** slot, const char* name);
  // Throws std::runtime_error when the stand-in does not export `name`.
  void* symbol(const char* name) const;
  std::string path_;
  void* handle_ = nullptr;
  size_t (*call_log_)(const char**, size_t);
  size_t (*launch_count_)();
  int (*launch_)(size_t, fake_cuda_launch_record*);
  size_t (*allocation_count_)();
  int (*allocation_)(size_t, fake_cuda_allocation_record*);
  size_t (*memset_count_)();
  int (*memset_)(size_t, fake_cuda_memset_record*);
  size_t (*library_count_)();
  int (*library_)(size_t, fake_cuda_library_record*);
};

// The stand-in at its build path, loaded once per process.
FakeCuda& shared_fake();
// A private copy of the stand-in (named after `tag`) for the tests of failed driver loads:
// fstitch keeps a driver it loaded successfully for the whole process, so a cuInit or a
// version that must fail needs a library fstitch has not loaded. Reset, ready to configure.
FakeCuda& private_fake(const std::string& tag);

// The NVRTC and host-object cache the tests share (in the build tree).
std::string test_cache_dir();

// Owners of the C API's handles.
using ContextPtr = testing::ContextHandle;
using GraphPtr = testing::GraphHandle;
using FusionPtr = testing::FusionHandle;

// Collects a context's log messages.
struct LogCapture {
  std::mutex mutex;
  std::vector<std::string> messages;
  static void callback(void* user_data, fst_log_level level, const char* message);
  // Every message joined by newlines.
  std::string text();
};

struct ContextRequest {
  fst_backend backend = FST_BACKEND_CUDA;
  int device = 0;
  LogCapture* log = nullptr;  // receives messages up to info level when set
};

// fst_context_create with the driver named by FSTITCH_CUDA_DRIVER=`driver_path` (read when
// the options are created) and the shared cache. `out` is left as it is on failure.
fst_status create_context(const std::string& driver_path, const ContextRequest& request, fst_context** out);

// Graphs, built through the C API from the canonical graphs' text (tests/common).
// Layer norm over rows x cols f32 (inputs x, gamma, beta; output y).
GraphPtr layer_norm_graph(fst_context* context, int64_t rows, int64_t cols);
// `graph` built through the C API from its text.
GraphPtr parsed_graph(fst_context* context, const Graph& graph);
// y = x * 2 + 1 over `elements` f32: one kernel and no workspace under any policy.
GraphPtr scale_graph(fst_context* context, int64_t elements);

// fst_fuse with `policy` and, when target_sm is nonzero, an explicit target.
FusionPtr fuse(const fst_graph* graph, fst_fusion_policy policy, int target_sm = 0);

struct KernelInfo {
  std::string name;
  uint32_t grid[3];
  uint32_t block[3];
  size_t shared_bytes;
  struct Param {
    fst_param_kind kind;
    size_t index;
  };
  std::vector<Param> params;
};
// Every kernel of `fusion` as its accessors describe it, in plan order.
std::vector<KernelInfo> kernels_of(const fst_fusion* fusion);
// Tells the stand-in to record every parameter of every kernel of `fusion`.
void record_all_params(FakeCuda& fake, const fst_fusion* fusion);

// Distinct buffers standing for device memory in runs (the stand-in never dereferences
// kernel arguments): one per input and output of `graph`, of its size.
struct RunBuffers {
  explicit RunBuffers(const fst_graph* graph);
  std::vector<std::vector<unsigned char>> storage;
  std::vector<const void*> inputs;
  std::vector<void*> outputs;
};
fst_status run(const fst_fusion* fusion, RunBuffers& buffers, void* workspace, void* stream);

// Points fstitch at the shared stand-in (FSTITCH_CUDA_DRIVER) with every default restored,
// and checks afterwards that no run left a CUDA context current on the test's thread.
class CudaSeamTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  FakeCuda& fake() { return *fake_; }
  // A context on the stand-in; fails the test when it cannot be created.
  ContextPtr cuda_context(LogCapture* log = nullptr);

 private:
  FakeCuda* fake_ = nullptr;
};

}  // namespace fstitch::cuda_test
