// fstitch_bench_cpu: measures what the library does on the CPU (planning, code generation,
// NVRTC compiles and the kernel cache) and writes a Markdown report. No GPU is needed.
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "bench_config.hpp"
#include "compile_bench.hpp"
#include "fusion_bench.hpp"
#include "machine_info.hpp"
#include "reading_notes.hpp"
#include "scaling_bench.hpp"

namespace {

using fstitch::bench::BenchConfig;

constexpr const char* kUsage =
    "usage: fstitch_bench_cpu [--output FILE] [--planner-runs N] [--compile-runs N]\n"
    "                         [--warm-runs N] [--scaling-runs N] [--quick]\n"
    "Writes a Markdown report of fusion results, planner time, NVRTC compile time and kernel\n"
    "resources to FILE (default: standard output). Progress goes to standard error.\n"
    "  --planner-runs N  plan_fusion calls per canonical graph and policy (default 11)\n"
    "  --compile-runs N  cold and disk compiles per stitch plan (default 3)\n"
    "  --warm-runs N     memory-hit lookups per stitch plan (default 101)\n"
    "  --scaling-runs N  plan_fusion calls per random graph (default 5)\n"
    "  --quick           small shapes and graphs only\n";

struct Arguments {
  BenchConfig config;
  std::optional<std::string> output;
};

// A run count in 1..10000, or nothing.
std::optional<int> parse_runs(const char* text) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 1 || value > 10000) return std::nullopt;
  return static_cast<int>(value);
}

// Parsed arguments, or nothing after printing why they are wrong.
std::optional<Arguments> parse_arguments(int argc, char** argv) {
  Arguments args;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (arg == "--quick") {
      args.config.quick = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::cerr << "fstitch_bench_cpu: " << arg
                << (arg.rfind("--", 0) == 0 ? " needs a value" : " is not an option") << "\n"
                << kUsage;
      return std::nullopt;
    }
    const char* value = argv[++i];
    if (arg == "--output") {
      if (*value == '\0') {
        std::cerr << "fstitch_bench_cpu: --output needs a file name\n";
        return std::nullopt;
      }
      args.output = value;
      // Checked before the minutes of measuring, not after.
      const std::filesystem::path parent = std::filesystem::absolute(value).parent_path();
      if (access(parent.c_str(), W_OK) != 0) {
        std::cerr << "fstitch_bench_cpu: cannot write to " << parent.string() << ": " << std::strerror(errno)
                  << "\n";
        return std::nullopt;
      }
      continue;
    }
    int* target = arg == "--planner-runs"   ? &args.config.planner_runs
                  : arg == "--compile-runs" ? &args.config.compile_runs
                  : arg == "--warm-runs"    ? &args.config.warm_runs
                  : arg == "--scaling-runs" ? &args.config.scaling_runs
                                            : nullptr;
    if (target == nullptr) {
      std::cerr << "fstitch_bench_cpu: unknown option " << arg << "\n" << kUsage;
      return std::nullopt;
    }
    const std::optional<int> runs = parse_runs(value);
    if (!runs) {
      std::cerr << "fstitch_bench_cpu: " << arg << " takes a whole number from 1 to 10000, not '" << value
                << "'\n";
      return std::nullopt;
    }
    *target = *runs;
  }
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<Arguments> args = parse_arguments(argc, argv);
  if (!args) return 2;
  try {
    namespace bench = fstitch::bench;
    bench::Findings findings;
    // The whole report is built in memory, so a failed run leaves no partial file.
    std::ostringstream report;
    const bench::MachineInfo machine = bench::collect_machine_info();
    bench::write_header(report, machine, args->config);
    bench::write_fusion_section(report, args->config, findings);
    bench::write_compile_sections(report, args->config, machine, findings);
    bench::write_scaling_section(report, args->config, findings);
    bench::write_findings(report, findings);
    bench::write_reading_notes(report);

    if (!args->output) {
      std::cout << report.str();
      return 0;
    }
    std::ofstream file(*args->output, std::ios::binary | std::ios::trunc);
    file << report.str();
    file.close();
    if (!file) {
      std::cerr << "fstitch_bench_cpu: cannot write " << *args->output << ": " << std::strerror(errno)
                << "\n";
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "fstitch_bench_cpu: " << e.what() << "\n";
    return 1;
  }
}
