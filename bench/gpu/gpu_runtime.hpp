// The driver-API pieces the GPU benchmark needs beside fstitch itself: the device's primary
// context made current, a non-default stream, device buffers, copies, and event timing
// with the L2 cache flushed before every timed run. The driver is loaded the way fstitch
// loads it (dlopen, never linked), so the benchmark starts on machines without a GPU and
// says why it cannot run.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "runtime/cuda/device.hpp"
#include "runtime/cuda/driver.hpp"

namespace fstitch::bench_gpu {

class GpuRuntime;

// Device memory from cuMemAlloc, freed on destruction. Movable, not copyable.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const GpuRuntime& runtime, size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  cuda::CUdeviceptr address() const { return address_; }
  void* pointer() const { return reinterpret_cast<void*>(static_cast<uintptr_t>(address_)); }
  size_t bytes() const { return bytes_; }

 private:
  void release();
  const GpuRuntime* runtime_ = nullptr;
  cuda::CUdeviceptr address_ = 0;
  size_t bytes_ = 0;
};

// Device time of repeated runs, in microseconds.
struct Timing {
  int runs = 0;
  double median_us = 0;
  double min_us = 0;
  double max_us = 0;
};

// Summarizes samples in microseconds; zeros when there are none.
Timing summarize(std::vector<double> samples_us);

class GpuRuntime {
 public:
  // Loads the driver (cuda::default_driver_path()), opens device `ordinal`, makes its primary
  // context current on this thread and creates a stream. Throws fstitch::Error: kNoDriver
  // (no libcuda.so.1, the toolkit's stub, a driver older than CUDA 12.0) or kNoDevice.
  explicit GpuRuntime(int ordinal);
  ~GpuRuntime();
  GpuRuntime(const GpuRuntime&) = delete;
  GpuRuntime& operator=(const GpuRuntime&) = delete;

  const cuda::Driver& driver() const { return *driver_; }
  const cuda::DriverApi& api() const { return driver_->api(); }
  const cuda::DeviceInfo& device() const { return device_; }
  cuda::CUstream stream() const { return stream_; }
  // Throws fstitch::Error with the driver's words when `result` is not success.
  void check(cuda::CUresult result, const char* call) const { driver_->check(result, call); }

  DeviceBuffer allocate(size_t bytes) const { return DeviceBuffer(*this, bytes); }
  void upload(const DeviceBuffer& to, const void* from, size_t bytes) const;
  void download(void* to, const DeviceBuffer& from, size_t bytes) const;
  // Queues a byte fill of the whole buffer on stream().
  void fill_async(const DeviceBuffer& buffer, unsigned char value) const;
  void synchronize() const;

  // Bytes written before each timed run to evict the inputs from L2: four times the L2
  // size, at least 256 MiB.
  size_t flush_bytes() const;
  // Runs `enqueue` (which queues work on stream()) `warmup` times untimed, then `runs` times,
  // each preceded by an L2 flush, timing each run with events around `enqueue` alone.
  Timing time_runs(int warmup, int runs, const std::function<void()>& enqueue);

 private:
  std::shared_ptr<const cuda::Driver> driver_;
  cuda::DeviceInfo device_;
  cuda::CUcontext context_ = nullptr;
  cuda::CUstream stream_ = nullptr;
  DeviceBuffer flush_;
  unsigned char flush_value_ = 0;
};

}  // namespace fstitch::bench_gpu
