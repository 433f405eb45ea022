#include "differential/cuda_runner.hpp"

#include <cstdint>
#include <exception>

#include "jit/kernel_cache.hpp"
#include "plan/arch.hpp"
#include "runtime/cuda/launch.hpp"
#include "runtime/kernel_args.hpp"
#include "support/error.hpp"

namespace fstitch::testing {
namespace {

constexpr size_t kDeviceAlignment = 64;

// A device copy of a guarded span, its data aligned as the host's.
class DeviceSpan {
 public:
  DeviceSpan(const cuda::Device& device, const GuardedSpan& span) : device_(device), span_(span) {
    device.driver().check(device.api().cuMemAlloc(&base_, span.size + kDeviceAlignment), "cuMemAlloc");
    begin_ = base_ + (kDeviceAlignment - (base_ + span.data_offset) % kDeviceAlignment) % kDeviceAlignment;
    device.driver().check(device.api().cuMemcpyHtoD(begin_, span.begin, span.size), "cuMemcpyHtoD");
  }
  ~DeviceSpan() { device_.api().cuMemFree(base_); }
  DeviceSpan(const DeviceSpan&) = delete;
  DeviceSpan& operator=(const DeviceSpan&) = delete;
  const void* data() const {
    return reinterpret_cast<const void*>(static_cast<uintptr_t>(begin_ + span_.data_offset));
  }
  void* data() { return reinterpret_cast<void*>(static_cast<uintptr_t>(begin_ + span_.data_offset)); }
  void copy_back() {
    device_.driver().check(device_.api().cuMemcpyDtoH(span_.begin, begin_, span_.size), "cuMemcpyDtoH");
  }

 private:
  const cuda::Device& device_;
  GuardedSpan span_;
  cuda::CUdeviceptr base_ = 0;
  cuda::CUdeviceptr begin_ = 0;
};

}  // namespace

CudaRunner::CudaRunner() {
  std::shared_ptr<const cuda::Driver> driver = cuda::load_driver(cuda::default_driver_path());
  cuda::DeviceInfo info = cuda::query_device(*driver, 0);
  device_ = std::make_shared<cuda::Device>(std::move(driver), std::move(info));
  scope_ = std::make_unique<cuda::ContextScope>(*device_);
}

CudaRunner::~CudaRunner() {
  loaded_.clear();
  scope_.reset();
}

int CudaRunner::target_sm() const {
  return target_for_device(device_->info().compute_capability());
}

std::vector<std::shared_ptr<const jit::CompiledModule>> CudaRunner::compile(
    const std::vector<std::string>& texts) const {
  static jit::KernelCache nvrtc(jit::KernelCacheOptions{});
  std::vector<jit::CompileRequest> requests(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    requests[i].source = texts[i];
    requests[i].name = "differential_case.cu";
    requests[i].arch = target_sm();
  }
  return nvrtc.compile_all(requests);
}

void CudaRunner::begin_batch() {
  loaded_.clear();
}

std::string CudaRunner::run(const jit::CompiledModule& module, const std::vector<PlannedKernel>& kernels,
                            std::vector<GuardedSpan>& inputs, std::vector<GuardedSpan>& outputs,
                            GuardedSpan& workspace, const std::vector<GuardedSpan>& constants) {
  try {
    std::vector<std::unique_ptr<DeviceSpan>> in, out;
    for (const GuardedSpan& s : inputs) in.push_back(std::make_unique<DeviceSpan>(*device_, s));
    for (const GuardedSpan& s : outputs) out.push_back(std::make_unique<DeviceSpan>(*device_, s));
    DeviceSpan space(*device_, workspace);
    std::vector<const void*> in_ptrs;
    std::vector<void*> out_ptrs;
    for (auto& s : in) in_ptrs.push_back(s->data());
    for (auto& s : out) out_ptrs.push_back(s->data());
    std::vector<std::unique_ptr<DeviceSpan>> uploaded;
    std::vector<const void*> constant_ptrs;
    for (const GuardedSpan& s : constants) uploaded.push_back(std::make_unique<DeviceSpan>(*device_, s));
    for (auto& s : uploaded) constant_ptrs.push_back(static_cast<const DeviceSpan&>(*s).data());
    runtime::KernelArguments args;
    for (const PlannedKernel& k : kernels) {
      auto found = loaded_.find(k.name);
      if (found == loaded_.end()) {
        found = loaded_
                    .emplace(k.name,
                             cuda::LoadedKernel::load(device_->driver_ptr(), module, k.name,
                                                      device_->info().compute_capability(), target_sm(),
                                                      device_->info().handle, k.spec.dynamic_shared_bytes))
                    .first;
      }
      args.pack(k, in_ptrs.data(), out_ptrs.data(), reinterpret_cast<uintptr_t>(space.data()),
                constant_ptrs.data());
      if (void* zeroed = args.zeroed_address(k)) {
        cuda::clear_on_stream(*device_, reinterpret_cast<cuda::CUdeviceptr>(zeroed), k.zeroed_workspace.bytes,
                              nullptr);
      }
      cuda::launch_kernel(*device_, *found->second, cuda::launch_config(k, device_->info()), nullptr,
                          args.params());
    }
    device_->driver().check(device_->api().cuCtxSynchronize(), "cuCtxSynchronize after the kernels");
    for (size_t i = 0; i < in.size(); ++i) in[i]->copy_back();
    for (size_t i = 0; i < out.size(); ++i) out[i]->copy_back();
    space.copy_back();
  } catch (const std::exception& e) {
    return std::string("  the CUDA run failed: ") + e.what() + "\n";
  }
  return "";
}

}  // namespace fstitch::testing
