#include "machine_info.hpp"

#include <ctime>
#include <fstream>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

#include "jit/cache_key.hpp"
#include "jit/nvrtc_loader.hpp"

#ifndef FSTITCH_BENCH_BUILD_TYPE
#define FSTITCH_BENCH_BUILD_TYPE "unknown"
#endif

namespace fstitch::bench {
namespace {

std::string local_date() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  if (localtime_r(&now, &local) == nullptr) return "unknown";
  char buf[64];
  return std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S %z", &local) > 0 ? buf : "unknown";
}

int available_cpus() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
#endif
  return static_cast<int>(std::thread::hardware_concurrency());
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown (no model name in /proc/cpuinfo)";
}

std::string compiler_text() {
#if defined(__clang__)
  return "clang++ " __clang_version__;
#elif defined(__GNUC__)
  return "g++ " __VERSION__;
#else
  return "unknown compiler";
#endif
}

}  // namespace

MachineInfo collect_machine_info() {
  MachineInfo info;
  info.date = local_date();
  info.cpus_available = available_cpus();
  info.cpus_online = static_cast<int>(std::thread::hardware_concurrency());
  info.cpu_model = cpu_model();
  info.compiler = compiler_text();
  info.build_type = FSTITCH_BENCH_BUILD_TYPE;
  try {
    std::shared_ptr<const jit::Nvrtc> nvrtc = jit::system_nvrtc();
    info.nvrtc_version = nvrtc->version_string();
    info.nvrtc_library = nvrtc->library();
  } catch (const std::exception& e) {
    info.nvrtc_error = e.what();
  }
  return info;
}

void write_header(std::ostream& out, const MachineInfo& info, const BenchConfig& config) {
  out << "# fstitch CPU benchmark\n\n";
  out << "- Date: " << info.date << "\n";
  out << "- Machine: " << info.cpus_available << " CPUs available (" << info.cpus_online << " online), "
      << info.cpu_model << "\n";
  out << "- Compiler: " << info.compiler << ", build type " << info.build_type << "\n";
  out << "- fstitch: " << jit::library_version_string() << "\n";
  if (info.nvrtc_error.empty()) {
    out << "- NVRTC: " << info.nvrtc_version << " (" << info.nvrtc_library << ")\n";
  } else {
    out << "- NVRTC: not available, compile sections skipped: " << info.nvrtc_error << "\n";
  }
  out << "- Runs: planner " << config.planner_runs << " per graph and policy, cold and disk compiles "
      << config.compile_runs << " per plan, memory hits " << config.warm_runs
      << " per plan, random graphs up to " << config.scaling_runs << " per graph; every time is the median"
      << (config.quick ? "; quick mode" : "") << "\n\n";
}

}  // namespace fstitch::bench
