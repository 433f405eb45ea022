// Checking a large run against the reference evaluator on a sample of its rows. The
// reference computes in float64 and takes seconds per large tensor, so for graphs whose
// output rows depend only on the same rows of the inputs, the reference runs on the same
// graph built with fewer rows, fed the sampled rows, and is compared with those rows of the
// GPU's output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.hpp"

namespace fstitch::bench_gpu {

// Whether every output row of `graph` (rank-2 values of `rows` x `cols`) depends only on the
// same row of the inputs: inputs are [rows, cols] or [cols], outputs [rows, cols], every
// reduction reduces the last axis alone, and nothing reshapes, permutes, counts indices,
// moves data (slice, concat, pad, take) or is opaque. On false, `why` says what breaks it.
bool rows_are_independent(const Graph& graph, int64_t rows, int64_t cols, std::string* why);

// `count` distinct rows of 0..rows-1 spread evenly, first and last included, ascending;
// every row when count >= rows.
std::vector<int64_t> sample_rows(int64_t rows, int64_t count);

// The listed rows of a dense [*, cols] buffer of `element_bytes` elements, in list order.
std::vector<unsigned char> gather_rows(const void* data, int64_t cols, size_t element_bytes,
                                       const std::vector<int64_t>& rows);

}  // namespace fstitch::bench_gpu
