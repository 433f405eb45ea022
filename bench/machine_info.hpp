// The report's opening lines: when and where it was measured, with which compiler and
// which NVRTC, and with which run counts.
#pragma once

#include <ostream>
#include <string>

#include "bench_config.hpp"

namespace fstitch::bench {

struct MachineInfo {
  std::string date;           // local time, "YYYY-MM-DD HH:MM:SS +zzzz"
  int cpus_available = 0;     // CPUs this process may run on (what nproc prints)
  int cpus_online = 0;        // std::thread::hardware_concurrency()
  std::string cpu_model;      // "model name" from /proc/cpuinfo
  std::string compiler;       // the compiler that built the benchmark and the library
  std::string build_type;     // the CMake build type
  std::string nvrtc_version;  // "13.0", or empty when NVRTC cannot be loaded
  std::string nvrtc_library;  // the file NVRTC was loaded from
  std::string nvrtc_error;    // why NVRTC could not be loaded
};

MachineInfo collect_machine_info();

void write_header(std::ostream& out, const MachineInfo& info, const BenchConfig& config);

}  // namespace fstitch::bench
