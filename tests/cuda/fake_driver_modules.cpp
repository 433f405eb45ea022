// Entry points of the stand-in driver: context-independent libraries, kernels, functions,
// occupancy and launches. Launches run nothing; they are checked the way the driver checks
// them and recorded.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "cuda/fake_images.hpp"
#include "cuda/fake_state.hpp"

using fake_cuda::CUresult;
using fake_cuda::Entry;
using fstitch::cuda::CUfunction;
using fstitch::cuda::CUkernel;
using fstitch::cuda::CUlibrary;
using fstitch::cuda::CUstream;

namespace {

// The kernel behind a launch or occupancy handle: a CUkernel, or a CUfunction of one.
fake_cuda::Kernel* kernel_behind(const fake_cuda::State& s, const void* handle) {
  if (fake_cuda::Kernel* kernel = s.find_kernel(handle)) return kernel;
  if (fake_cuda::Function* function = s.find_function(handle)) return function->kernel;
  return nullptr;
}

fake_cuda::Library* live_library(const fake_cuda::State& s, const void* handle) {
  fake_cuda::Library* library = s.find_library(handle);
  return library != nullptr && library->loaded ? library : nullptr;
}

struct Launch {
  const void* handle;
  unsigned grid[3];
  unsigned block[3];
  unsigned shared_bytes;
  CUstream stream;
  void** params;
  bool cooperative;
  unsigned cluster[3] = {1, 1, 1};  // cuLaunchKernelEx's cluster dimension
};

CUresult launch(fake_cuda::State& s, const Launch& l) {
  const fake_cuda::Kernel* kernel = kernel_behind(s, l.handle);
  if (kernel == nullptr || !kernel->library->loaded) return fake_cuda::kInvalidHandle;
  fake_cuda::Context* context = fake_cuda::usable_current_context(s);
  if (context == nullptr) return fake_cuda::kInvalidContext;
  if (!s.has_stream(l.stream)) return fake_cuda::kInvalidHandle;
  const unsigned long long blocks = 1ULL * l.grid[0] * l.grid[1] * l.grid[2];
  const unsigned long long threads = 1ULL * l.block[0] * l.block[1] * l.block[2];
  if (blocks == 0 || threads == 0 ||
      threads > static_cast<unsigned long long>(s.config.max_threads_per_block)) {
    return fake_cuda::kInvalidValue;
  }
  // Like a GPU: past 48 KiB the kernel must have opted in to its dynamic shared memory.
  if (l.shared_bytes > static_cast<unsigned>(std::max(48 * 1024, kernel->max_dynamic_shared_bytes)))
    return fake_cuda::kInvalidValue;
  // Like a GPU: whole clusters of at most 8 blocks (the portable size), on sm_90 and later.
  const unsigned long long cluster = 1ULL * l.cluster[0] * l.cluster[1] * l.cluster[2];
  if (cluster > 1) {
    if (s.config.cc_major < 9) return fake_cuda::kNotSupported;
    if (cluster > 8 || l.grid[0] % l.cluster[0] || l.grid[1] % l.cluster[1] || l.grid[2] % l.cluster[2])
      return fake_cuda::kInvalidValue;
  }
  if (l.cooperative) {
    if (!s.config.cooperative_launch) return fake_cuda::kNotSupported;
    const int resident = fake_cuda::active_blocks(s, *kernel, static_cast<int>(threads), l.shared_bytes);
    if (blocks > 1ULL * static_cast<unsigned>(resident) * static_cast<unsigned>(s.config.multiprocessors)) {
      return fake_cuda::kCooperativeLaunchTooLarge;
    }
  }
  int params = 0;
  auto count = s.config.param_counts.find(kernel->name);
  if (count != s.config.param_counts.end()) params = std::min(count->second, FAKE_CUDA_MAX_RECORDED_PARAMS);
  if (params > 0 && l.params == nullptr) return fake_cuda::kInvalidValue;

  fake_cuda_launch_record r{};
  r.function = const_cast<void*>(l.handle);
  fake_cuda::copy_name(r.kernel, kernel->name);
  std::copy(l.grid, l.grid + 3, r.grid);
  std::copy(l.block, l.block + 3, r.block);
  r.shared_bytes = l.shared_bytes;
  r.stream = l.stream;
  r.cooperative = l.cooperative ? 1 : 0;
  std::copy(l.cluster, l.cluster + 3, r.cluster);
  r.context = context;
  r.param_count = params;
  for (int i = 0; i < params; ++i) std::memcpy(&r.params[i], l.params[i], sizeof(void*));
  r.call_index = s.call_log.size() - 1;
  s.launches.push_back(r);
  ++s.event_clock;
  return fake_cuda::kSuccess;
}

}  // namespace

FAKE_CUDA_EXPORT CUresult cuLibraryLoadData(CUlibrary* library, const void* code, void* jit_options,
                                            void** jit_option_values, unsigned jit_option_count,
                                            void* library_options, void** library_option_values,
                                            unsigned library_option_count) {
  Entry call("cuLibraryLoadData");
  if (call.early) return call.early;
  if (library == nullptr || code == nullptr) return fake_cuda::kInvalidValue;
  if ((jit_option_count > 0 && (jit_options == nullptr || jit_option_values == nullptr)) ||
      (library_option_count > 0 && (library_options == nullptr || library_option_values == nullptr))) {
    return fake_cuda::kInvalidValue;
  }
  fake_cuda::State& s = call.s;
  fake_cuda::ImageInfo image = fake_cuda::inspect_image(code);
  if (image.is_cubin && s.config.reject_cubin) return fake_cuda::kNoBinaryForGpu;
  if (!image.valid) return image.is_cubin ? fake_cuda::kInvalidImage : fake_cuda::kInvalidPtx;
  if (!image.is_cubin) {
    // PTX for a newer architecture than the device cannot be compiled for it.
    const std::string prefix = "sm_";
    const int device_cc = 10 * s.config.cc_major + s.config.cc_minor;
    if (image.ptx_target.rfind(prefix, 0) == 0 && std::atoi(image.ptx_target.c_str() + 3) > device_cc) {
      return fake_cuda::kNoBinaryForGpu;
    }
  }
  s.library_objects.push_back(std::make_unique<fake_cuda::Library>());
  fake_cuda::Library* loaded = s.library_objects.back().get();
  loaded->is_cubin = image.is_cubin;
  loaded->entries = std::move(image.entries);
  loaded->record = s.libraries.size();
  fake_cuda_library_record r{};
  r.handle = loaded;
  r.is_cubin = image.is_cubin ? 1 : 0;
  fake_cuda::copy_name(r.ptx_target, image.ptx_target);
  s.libraries.push_back(r);
  *library = reinterpret_cast<CUlibrary>(loaded);
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuLibraryUnload(CUlibrary handle) {
  Entry call("cuLibraryUnload");
  if (call.early) return call.early;
  fake_cuda::Library* library = live_library(call.s, handle);
  if (library == nullptr) return fake_cuda::kInvalidHandle;
  library->loaded = false;
  if (library->record < call.s.libraries.size()) call.s.libraries[library->record].unloaded = 1;
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuLibraryGetKernel(CUkernel* out, CUlibrary handle, const char* name) {
  Entry call("cuLibraryGetKernel");
  if (call.early) return call.early;
  if (out == nullptr || name == nullptr) return fake_cuda::kInvalidValue;
  fake_cuda::State& s = call.s;
  fake_cuda::Library* library = live_library(s, handle);
  if (library == nullptr) return fake_cuda::kInvalidHandle;
  if (library->record < s.libraries.size()) {
    fake_cuda_library_record& r = s.libraries[library->record];
    if (r.asked_count < FAKE_CUDA_MAX_ASKED_KERNELS) fake_cuda::copy_name(r.asked[r.asked_count], name);
    ++r.asked_count;
  }
  if (library->entries.count(name) == 0) return fake_cuda::kNotFound;
  for (const auto& kernel : s.kernel_objects) {
    if (kernel->library == library && kernel->name == name) {
      *out = reinterpret_cast<CUkernel>(kernel.get());
      return fake_cuda::kSuccess;
    }
  }
  s.kernel_objects.push_back(std::make_unique<fake_cuda::Kernel>());
  s.kernel_objects.back()->library = library;
  s.kernel_objects.back()->name = name;
  *out = reinterpret_cast<CUkernel>(s.kernel_objects.back().get());
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuKernelSetAttribute(int attribute, int value, CUkernel handle, int device) {
  Entry call("cuKernelSetAttribute");
  if (call.early) return call.early;
  fake_cuda::State& s = call.s;
  fake_cuda::Kernel* kernel = s.find_kernel(handle);
  if (kernel == nullptr || !kernel->library->loaded) return fake_cuda::kInvalidHandle;
  if (device < 0 || device >= s.config.device_count) return fake_cuda::kInvalidDevice;
  // Only the dynamic shared-memory opt-in is simulated, with an H100's per-block limit.
  if (attribute != fstitch::cuda::kFuncAttrMaxDynamicSharedSizeBytes || value < 0 || value > 227 * 1024)
    return fake_cuda::kInvalidValue;
  kernel->max_dynamic_shared_bytes = value;
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuKernelGetFunction(CUfunction* out, CUkernel handle) {
  Entry call("cuKernelGetFunction");
  if (call.early) return call.early;
  if (out == nullptr) return fake_cuda::kInvalidValue;
  fake_cuda::State& s = call.s;
  fake_cuda::Kernel* kernel = s.find_kernel(handle);
  if (kernel == nullptr || !kernel->library->loaded) return fake_cuda::kInvalidHandle;
  fake_cuda::Context* context = fake_cuda::usable_current_context(s);
  if (context == nullptr) return fake_cuda::kInvalidContext;
  fake_cuda::Function*& function = s.functions_by_context[{kernel, context}];
  if (function == nullptr) {
    s.function_objects.push_back(std::make_unique<fake_cuda::Function>());
    function = s.function_objects.back().get();
    function->kernel = kernel;
    function->context = context;
  }
  *out = reinterpret_cast<CUfunction>(function);
  return fake_cuda::kSuccess;
}

FAKE_CUDA_EXPORT CUresult cuFuncGetAttribute(int* value, int attribute, CUfunction handle) {
  Entry call("cuFuncGetAttribute");
  if (call.early) return call.early;
  if (value == nullptr) return fake_cuda::kInvalidValue;
  if (kernel_behind(call.s, handle) == nullptr) return fake_cuda::kInvalidHandle;
  switch (attribute) {
    case 0:  // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
      *value = call.s.config.max_threads_per_block;
      return fake_cuda::kSuccess;
    case 1:  // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
      *value = 0;
      return fake_cuda::kSuccess;
    case fstitch::cuda::kFuncAttrNumRegs: {
      auto own = call.s.config.kernel_registers.find(kernel_behind(call.s, handle)->name);
      *value = own != call.s.config.kernel_registers.end() ? own->second : call.s.config.registers_per_thread;
      return fake_cuda::kSuccess;
    }
    default:
      return fake_cuda::kInvalidValue;
  }
}

FAKE_CUDA_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, CUfunction handle,
                                                                      int block_size,
                                                                      size_t dynamic_shared_bytes) {
  Entry call("cuOccupancyMaxActiveBlocksPerMultiprocessor");
  if (call.early) return call.early;
  if (blocks == nullptr) return fake_cuda::kInvalidValue;
  const fake_cuda::Function* function = call.s.find_function(handle);
  if (function == nullptr) return fake_cuda::kInvalidHandle;
  *blocks = fake_cuda::active_blocks(call.s, *function->kernel, block_size, dynamic_shared_bytes);
  return fake_cuda::kSuccess;
}

int fake_cuda::active_blocks(const State& s, const Kernel& kernel, int block_size,
                             size_t dynamic_shared_bytes) {
  if (block_size <= 0 || block_size > s.config.max_threads_per_block) return 0;
  auto own = s.config.kernel_registers.find(kernel.name);
  if (own == s.config.kernel_registers.end()) return s.config.max_active_blocks;
  // An sm_90 multiprocessor's limits.
  const int warps = (block_size + 31) / 32;
  const int registers_per_warp = (own->second * 32 + 255) / 256 * 256;
  const int by_registers = own->second > 255 ? 0 : 65536 / registers_per_warp / warps;
  const int by_threads = 2048 / block_size;
  const size_t block_shared = dynamic_shared_bytes + 1024;
  const int by_shared = static_cast<int>(233472 / block_shared);
  return std::min({by_registers, by_threads, by_shared, 32});
}

FAKE_CUDA_EXPORT CUresult cuLaunchKernel(CUfunction function, unsigned grid_x, unsigned grid_y,
                                         unsigned grid_z, unsigned block_x, unsigned block_y,
                                         unsigned block_z, unsigned shared_bytes, CUstream stream,
                                         void** params, void** extra) {
  Entry call("cuLaunchKernel");
  if (call.early) return call.early;
  if (extra != nullptr) return fake_cuda::kInvalidValue;  // fstitch passes parameters by kernelParams
  return launch(
      call.s,
      {function, {grid_x, grid_y, grid_z}, {block_x, block_y, block_z}, shared_bytes, stream, params, false});
}

FAKE_CUDA_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction function, unsigned grid_x, unsigned grid_y,
                                                    unsigned grid_z, unsigned block_x, unsigned block_y,
                                                    unsigned block_z, unsigned shared_bytes, CUstream stream,
                                                    void** params) {
  Entry call("cuLaunchCooperativeKernel");
  if (call.early) return call.early;
  return launch(
      call.s,
      {function, {grid_x, grid_y, grid_z}, {block_x, block_y, block_z}, shared_bytes, stream, params, true});
}

FAKE_CUDA_EXPORT CUresult cuLaunchKernelEx(const fstitch::cuda::CUlaunchConfig* config, CUfunction function,
                                           void** params, void** extra) {
  Entry call("cuLaunchKernelEx");
  if (call.early) return call.early;
  if (config == nullptr || extra != nullptr || (config->attr_count > 0 && config->attrs == nullptr))
    return fake_cuda::kInvalidValue;
  Launch l{function,
           {config->grid_x, config->grid_y, config->grid_z},
           {config->block_x, config->block_y, config->block_z},
           config->shared_bytes,
           config->stream,
           params,
           false};
  for (unsigned i = 0; i < config->attr_count; ++i) {
    const fstitch::cuda::CUlaunchAttribute& a = config->attrs[i];
    if (a.id != fstitch::cuda::kLaunchAttrClusterDimension) return fake_cuda::kInvalidValue;
    l.cluster[0] = a.value.cluster_dim.x;
    l.cluster[1] = a.value.cluster_dim.y;
    l.cluster[2] = a.value.cluster_dim.z;
    if (l.cluster[0] == 0 || l.cluster[1] == 0 || l.cluster[2] == 0) return fake_cuda::kInvalidValue;
  }
  return launch(call.s, l);
}
