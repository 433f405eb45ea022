// The measured times of a GPU benchmark run (fstitch_bench_gpu --output bench.json), looked
// up by graph, shape and dtype, for the kernel report's measured column.
#pragma once

#include <map>
#include <string>

namespace fstitch::bench {

struct MeasuredCase {
  double median_us = 0;  // fst_fusion_run of the whole plan, L2 flushed before each run
  int kernels = 0;
  bool ok = false;  // the run checked out against the reference
};

struct MeasuredRun {
  bool loaded = false;
  std::string error;   // why nothing was loaded
  std::string device;  // the GPU's name
  double copy_gb_per_s = 0;
  std::map<std::string, MeasuredCase> cases;  // by measured_key()
};

// "layer_norm 8192x4096 bf16".
std::string measured_key(const std::string& graph, const std::string& shape, const std::string& dtype);

// The cases of a results file's text with a timing; a case's shape is its "dims" joined by
// "x" when present, else "<rows>x<cols>". Never throws: a broken file sets `error`.
MeasuredRun parse_measured(const std::string& json_text);

// parse_measured() of the file at `path`.
MeasuredRun read_measured(const std::string& path);

// The device model of the cost model ("a100", "h100", "h200", plan/arch.hpp) that a GPU's
// name ("NVIDIA H200") names, or empty when it names none of them.
std::string device_model_of(const std::string& gpu_name);

}  // namespace fstitch::bench
