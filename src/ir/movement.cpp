// The data-movement operations: their type inference (attributes as stored on the Node,
// already normalized) and their builders (which normalize Python-style arguments).
#include "ir/movement.hpp"

#include "support/checked_math.hpp"
#include "support/error.hpp"

namespace fstitch {
namespace {

void require_operands(const Graph& g, const Node& n, size_t count) {
  if (n.operands.size() != count) {
    fail(StatusCode::kInvalidArgument, std::string(op_name(n.op)) + " takes " + std::to_string(count) +
                                           " operand(s), got " + std::to_string(n.operands.size()));
  }
  for (ValueId id : n.operands) {
    if (!g.contains(id))
      fail(StatusCode::kInvalidArgument, "operand %" + std::to_string(id) + " does not exist");
  }
}

// One entry per axis of `x`, or a shape error naming the attribute.
void require_per_axis(const Graph& g, const Node& n, ValueId x, const std::vector<int64_t>& list,
                      const char* what) {
  const size_t rank = g.node(x).dims.size();
  if (list.size() != rank) {
    fail(StatusCode::kShape, std::string(op_name(n.op)) + " needs one " + what + " per axis of " +
                                 describe_value(g, x) + " (" + std::to_string(rank) + "), got " +
                                 std::to_string(list.size()));
  }
}

int64_t normalize_axis(const Graph& g, OpKind op, ValueId x, int64_t axis) {
  const auto rank = static_cast<int64_t>(g.node(x).dims.size());
  if (rank == 0)
    fail(StatusCode::kShape,
         std::string(op_name(op)) + " of a scalar " + describe_value(g, x) + " has no axis");
  if (axis < -rank || axis >= rank) {
    fail(StatusCode::kShape, std::string(op_name(op)) + ": axis " + std::to_string(axis) +
                                 " is out of range for " + describe_value(g, x) +
                                 " (valid: " + std::to_string(-rank) + ".." + std::to_string(rank - 1) + ")");
  }
  return axis < 0 ? axis + rank : axis;
}

// Python's slice bound normalization for a positive step: negative counts from the end,
// then clamped to [0, dim].
int64_t clamp_bound(int64_t bound, int64_t dim) {
  if (bound < 0) return bound + dim < 0 ? 0 : bound + dim;
  return bound > dim ? dim : bound;
}

ValueId append_inferred(Graph& g, Node n) {
  ValueType t = infer_type(g, n);
  n.dtype = t.dtype;
  n.dims = std::move(t.dims);
  return g.append(std::move(n));
}

}  // namespace

ValueType infer_slice_type(const Graph& g, const Node& n) {
  require_operands(g, n, 1);
  const ValueId x = n.operands[0];
  const Dims& xd = g.node(x).dims;
  require_per_axis(g, n, x, n.starts, "start");
  require_per_axis(g, n, x, n.stops, "stop");
  require_per_axis(g, n, x, n.steps, "step");
  Dims out(xd.size());
  for (size_t i = 0; i < xd.size(); ++i) {
    const std::string axis = "slice axis " + std::to_string(i) + " of " + describe_value(g, x);
    if (n.steps[i] < 1)
      fail(StatusCode::kShape, axis + ": step " + std::to_string(n.steps[i]) + " is not at least 1");
    if (n.starts[i] < 0 || n.starts[i] > xd[i] || n.stops[i] < 0 || n.stops[i] > xd[i]) {
      fail(StatusCode::kShape, axis + ": bounds " + std::to_string(n.starts[i]) + ":" +
                                   std::to_string(n.stops[i]) + " are not within 0.." +
                                   std::to_string(xd[i]));
    }
    if (n.starts[i] >= n.stops[i]) {
      fail(StatusCode::kShape, axis + " is empty (" + std::to_string(n.starts[i]) + ":" +
                                   std::to_string(n.stops[i]) + "); empty tensors are not supported");
    }
    out[i] = (n.stops[i] - n.starts[i] - 1) / n.steps[i] + 1;  // ceil without overflow for any step
  }
  return {g.node(x).dtype, out};
}

ValueType infer_concat_type(const Graph& g, const Node& n) {
  if (n.operands.empty()) fail(StatusCode::kInvalidArgument, "concat needs at least one operand");
  require_operands(g, n, n.operands.size());
  const Node& first = g.node(n.operands[0]);
  const auto rank = static_cast<int64_t>(first.dims.size());
  if (rank == 0)
    fail(StatusCode::kShape, "concat of a scalar " + describe_value(g, n.operands[0]) + " has no axis");
  if (n.axis < 0 || n.axis >= rank) {
    fail(StatusCode::kShape, "concat axis " + std::to_string(n.axis) + " is out of range for " +
                                 describe_value(g, n.operands[0]));
  }
  Dims out = first.dims;
  const auto a = static_cast<size_t>(n.axis);
  out[a] = 0;
  for (ValueId id : n.operands) {
    const Node& x = g.node(id);
    if (x.dtype != first.dtype) {
      fail(StatusCode::kDtype, "concat needs operands of one dtype, but " + describe_value(g, n.operands[0]) +
                                   " and " + describe_value(g, id) + " differ; insert a cast");
    }
    bool same = x.dims.size() == first.dims.size();
    for (size_t i = 0; same && i < x.dims.size(); ++i) same = i == a || x.dims[i] == first.dims[i];
    if (!same) {
      fail(StatusCode::kShape,
           "concat along axis " + std::to_string(n.axis) + " needs operands whose other dims agree, but " +
               describe_value(g, n.operands[0]) + " and " + describe_value(g, id) + " differ");
    }
    const std::optional<int64_t> sum = checked_add(out[a], x.dims[a]);
    if (!sum)
      fail(StatusCode::kShape,
           "concat result has more elements along axis " + std::to_string(n.axis) + " than int64 can count");
    out[a] = *sum;
  }
  return {first.dtype, out};
}

ValueType infer_pad_type(const Graph& g, const Node& n) {
  require_operands(g, n, 1);
  const ValueId x = n.operands[0];
  const Dims& xd = g.node(x).dims;
  require_per_axis(g, n, x, n.pad_low, "low pad");
  require_per_axis(g, n, x, n.pad_high, "high pad");
  Dims out(xd.size());
  for (size_t i = 0; i < xd.size(); ++i) {
    if (n.pad_low[i] < 0 || n.pad_high[i] < 0) {
      fail(StatusCode::kShape, "pad axis " + std::to_string(i) + " of " + describe_value(g, x) + ": pads " +
                                   std::to_string(n.pad_low[i]) + " and " + std::to_string(n.pad_high[i]) +
                                   " must not be negative (remove elements with slice)");
    }
    const std::optional<int64_t> low = checked_add(xd[i], n.pad_low[i]);
    const std::optional<int64_t> both = low ? checked_add(*low, n.pad_high[i]) : std::nullopt;
    if (!both)
      fail(StatusCode::kShape,
           "pad axis " + std::to_string(i) + ": the padded dim is more than int64 can count");
    out[i] = *both;
  }
  return {g.node(x).dtype, out};
}

ValueType infer_take_type(const Graph& g, const Node& n) {
  require_operands(g, n, 2);
  const ValueId x = n.operands[0], indices = n.operands[1];
  const Node& xn = g.node(x);
  const Node& in = g.node(indices);
  if (in.dtype != DType::kI32 && in.dtype != DType::kI64) {
    fail(StatusCode::kDtype,
         "take needs i32 or i64 indices, but " + describe_value(g, indices) + " is " + dtype_name(in.dtype));
  }
  const auto rank = static_cast<int64_t>(xn.dims.size());
  if (rank == 0) fail(StatusCode::kShape, "take from a scalar " + describe_value(g, x) + " has no axis");
  if (n.axis < 0 || n.axis >= rank) {
    fail(StatusCode::kShape,
         "take axis " + std::to_string(n.axis) + " is out of range for " + describe_value(g, x));
  }
  const auto a = static_cast<size_t>(n.axis);
  Dims out(xn.dims.begin(), xn.dims.begin() + static_cast<std::ptrdiff_t>(a));
  out.insert(out.end(), in.dims.begin(), in.dims.end());
  out.insert(out.end(), xn.dims.begin() + static_cast<std::ptrdiff_t>(a) + 1, xn.dims.end());
  validate_dims(out, "take result");
  return {xn.dtype, out};
}

ValueId build_slice(Graph& g, ValueId x, const std::vector<int64_t>& starts,
                    const std::vector<int64_t>& stops, const std::vector<int64_t>& steps) {
  if (!g.contains(x)) fail(StatusCode::kInvalidArgument, "operand %" + std::to_string(x) + " does not exist");
  const Dims& xd = g.node(x).dims;
  Node n;
  n.op = OpKind::kSlice;
  n.operands = {x};
  n.steps = steps.empty() ? std::vector<int64_t>(xd.size(), 1) : steps;
  if (starts.size() == xd.size() && stops.size() == xd.size()) {
    for (size_t i = 0; i < xd.size(); ++i) {
      n.starts.push_back(clamp_bound(starts[i], xd[i]));
      n.stops.push_back(clamp_bound(stops[i], xd[i]));
    }
  } else {
    n.starts = starts;  // wrong length: infer_type reports it
    n.stops = stops;
  }
  return append_inferred(g, std::move(n));
}

ValueId build_concat(Graph& g, const std::vector<ValueId>& values, int64_t axis) {
  if (values.empty()) fail(StatusCode::kInvalidArgument, "concat needs at least one operand");
  if (!g.contains(values[0]))
    fail(StatusCode::kInvalidArgument, "operand %" + std::to_string(values[0]) + " does not exist");
  Node n;
  n.op = OpKind::kConcat;
  n.operands = values;
  n.axis = normalize_axis(g, OpKind::kConcat, values[0], axis);
  return append_inferred(g, std::move(n));
}

ValueId build_pad(Graph& g, ValueId x, const std::vector<int64_t>& low, const std::vector<int64_t>& high,
                  Scalar value) {
  Node n;
  n.op = OpKind::kPad;
  n.operands = {x};
  n.pad_low = low;
  n.pad_high = high;
  n.value = value;
  return append_inferred(g, std::move(n));
}

ValueId build_pad_f64(Graph& g, ValueId x, const std::vector<int64_t>& low, const std::vector<int64_t>& high,
                      double value) {
  if (!g.contains(x)) fail(StatusCode::kInvalidArgument, "operand %" + std::to_string(x) + " does not exist");
  return build_pad(g, x, low, high, scalar_from_f64(value, g.node(x).dtype));
}

ValueId build_take(Graph& g, ValueId x, ValueId indices, int64_t axis) {
  if (!g.contains(x)) fail(StatusCode::kInvalidArgument, "operand %" + std::to_string(x) + " does not exist");
  Node n;
  n.op = OpKind::kTake;
  n.operands = {x, indices};
  n.axis = normalize_axis(g, OpKind::kTake, x, axis);
  return append_inferred(g, std::move(n));
}

std::vector<ValueId> build_split(Graph& g, ValueId x, int64_t axis, const std::vector<int64_t>& sizes) {
  if (!g.contains(x)) fail(StatusCode::kInvalidArgument, "operand %" + std::to_string(x) + " does not exist");
  const int64_t a = normalize_axis(g, OpKind::kSlice, x, axis);
  const Dims& xd = g.node(x).dims;
  if (sizes.empty()) fail(StatusCode::kInvalidArgument, "split needs at least one section");
  // Every check before the first slice, so a failing split leaves the graph unchanged.
  int64_t total = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k] < 1) {
      fail(StatusCode::kShape, "split section " + std::to_string(k) + " has size " +
                                   std::to_string(sizes[k]) + "; sections must have at least one element");
    }
    const std::optional<int64_t> sum = checked_add(total, sizes[k]);
    total = sum ? *sum : INT64_MAX;
  }
  if (total != xd[static_cast<size_t>(a)]) {
    fail(StatusCode::kShape, "split sections add up to " + std::to_string(total) + " but axis " +
                                 std::to_string(axis) + " of " + describe_value(g, x) + " has " +
                                 std::to_string(xd[static_cast<size_t>(a)]) + " elements");
  }
  std::vector<ValueId> out;
  std::vector<int64_t> starts(xd.size(), 0), stops = xd;
  int64_t offset = 0;
  for (int64_t size : sizes) {
    starts[static_cast<size_t>(a)] = offset;
    stops[static_cast<size_t>(a)] = offset + size;
    out.push_back(build_slice(g, x, starts, stops, {}));
    offset += size;
  }
  return out;
}

}  // namespace fstitch
