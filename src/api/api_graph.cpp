// fst_graph_*: lifetime, builders (sticky first error) and queries.
#include <vector>

#include "api/builder_call.hpp"
#include "api/handles.hpp"
#include "ir/builder.hpp"
#include "ir/verify.hpp"

using fstitch::Dims;
using fstitch::DType;
using fstitch::fail;
using fstitch::OpKind;
using fstitch::StatusCode;
using fstitch::ValueId;
using fstitch::api::build;
using fstitch::api::decode_value;
using fstitch::api::guarded;
using fstitch::api::require_graph_ok;
using fstitch::api::require_not_null;

namespace {

DType to_dtype(const fst_dtype& dtype, const char* what) {
  const int code = fstitch::api::enum_code(dtype);
  if (!fstitch::is_valid_dtype(code)) {
    fail(StatusCode::kInvalidArgument,
         std::string(what) + " " + std::to_string(code) + " is not an fst_dtype");
  }
  return static_cast<DType>(code);
}

// Copies caller dims; the rank is checked before touching the array.
Dims to_dims(size_t rank, const int64_t* dims, const char* what) {
  if (rank > fstitch::kMaxRank) {
    fail(StatusCode::kShape, std::string(what) + " rank " + std::to_string(rank) + " exceeds the maximum " +
                                 std::to_string(fstitch::kMaxRank));
  }
  if (rank > 0) require_not_null(dims, what);
  return Dims(dims, dims + rank);
}

}  // namespace

extern "C" {

FST_API fst_status fst_graph_create(fst_context* context, fst_graph** out_graph) {
  return guarded(__func__, [&] {
    require_not_null(context, "context");
    require_not_null(out_graph, "out_graph");
    auto graph = std::make_unique<fst_graph>();
    graph->context = context->impl;
    graph->serial = fstitch::api::GraphSerial::acquire();
    *out_graph = graph.release();
  });
}

FST_API void fst_graph_destroy(fst_graph* graph) {
  delete graph;
}

FST_API fst_status fst_graph_status(const fst_graph* graph) {
  if (graph == nullptr)
    return fstitch::api::set_last_error(FST_ERROR_INVALID_ARGUMENT, "fst_graph_status: graph is NULL");
  return graph->error;
}

FST_API const char* fst_graph_error_message(const fst_graph* graph) {
  return graph == nullptr ? "" : graph->error_message.c_str();
}

FST_API fst_status fst_graph_verify(const fst_graph* graph) {
  return guarded(__func__, [&] {
    require_not_null(graph, "graph");
    require_graph_ok(graph);
    fstitch::verify_graph(graph->graph);
  });
}

FST_API fst_value fst_input(fst_graph* graph, const char* name, fst_dtype dtype, size_t rank,
                            const int64_t* dims) {
  return build(graph, __func__, [&] {
    require_not_null(name, "name");
    return fstitch::build_input(graph->graph, name, to_dtype(dtype, "dtype"), to_dims(rank, dims, "dims"));
  });
}

FST_API fst_value fst_constant_f64(fst_graph* graph, fst_dtype dtype, double value) {
  return build(graph, __func__,
               [&] { return fstitch::build_constant_f64(graph->graph, to_dtype(dtype, "dtype"), value); });
}

FST_API fst_value fst_constant_i64(fst_graph* graph, fst_dtype dtype, int64_t value) {
  return build(graph, __func__,
               [&] { return fstitch::build_constant_i64(graph->graph, to_dtype(dtype, "dtype"), value); });
}

FST_API fst_value fst_constant_tensor(fst_graph* graph, fst_dtype dtype, size_t rank, const int64_t* dims,
                                      const void* data, size_t bytes) {
  return build(graph, __func__, [&] {
    const DType type = to_dtype(dtype, "dtype");
    const Dims shape = to_dims(rank, dims, "dims");
    // The size first: the copy below reads exactly the bytes the tensor has.
    fstitch::validate_value_size(type, shape, "tensor constant");
    require_not_null(data, "data");
    const uint64_t expected = fstitch::byte_size(type, shape);
    if (bytes != expected) {
      fail(StatusCode::kInvalidArgument, "bytes is " + std::to_string(bytes) + ", but a " +
                                             fstitch::dtype_name(type) + fstitch::dims_to_string(shape) +
                                             " tensor has " + std::to_string(expected));
    }
    const auto* first = static_cast<const uint8_t*>(data);
    auto copy = std::make_shared<const std::vector<uint8_t>>(first, first + bytes);
    return fstitch::build_tensor_constant(graph->graph, type, shape, std::move(copy));
  });
}

FST_API fst_value fst_unary(fst_graph* graph, fst_unary_op op, fst_value x) {
  return build(graph, __func__, [&] {
    const int code = fstitch::api::enum_code(op);
    auto kind = code >= 1 ? fstitch::unary_op_from_index(code - 1) : std::nullopt;
    if (!kind) fail(StatusCode::kInvalidArgument, "op " + std::to_string(code) + " is not an fst_unary_op");
    return fstitch::build_unary(graph->graph, *kind, decode_value(graph, x, "x"));
  });
}

FST_API fst_value fst_binary(fst_graph* graph, fst_binary_op op, fst_value a, fst_value b) {
  return build(graph, __func__, [&] {
    const int code = fstitch::api::enum_code(op);
    auto kind = code >= 1 ? fstitch::binary_op_from_index(code - 1) : std::nullopt;
    if (!kind) {
      fail(StatusCode::kInvalidArgument, "op " + std::to_string(code) + " is not an fst_binary_op");
    }
    return fstitch::build_binary(graph->graph, *kind, decode_value(graph, a, "a"),
                                 decode_value(graph, b, "b"));
  });
}

FST_API fst_value fst_select(fst_graph* graph, fst_value cond, fst_value a, fst_value b) {
  return build(graph, __func__, [&] {
    return fstitch::build_select(graph->graph, decode_value(graph, cond, "cond"), decode_value(graph, a, "a"),
                                 decode_value(graph, b, "b"));
  });
}

FST_API fst_value fst_cast(fst_graph* graph, fst_value x, fst_dtype dtype) {
  return build(graph, __func__, [&] {
    return fstitch::build_cast(graph->graph, decode_value(graph, x, "x"), to_dtype(dtype, "dtype"));
  });
}

FST_API fst_value fst_broadcast(fst_graph* graph, fst_value x, size_t rank, const int64_t* dims) {
  return build(graph, __func__, [&] {
    ValueId id = decode_value(graph, x, "x");
    return fstitch::build_broadcast(graph->graph, id, to_dims(rank, dims, "dims"));
  });
}

FST_API fst_value fst_reduce(fst_graph* graph, fst_reduce_op op, fst_value x, size_t naxes,
                             const int64_t* axes, int keepdims) {
  return build(graph, __func__, [&] {
    const int code = fstitch::api::enum_code(op);
    auto kind = code >= 1 ? fstitch::reduce_op_from_index(code - 1) : std::nullopt;
    if (!kind) {
      fail(StatusCode::kInvalidArgument, "op " + std::to_string(code) + " is not an fst_reduce_op");
    }
    ValueId id = decode_value(graph, x, "x");
    if (naxes == 0) fail(StatusCode::kShape, "naxes is 0; a reduction needs at least one axis");
    if (naxes > fstitch::kMaxRank) {
      fail(StatusCode::kShape, "naxes " + std::to_string(naxes) + " exceeds the maximum rank " +
                                   std::to_string(fstitch::kMaxRank));
    }
    require_not_null(axes, "axes");
    return fstitch::build_reduce(graph->graph, *kind, id, std::vector<int64_t>(axes, axes + naxes),
                                 keepdims != 0);
  });
}

FST_API fst_value fst_reshape(fst_graph* graph, fst_value x, size_t rank, const int64_t* dims) {
  return build(graph, __func__, [&] {
    ValueId id = decode_value(graph, x, "x");
    return fstitch::build_reshape(graph->graph, id, to_dims(rank, dims, "dims"));
  });
}

FST_API fst_value fst_permute(fst_graph* graph, fst_value x, size_t rank, const int64_t* perm) {
  return build(graph, __func__, [&] {
    ValueId id = decode_value(graph, x, "x");
    return fstitch::build_permute(graph->graph, id, to_dims(rank, perm, "perm"));
  });
}

FST_API fst_value fst_iota(fst_graph* graph, fst_dtype dtype, size_t rank, const int64_t* dims,
                           int64_t axis) {
  return build(graph, __func__, [&] {
    return fstitch::build_iota(graph->graph, to_dtype(dtype, "dtype"), to_dims(rank, dims, "dims"), axis);
  });
}

FST_API fst_value fst_opaque(fst_graph* graph, const char* name, size_t ninputs, const fst_value* inputs,
                             fst_dtype dtype, size_t rank, const int64_t* dims) {
  return build(graph, __func__, [&] {
    require_not_null(name, "name");
    if (ninputs > 0) require_not_null(inputs, "inputs");
    std::vector<ValueId> ids;
    for (size_t i = 0; i < ninputs; ++i) {
      std::string what = "inputs[" + std::to_string(i) + "]";
      ids.push_back(decode_value(graph, inputs[i], what.c_str()));
    }
    return fstitch::build_opaque(graph->graph, name, ids, to_dtype(dtype, "dtype"),
                                 to_dims(rank, dims, "dims"));
  });
}

FST_API fst_status fst_output(fst_graph* graph, const char* name, fst_value value) {
  build(graph, __func__, [&] {
    require_not_null(name, "name");
    ValueId id = decode_value(graph, value, "value");
    fstitch::build_output(graph->graph, name, id);
    return id;
  });
  return graph == nullptr ? FST_ERROR_INVALID_ARGUMENT : fst_graph_status(graph);
}

FST_API fst_status fst_value_dtype(const fst_graph* graph, fst_value value, fst_dtype* out_dtype) {
  return guarded(__func__, [&] {
    require_not_null(graph, "graph");
    require_not_null(out_dtype, "out_dtype");
    *out_dtype = static_cast<fst_dtype>(graph->graph.node(decode_value(graph, value, "value")).dtype);
  });
}

FST_API fst_status fst_value_rank(const fst_graph* graph, fst_value value, size_t* out_rank) {
  return guarded(__func__, [&] {
    require_not_null(graph, "graph");
    require_not_null(out_rank, "out_rank");
    *out_rank = graph->graph.node(decode_value(graph, value, "value")).dims.size();
  });
}

FST_API fst_status fst_value_dims(const fst_graph* graph, fst_value value, size_t capacity,
                                  int64_t* out_dims) {
  return guarded(__func__, [&] {
    require_not_null(graph, "graph");
    const Dims& dims = graph->graph.node(decode_value(graph, value, "value")).dims;
    if (capacity < dims.size()) {
      fail(StatusCode::kInvalidArgument, "capacity " + std::to_string(capacity) +
                                             " is below the value's rank " + std::to_string(dims.size()));
    }
    if (!dims.empty()) require_not_null(out_dims, "out_dims");
    for (size_t i = 0; i < dims.size(); ++i) out_dims[i] = dims[i];
  });
}

FST_API fst_status fst_graph_input_count(const fst_graph* graph, size_t* out_count) {
  return guarded(__func__, [&] {
    require_not_null(graph, "graph");
    require_not_null(out_count, "out_count");
    *out_count = graph->graph.inputs().size();
  });
}

FST_API fst_status fst_graph_input(const fst_graph* graph, size_t index, fst_value* out_value,
                                   const char** out_name) {
  return guarded(__func__, [&] {
    require_not_null(graph, "graph");
    require_not_null(out_value, "out_value");
    const auto& inputs = graph->graph.inputs();
    fstitch::api::require_index("index", index, inputs.size(), "the graph", "input(s)");
    *out_value = fstitch::api::encode_value(graph, inputs[index]);
    if (out_name != nullptr) *out_name = graph->graph.node(inputs[index]).name.c_str();
  });
}

FST_API fst_status fst_graph_output_count(const fst_graph* graph, size_t* out_count) {
  return guarded(__func__, [&] {
    require_not_null(graph, "graph");
    require_not_null(out_count, "out_count");
    *out_count = graph->graph.outputs().size();
  });
}

FST_API fst_status fst_graph_output(const fst_graph* graph, size_t index, fst_value* out_value,
                                    const char** out_name) {
  return guarded(__func__, [&] {
    require_not_null(graph, "graph");
    require_not_null(out_value, "out_value");
    const auto& outputs = graph->graph.outputs();
    fstitch::api::require_index("index", index, outputs.size(), "the graph", "output(s)");
    *out_value = fstitch::api::encode_value(graph, outputs[index].value);
    if (out_name != nullptr) *out_name = outputs[index].name.c_str();
  });
}

FST_API fst_status fst_graph_value_count(const fst_graph* graph, size_t* out_count) {
  return guarded(__func__, [&] {
    require_not_null(graph, "graph");
    require_not_null(out_count, "out_count");
    *out_count = graph->graph.size();
  });
}

}  // extern "C"
