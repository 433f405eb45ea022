// fst_slice, fst_concat, fst_pad, fst_take, fst_split: the data-movement builders.
#include <string>
#include <vector>

#include "api/builder_call.hpp"
#include "api/handles.hpp"
#include "ir/builder.hpp"

using fstitch::fail;
using fstitch::StatusCode;
using fstitch::ValueId;
using fstitch::api::build;
using fstitch::api::decode_value;
using fstitch::api::require_not_null;

namespace {

// A per-axis list of `rank` entries; the rank is checked before touching the array.
std::vector<int64_t> per_axis(size_t rank, const int64_t* values, const char* what) {
  if (rank > fstitch::kMaxRank) {
    fail(StatusCode::kShape, std::string(what) + ": rank " + std::to_string(rank) + " exceeds the maximum " +
                                 std::to_string(fstitch::kMaxRank));
  }
  if (rank > 0) require_not_null(values, what);
  return std::vector<int64_t>(values, values + rank);
}

std::vector<ValueId> decode_values(const fst_graph* graph, size_t n, const fst_value* values) {
  if (n > 0) require_not_null(values, "values");
  std::vector<ValueId> ids;
  for (size_t i = 0; i < n; ++i) {
    const std::string what = "values[" + std::to_string(i) + "]";
    ids.push_back(decode_value(graph, values[i], what.c_str()));
  }
  return ids;
}

}  // namespace

extern "C" {

FST_API fst_value fst_slice(fst_graph* graph, fst_value x, size_t rank, const int64_t* starts,
                            const int64_t* stops, const int64_t* steps) {
  return build(graph, __func__, [&] {
    const ValueId id = decode_value(graph, x, "x");
    const size_t x_rank = graph->graph.node(id).dims.size();
    if (rank != x_rank) {
      fail(StatusCode::kShape, "rank " + std::to_string(rank) + " differs from the rank " +
                                   std::to_string(x_rank) + " of " +
                                   fstitch::describe_value(graph->graph, id));
    }
    std::vector<int64_t> step_list;
    if (steps != nullptr) step_list = per_axis(rank, steps, "steps");
    return fstitch::build_slice(graph->graph, id, per_axis(rank, starts, "starts"),
                                per_axis(rank, stops, "stops"), step_list);
  });
}

FST_API fst_value fst_concat(fst_graph* graph, size_t n, const fst_value* values, int64_t axis) {
  return build(graph, __func__, [&] {
    if (n == 0) fail(StatusCode::kInvalidArgument, "n is 0; concat needs at least one value");
    return fstitch::build_concat(graph->graph, decode_values(graph, n, values), axis);
  });
}

FST_API fst_value fst_pad(fst_graph* graph, fst_value x, size_t rank, const int64_t* low, const int64_t* high,
                          double value) {
  return build(graph, __func__, [&] {
    const ValueId id = decode_value(graph, x, "x");
    const size_t x_rank = graph->graph.node(id).dims.size();
    if (rank != x_rank) {
      fail(StatusCode::kShape, "rank " + std::to_string(rank) + " differs from the rank " +
                                   std::to_string(x_rank) + " of " +
                                   fstitch::describe_value(graph->graph, id));
    }
    return fstitch::build_pad_f64(graph->graph, id, per_axis(rank, low, "low"), per_axis(rank, high, "high"),
                                  value);
  });
}

FST_API fst_value fst_take(fst_graph* graph, fst_value x, fst_value indices, int64_t axis) {
  return build(graph, __func__, [&] {
    const ValueId id = decode_value(graph, x, "x");
    return fstitch::build_take(graph->graph, id, decode_value(graph, indices, "indices"), axis);
  });
}

FST_API fst_status fst_split(fst_graph* graph, fst_value x, int64_t axis, size_t nsections,
                             const int64_t* sizes, fst_value* out_values) {
  std::vector<ValueId> ids;
  const fst_value first = build(graph, __func__, [&] {
    require_not_null(out_values, "out_values");
    if (nsections == 0)
      fail(StatusCode::kInvalidArgument, "nsections is 0; split needs at least one section");
    require_not_null(sizes, "sizes");
    const ValueId id = decode_value(graph, x, "x");
    ids = fstitch::build_split(graph->graph, id, axis, std::vector<int64_t>(sizes, sizes + nsections));
    return ids.front();
  });
  if (first == FST_VALUE_INVALID)
    return graph == nullptr ? FST_ERROR_INVALID_ARGUMENT : fst_graph_status(graph);
  for (size_t i = 0; i < ids.size(); ++i) out_values[i] = fstitch::api::encode_value(graph, ids[i]);
  return FST_OK;
}

}  // extern "C"
