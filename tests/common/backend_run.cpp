#include "common/backend_run.hpp"

#include <cstdint>

#include "api/fusion.hpp"
#include "api/handles.hpp"
#include "runtime/cuda/device.hpp"

namespace fstitch::testing {
namespace {

// Device buffers of one run, freed on every path.
class DeviceBuffers {
 public:
  explicit DeviceBuffers(const cuda::Device& device) : device_(device) {}
  ~DeviceBuffers() {
    for (cuda::CUdeviceptr p : buffers_) device_.api().cuMemFree(p);
  }
  void* copy_in(const HostArray& array) {
    cuda::CUdeviceptr p = 0;
    device_.driver().check(device_.api().cuMemAlloc(&p, array.bytes > 0 ? array.bytes : 1), "cuMemAlloc");
    buffers_.push_back(p);
    device_.driver().check(device_.api().cuMemcpyHtoD(p, array.data, array.bytes), "cuMemcpyHtoD");
    return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
  }

 private:
  const cuda::Device& device_;
  std::vector<cuda::CUdeviceptr> buffers_;
};

}  // namespace

fst_status run_on_backend(const fst_fusion* fusion, const std::vector<HostArray>& inputs,
                          const std::vector<HostArray>& outputs) {
  std::vector<const void*> in;
  std::vector<void*> out;
  if (fusion == nullptr || !fusion->context->device) {
    for (const HostArray& a : inputs) in.push_back(a.data);
    for (const HostArray& a : outputs) out.push_back(a.data);
    return fst_fusion_run(fusion, in.data(), in.size(), out.data(), out.size(), nullptr, nullptr);
  }
  return api::guarded("run_on_backend", [&] {
    cuda::Device& device = *fusion->context->device;
    cuda::ContextScope scope(device);
    DeviceBuffers buffers(device);
    for (const HostArray& a : inputs) in.push_back(buffers.copy_in(a));
    for (const HostArray& a : outputs) out.push_back(buffers.copy_in(a));
    if (fst_fusion_run(fusion, in.data(), in.size(), out.data(), out.size(), nullptr, nullptr) != FST_OK) {
      throw Error(static_cast<StatusCode>(fst_last_error_status()), fst_last_error_message());
    }
    device.driver().check(device.api().cuCtxSynchronize(), "cuCtxSynchronize after the run");
    for (size_t i = 0; i < outputs.size(); ++i) {
      device.driver().check(
          device.api().cuMemcpyDtoH(outputs[i].data,
                                    static_cast<cuda::CUdeviceptr>(reinterpret_cast<uintptr_t>(out[i])),
                                    outputs[i].bytes),
          "cuMemcpyDtoH");
    }
  });
}

}  // namespace fstitch::testing
