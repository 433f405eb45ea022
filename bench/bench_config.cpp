#include "bench_config.hpp"

#include <iostream>

namespace fstitch::bench {

std::string shape_text(const BenchShape& shape) {
  return std::to_string(shape.rows) + "x" + std::to_string(shape.cols);
}

std::vector<BenchShape> canonical_shapes(const BenchConfig& config) {
  // Transformer-sized rows (hidden 1024) and a wide square matrix, in the storage dtype
  // of training (bf16) and of reference runs (f32), plus a tiny shape where launch
  // overhead, not bandwidth, dominates.
  if (config.quick) return {{64, 256, DType::kF32}, {256, 1024, DType::kBF16}};
  return {{64, 256, DType::kF32},
          {8192, 1024, DType::kBF16},
          {8192, 1024, DType::kF32},
          {4096, 4096, DType::kBF16},
          {4096, 4096, DType::kF32}};
}

void progress(const std::string& message) {
  std::cerr << "fstitch_bench_cpu: " << message << std::endl;
}

}  // namespace fstitch::bench
