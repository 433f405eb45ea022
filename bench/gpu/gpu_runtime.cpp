#include "gpu_runtime.hpp"

#include <algorithm>
#include <utility>

#include "support/error.hpp"

namespace fstitch::bench_gpu {
namespace {

// Events of one timing loop, destroyed with it.
class EventPool {
 public:
  EventPool(const GpuRuntime& runtime, size_t count) : runtime_(runtime) {
    events_.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      cuda::CUevent event = nullptr;
      runtime.check(runtime.api().cuEventCreate(&event, 0), "cuEventCreate");
      events_.push_back(event);
    }
  }
  ~EventPool() {
    for (cuda::CUevent event : events_) runtime_.api().cuEventDestroy(event);
  }
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;
  cuda::CUevent operator[](size_t i) const { return events_[i]; }

 private:
  const GpuRuntime& runtime_;
  std::vector<cuda::CUevent> events_;
};

// Runs between stream synchronizations, so the launch queue never fills.
constexpr int kRunsPerSync = 20;

}  // namespace

DeviceBuffer::DeviceBuffer(const GpuRuntime& runtime, size_t bytes) : runtime_(&runtime), bytes_(bytes) {
  runtime.check(runtime.api().cuMemAlloc(&address_, bytes), "cuMemAlloc");
}

DeviceBuffer::~DeviceBuffer() {
  release();
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : runtime_(std::exchange(other.runtime_, nullptr)),
      address_(std::exchange(other.address_, 0)),
      bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    runtime_ = std::exchange(other.runtime_, nullptr);
    address_ = std::exchange(other.address_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::release() {
  if (runtime_ != nullptr && address_ != 0) runtime_->api().cuMemFree(address_);
  runtime_ = nullptr;
  address_ = 0;
  bytes_ = 0;
}

Timing summarize(std::vector<double> samples_us) {
  Timing timing;
  if (samples_us.empty()) return timing;
  std::sort(samples_us.begin(), samples_us.end());
  const size_t n = samples_us.size();
  timing.runs = static_cast<int>(n);
  timing.median_us = n % 2 == 1 ? samples_us[n / 2] : (samples_us[n / 2 - 1] + samples_us[n / 2]) / 2;
  timing.min_us = samples_us.front();
  timing.max_us = samples_us.back();
  return timing;
}

GpuRuntime::GpuRuntime(int ordinal) {
  driver_ = cuda::load_driver(cuda::default_driver_path());
  device_ = cuda::query_device(*driver_, ordinal);
  check(api().cuDevicePrimaryCtxRetain(&context_, device_.handle), "cuDevicePrimaryCtxRetain");
  check(api().cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  check(api().cuStreamCreate(&stream_, 0), "cuStreamCreate");
}

GpuRuntime::~GpuRuntime() {
  flush_ = DeviceBuffer();
  if (stream_ != nullptr) {
    api().cuStreamSynchronize(stream_);
    api().cuStreamDestroy(stream_);
  }
  if (context_ != nullptr) {
    api().cuCtxSetCurrent(nullptr);
    api().cuDevicePrimaryCtxRelease(device_.handle);
  }
}

void GpuRuntime::upload(const DeviceBuffer& to, const void* from, size_t bytes) const {
  if (bytes > to.bytes()) fail(StatusCode::kInvalidArgument, "upload larger than its device buffer");
  check(api().cuMemcpyHtoD(to.address(), from, bytes), "cuMemcpyHtoD");
}

void GpuRuntime::download(void* to, const DeviceBuffer& from, size_t bytes) const {
  if (bytes > from.bytes()) fail(StatusCode::kInvalidArgument, "download larger than its device buffer");
  synchronize();
  check(api().cuMemcpyDtoH(to, from.address(), bytes), "cuMemcpyDtoH");
}

void GpuRuntime::fill_async(const DeviceBuffer& buffer, unsigned char value) const {
  check(api().cuMemsetD8Async(buffer.address(), value, buffer.bytes(), stream_), "cuMemsetD8Async");
}

void GpuRuntime::synchronize() const {
  check(api().cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

size_t GpuRuntime::flush_bytes() const {
  const size_t l2 = device_.l2_bytes > 0 ? static_cast<size_t>(device_.l2_bytes) : 0;
  return std::max<size_t>(4 * l2, size_t{256} << 20);
}

Timing GpuRuntime::time_runs(int warmup, int runs, const std::function<void()>& enqueue) {
  if (flush_.bytes() == 0) flush_ = allocate(flush_bytes());
  for (int i = 0; i < warmup; ++i) enqueue();
  synchronize();
  if (runs <= 0) return Timing{};
  const auto count = static_cast<size_t>(runs);
  EventPool start(*this, count);
  EventPool stop(*this, count);
  for (size_t i = 0; i < count; ++i) {
    // A different byte each time, so no layer of the memory system can skip the writes.
    fill_async(flush_, ++flush_value_);
    check(api().cuEventRecord(start[i], stream_), "cuEventRecord");
    enqueue();
    check(api().cuEventRecord(stop[i], stream_), "cuEventRecord");
    if ((i + 1) % kRunsPerSync == 0) synchronize();
  }
  synchronize();
  std::vector<double> samples_us;
  for (size_t i = 0; i < count; ++i) {
    float ms = 0;
    check(api().cuEventElapsedTime(&ms, start[i], stop[i]), "cuEventElapsedTime");
    samples_us.push_back(static_cast<double>(ms) * 1e3);
  }
  return summarize(std::move(samples_us));
}

}  // namespace fstitch::bench_gpu
