// Graph construction with validation and dtype/shape inference. Every builder throws an
// Error (invalid argument, shape, dtype...) describing the problem and leaves the graph
// unchanged on failure.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.hpp"
#include "ir/tensor_data.hpp"

namespace fstitch {

// Result type of a node given its operands and attributes; throws if it does not type-check.
struct ValueType {
  DType dtype;
  Dims dims;
};
ValueType infer_type(const Graph& graph, const Node& node);

// Numpy broadcasting of two shapes; throws a shape Error naming both.
Dims broadcast_dims(const Dims& a, const Dims& b);

ValueId build_input(Graph& g, const std::string& name, DType dtype, const Dims& dims);
ValueId build_constant(Graph& g, DType dtype, Scalar value);  // value already in dtype
ValueId build_constant_f64(Graph& g, DType dtype, double value);
ValueId build_constant_i64(Graph& g, DType dtype, int64_t value);
// A constant tensor holding `data` (shared, not copied; see validate_tensor_data).
ValueId build_tensor_constant(Graph& g, DType dtype, const Dims& dims, TensorData data);
ValueId build_unary(Graph& g, OpKind op, ValueId x);
// Inserts explicit broadcasts so both operands have the broadcast shape.
ValueId build_binary(Graph& g, OpKind op, ValueId a, ValueId b);
ValueId build_select(Graph& g, ValueId cond, ValueId a, ValueId b);
ValueId build_cast(Graph& g, ValueId x, DType dtype);
// No node is added when x already has the target dims.
ValueId build_broadcast(Graph& g, ValueId x, const Dims& dims);
// Axes may be negative; they are normalized and sorted.
ValueId build_reduce(Graph& g, OpKind op, ValueId x, const std::vector<int64_t>& axes, bool keepdims);
// One dim may be -1.
ValueId build_reshape(Graph& g, ValueId x, const Dims& dims);
ValueId build_permute(Graph& g, ValueId x, const std::vector<int64_t>& perm);
ValueId build_iota(Graph& g, DType dtype, const Dims& dims, int64_t axis);
ValueId build_opaque(Graph& g, const std::string& name, const std::vector<ValueId>& inputs, DType dtype,
                     const Dims& dims);
// Data movement (ir/movement.cpp). slice: one start, stop and step per axis; start and stop
// may be negative (counted from the end) and are clamped to the dim like Python's slice;
// steps may be empty (all 1), else each is at least 1; an empty slice is a shape error.
ValueId build_slice(Graph& g, ValueId x, const std::vector<int64_t>& starts,
                    const std::vector<int64_t>& stops, const std::vector<int64_t>& steps);
// Operands of one dtype whose dims agree except along `axis` (which may be negative).
ValueId build_concat(Graph& g, const std::vector<ValueId>& values, int64_t axis);
// Pads of at least 0 before (low) and after (high) each axis, filled with `value` (in x's dtype).
ValueId build_pad(Graph& g, ValueId x, const std::vector<int64_t>& low, const std::vector<int64_t>& high,
                  Scalar value);
ValueId build_pad_f64(Graph& g, ValueId x, const std::vector<int64_t>& low, const std::vector<int64_t>& high,
                      double value);
// result[..., j..., ...] = x[..., indices[j...], ...] along `axis`; indices are i32 or i64. An
// index i with -n <= i < n (n = x's dim) selects element i (negative from the end); any
// other index yields 0 (false).
ValueId build_take(Graph& g, ValueId x, ValueId indices, int64_t axis);
// Slices of x along `axis` with the given section sizes (each >= 1, adding up to the dim).
std::vector<ValueId> build_split(Graph& g, ValueId x, int64_t axis, const std::vector<int64_t>& sizes);
void build_output(Graph& g, const std::string& name, ValueId value);

// Names of inputs and outputs: non-empty, printable ASCII without quotes or backslashes.
void validate_io_name(const std::string& name, const std::string& what);
// Names of opaque operations: [A-Za-z0-9_.-]+.
void validate_opaque_name(const std::string& name);

}  // namespace fstitch
