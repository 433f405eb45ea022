// A graph family the benchmarks build at a shape of its own (not [rows, cols] of the
// canonical graphs): the reduction graphs and the multi-tensor optimizer step.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.hpp"

namespace fstitch::testing {

struct ShapedGraph {
  std::string name;
  Dims dims;        // the benchmarks' shape: the input's dims (an optimizer: its tensor count)
  Dims check_dims;  // a small shape of the same meaning, for the GPU benchmark's --check mode
  std::function<Graph(const Dims& dims, DType dtype)> build;
  std::vector<DType> dtypes = {DType::kF32, DType::kBF16};  // the dtypes the benchmarks run
};

// "64x4096x64".
std::string dims_text(const Dims& dims);

}  // namespace fstitch::testing
