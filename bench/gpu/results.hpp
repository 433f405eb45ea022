// Everything one run of the GPU benchmark measured, and its JSON form (bench/README.md
// describes the fields; bench/gpu/report.py reads them).
#pragma once

#include <string>
#include <vector>

#include "canonical_case.hpp"
#include "gpu_runtime.hpp"
#include "launch_overhead.hpp"

namespace fstitch::bench_gpu {

struct CopyBandwidth {
  bool measured = false;
  std::string error;
  uint64_t bytes_moved = 0;  // bytes read plus bytes written per copy
  Timing timing;
  double gb_per_s() const {
    return timing.median_us > 0 ? static_cast<double>(bytes_moved) / timing.median_us / 1e3 : 0;
  }
};

struct RunReport {
  std::string mode;  // "check", "quick" or "full"
  std::string fstitch_version;
  std::string error;  // why nothing ran (no driver, no device...)
  bool have_device = false;
  cuda::DeviceInfo device;
  int driver_version = 0;
  size_t flush_bytes = 0;
  CopyBandwidth copy;
  std::vector<CaseResult> cases;
  bool have_overhead = false;
  OverheadResult overhead;
};

// Lower-bound bytes over the median time, in GB/s; 0 without a timing.
double effective_gb_per_s(const CaseResult& result);

std::string results_json(const RunReport& report);

// Writes `text` to `path` through a temporary file and a rename, so a reader (or a run cut
// short) never sees half a file. Throws std::runtime_error naming the path.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace fstitch::bench_gpu
