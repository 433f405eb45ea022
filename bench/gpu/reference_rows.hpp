// The reference evaluator's outputs for a run's inputs: on a sample of the rows when the
// graph's output rows depend only on the same input rows (row_sample.hpp), else on the whole
// tensors when they are small enough.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "capi.hpp"
#include "ir/graph.hpp"

namespace fstitch::bench_gpu {

struct RowReference {
  bool ran = false;
  std::string note;                                 // why the reference did not run
  std::vector<int64_t> rows;                        // the sampled rows; empty: whole buffers
  std::vector<std::vector<unsigned char>> outputs;  // in output order
};

// Builds a graph of a family at any number of rows (the canonical builders).
using GraphBuilder = std::function<Graph(int64_t rows, int64_t cols, DType dtype)>;

// The reference outputs of `build(rows, cols, dtype)` for `host_inputs` (dense buffers in
// input order, described by `inputs`), on `check_rows` rows sampled by sample_rows() when the
// rows are independent and there are more rows than that. Graphs without independent rows
// are evaluated whole while their largest input or output has at most `max_whole_elements`
// elements (4M by default) and not at all beyond (`ran` false, `note` says why). Throws std::runtime_error
// when the reference fails.
RowReference reference_rows(fst_context* context, const GraphBuilder& build, int64_t rows, int64_t cols,
                            DType dtype, const std::vector<TensorSpec>& inputs,
                            const std::vector<std::vector<unsigned char>>& host_inputs, int64_t check_rows,
                            int64_t max_whole_elements = int64_t{1} << 22);

}  // namespace fstitch::bench_gpu
