#include "ir/builder.hpp"

#include <algorithm>

#include "ir/movement.hpp"
#include "support/error.hpp"
#include "support/quote.hpp"

namespace fstitch {
namespace {

void require_operand(const Graph& g, ValueId id) {
  if (!g.contains(id))
    fail(StatusCode::kInvalidArgument, "operand %" + std::to_string(id) + " does not exist");
}

void require_operand_count(const Node& n, size_t count) {
  if (n.operands.size() != count) {
    fail(StatusCode::kInvalidArgument, std::string(op_name(n.op)) + " takes " + std::to_string(count) +
                                           " operand(s), got " + std::to_string(n.operands.size()));
  }
}

void require_dtype(const Graph& g, OpKind op, ValueId id) {
  DTypeRule rule = op_dtype_rule(op);
  DType t = g.node(id).dtype;
  if (!dtype_accepted(rule, t)) {
    fail(StatusCode::kDtype, std::string(op_name(op)) + " needs " + dtype_rule_description(rule) + ", but " +
                                 describe_value(g, id) + " is " + dtype_name(t));
  }
}

void require_same_dtype(const Graph& g, OpKind op, ValueId a, ValueId b) {
  if (g.node(a).dtype != g.node(b).dtype) {
    fail(StatusCode::kDtype, std::string(op_name(op)) + " needs operands of one dtype, but " +
                                 describe_value(g, a) + " and " + describe_value(g, b) +
                                 " differ; insert a cast");
  }
}

void require_same_dims(const Graph& g, OpKind op, ValueId a, ValueId b) {
  if (g.node(a).dims != g.node(b).dims) {
    fail(StatusCode::kShape, std::string(op_name(op)) + " needs operands of one shape, but " +
                                 describe_value(g, a) + " and " + describe_value(g, b) + " differ");
  }
}

// True if `from` broadcasts to `to` by numpy rules.
bool broadcastable_to(const Dims& from, const Dims& to) {
  if (from.size() > to.size()) return false;
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] != to[offset + i] && from[i] != 1) return false;
  }
  return true;
}

ValueId append_inferred(Graph& g, Node n) {
  ValueType t = infer_type(g, n);
  n.dtype = t.dtype;
  n.dims = std::move(t.dims);
  return g.append(std::move(n));
}

}  // namespace

Dims broadcast_dims(const Dims& a, const Dims& b) {
  size_t rank = std::max(a.size(), b.size());
  Dims out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      fail(StatusCode::kShape, "shapes " + dims_to_string(a) + " and " + dims_to_string(b) +
                                   " do not broadcast (dim " + std::to_string(i) + " of the result: " +
                                   std::to_string(da) + " vs " + std::to_string(db) + ")");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void validate_io_name(const std::string& name, const std::string& what) {
  if (name.empty()) fail(StatusCode::kInvalidArgument, what + " name is empty");
  for (unsigned char c : name) {
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      fail(StatusCode::kInvalidArgument,
           what + " name " + quote_name(name) +
               " has a character that is not printable ASCII or is a quote/backslash");
    }
  }
}

void validate_opaque_name(const std::string& name) {
  if (name.empty()) fail(StatusCode::kInvalidArgument, "opaque operation name is empty");
  for (unsigned char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '.' || c == '-';
    if (!ok) {
      fail(StatusCode::kInvalidArgument, "opaque operation name " + quote_name(name) +
                                             " may contain only letters, digits, '_', '.' and '-'");
    }
  }
}

namespace {

ValueType infer_operation_type(const Graph& g, const Node& n) {
  for (ValueId id : n.operands) require_operand(g, id);
  const std::string op = op_name(n.op);
  switch (op_family(n.op)) {
    case OpFamily::kInput:
      require_operand_count(n, 0);
      validate_io_name(n.name, "input");
      validate_dims(n.dims, "input " + quote_name(n.name));
      return {n.dtype, n.dims};
    case OpFamily::kConstant:
      require_operand_count(n, 0);
      if (!n.dims.empty()) fail(StatusCode::kShape, "constant must be a scalar (rank 0)");
      return {n.dtype, n.dims};
    case OpFamily::kUnary: {
      require_operand_count(n, 1);
      require_dtype(g, n.op, n.operands[0]);
      const Node& x = g.node(n.operands[0]);
      return {op_yields_bool(n.op) ? DType::kBool : x.dtype, x.dims};
    }
    case OpFamily::kBinary: {
      require_operand_count(n, 2);
      require_same_dtype(g, n.op, n.operands[0], n.operands[1]);
      require_dtype(g, n.op, n.operands[0]);
      require_same_dims(g, n.op, n.operands[0], n.operands[1]);
      const Node& a = g.node(n.operands[0]);
      return {op_yields_bool(n.op) ? DType::kBool : a.dtype, a.dims};
    }
    case OpFamily::kSelect: {
      require_operand_count(n, 3);
      if (g.node(n.operands[0]).dtype != DType::kBool) {
        fail(StatusCode::kDtype, "select needs a bool condition, but " + describe_value(g, n.operands[0]) +
                                     " is " + dtype_name(g.node(n.operands[0]).dtype));
      }
      require_same_dtype(g, n.op, n.operands[1], n.operands[2]);
      require_same_dims(g, n.op, n.operands[0], n.operands[1]);
      require_same_dims(g, n.op, n.operands[1], n.operands[2]);
      const Node& a = g.node(n.operands[1]);
      return {a.dtype, a.dims};
    }
    case OpFamily::kCast:
      require_operand_count(n, 1);
      return {n.dtype, g.node(n.operands[0]).dims};
    case OpFamily::kBroadcast: {
      require_operand_count(n, 1);
      validate_dims(n.dims, "broadcast target");
      const Node& x = g.node(n.operands[0]);
      if (!broadcastable_to(x.dims, n.dims)) {
        fail(StatusCode::kShape, "cannot broadcast " + describe_value(g, n.operands[0]) + " to " +
                                     dims_to_string(n.dims) +
                                     " (numpy rules: align at the right; each dim must match or be 1)");
      }
      return {x.dtype, n.dims};
    }
    case OpFamily::kReduce: {
      require_operand_count(n, 1);
      require_dtype(g, n.op, n.operands[0]);
      const Node& x = g.node(n.operands[0]);
      const auto rank = static_cast<int64_t>(x.dims.size());
      if (rank == 0)
        fail(StatusCode::kShape, op + " of a scalar " + describe_value(g, n.operands[0]) + " has no axis");
      if (n.axes.empty()) fail(StatusCode::kShape, op + " needs at least one axis");
      for (size_t i = 0; i < n.axes.size(); ++i) {
        if (n.axes[i] < 0 || n.axes[i] >= rank) {
          fail(StatusCode::kShape, op + ": axis " + std::to_string(n.axes[i]) + " is out of range for " +
                                       describe_value(g, n.operands[0]));
        }
        if (i > 0 && n.axes[i] <= n.axes[i - 1]) {
          fail(StatusCode::kShape, op + ": axes must be distinct and increasing");
        }
      }
      Dims out;
      for (int64_t i = 0; i < rank; ++i) {
        bool reduced = std::binary_search(n.axes.begin(), n.axes.end(), i);
        if (!reduced) {
          out.push_back(x.dims[static_cast<size_t>(i)]);
        } else if (n.keepdims) {
          out.push_back(1);
        }
      }
      return {x.dtype, out};
    }
    case OpFamily::kReshape: {
      require_operand_count(n, 1);
      validate_dims(n.dims, "reshape target");
      const Node& x = g.node(n.operands[0]);
      if (element_count(n.dims) != element_count(x.dims)) {
        fail(StatusCode::kShape, "cannot reshape " + describe_value(g, n.operands[0]) + " (" +
                                     std::to_string(element_count(x.dims)) + " elements) to " +
                                     dims_to_string(n.dims) + " (" + std::to_string(element_count(n.dims)) +
                                     " elements)");
      }
      return {x.dtype, n.dims};
    }
    case OpFamily::kPermute: {
      require_operand_count(n, 1);
      const Node& x = g.node(n.operands[0]);
      if (n.axes.size() != x.dims.size()) {
        fail(StatusCode::kShape, "permutation has " + std::to_string(n.axes.size()) + " entries but " +
                                     describe_value(g, n.operands[0]) + " has rank " +
                                     std::to_string(x.dims.size()));
      }
      std::vector<bool> seen(n.axes.size(), false);
      Dims out;
      for (int64_t p : n.axes) {
        if (p < 0 || p >= static_cast<int64_t>(n.axes.size()) || seen[static_cast<size_t>(p)]) {
          fail(StatusCode::kShape, "permutation " + dims_to_string(n.axes) + " is not a permutation of 0.." +
                                       std::to_string(static_cast<int64_t>(n.axes.size()) - 1));
        }
        seen[static_cast<size_t>(p)] = true;
        out.push_back(x.dims[static_cast<size_t>(p)]);
      }
      return {x.dtype, out};
    }
    case OpFamily::kIota: {
      require_operand_count(n, 0);
      if (is_bool(n.dtype)) fail(StatusCode::kDtype, "iota needs a numeric dtype, not bool");
      validate_dims(n.dims, "iota shape");
      if (n.dims.empty()) fail(StatusCode::kShape, "iota needs rank at least 1");
      if (n.axis < 0 || n.axis >= static_cast<int64_t>(n.dims.size())) {
        fail(StatusCode::kShape,
             "iota axis " + std::to_string(n.axis) + " is out of range for shape " + dims_to_string(n.dims));
      }
      return {n.dtype, n.dims};
    }
    case OpFamily::kSlice:
      return infer_slice_type(g, n);
    case OpFamily::kConcat:
      return infer_concat_type(g, n);
    case OpFamily::kPad:
      return infer_pad_type(g, n);
    case OpFamily::kTake:
      return infer_take_type(g, n);
    case OpFamily::kTensor:
      require_operand_count(n, 0);
      validate_tensor_data(n.dtype, n.dims, n.data.get());
      return {n.dtype, n.dims};
    case OpFamily::kOpaque:
      validate_opaque_name(n.name);
      validate_dims(n.dims, "opaque " + quote_name(n.name) + " output");
      return {n.dtype, n.dims};
  }
  fail(StatusCode::kInternal, "unknown operation family");
}

}  // namespace

ValueType infer_type(const Graph& g, const Node& n) {
  ValueType t = infer_operation_type(g, n);
  // Every value passes here, whatever built it, so byte sizes downstream cannot overflow.
  validate_value_size(
      t.dtype, t.dims,
      n.op == OpKind::kInput ? "input \"" + n.name + "\"" : std::string(op_name(n.op)) + " result");
  return t;
}

ValueId build_input(Graph& g, const std::string& name, DType dtype, const Dims& dims) {
  validate_io_name(name, "input");
  if (g.has_input_named(name))
    fail(StatusCode::kInvalidArgument, "an input named " + quote_name(name) + " already exists");
  Node n;
  n.op = OpKind::kInput;
  n.dtype = dtype;
  n.dims = dims;
  n.name = name;
  return append_inferred(g, std::move(n));
}

ValueId build_constant(Graph& g, DType dtype, Scalar value) {
  Node n;
  n.op = OpKind::kConstant;
  n.dtype = dtype;
  n.value = value;
  return append_inferred(g, std::move(n));
}

ValueId build_tensor_constant(Graph& g, DType dtype, const Dims& dims, TensorData data) {
  Node n;
  n.op = OpKind::kTensor;
  n.dtype = dtype;
  n.dims = dims;
  n.data = std::move(data);
  return append_inferred(g, std::move(n));
}

ValueId build_constant_f64(Graph& g, DType dtype, double value) {
  return build_constant(g, dtype, scalar_from_f64(value, dtype));
}

ValueId build_constant_i64(Graph& g, DType dtype, int64_t value) {
  return build_constant(g, dtype, scalar_from_i64(value, dtype));
}

ValueId build_unary(Graph& g, OpKind op, ValueId x) {
  Node n;
  n.op = op;
  n.operands = {x};
  return append_inferred(g, std::move(n));
}

ValueId build_binary(Graph& g, OpKind op, ValueId a, ValueId b) {
  require_operand(g, a);
  require_operand(g, b);
  // Check dtypes before inserting broadcasts so a failing call leaves the graph unchanged.
  require_same_dtype(g, op, a, b);
  require_dtype(g, op, a);
  Dims out = broadcast_dims(g.node(a).dims, g.node(b).dims);
  validate_value_size(g.node(a).dtype, out, std::string(op_name(op)) + " result");
  ValueId ba = build_broadcast(g, a, out);
  ValueId bb = build_broadcast(g, b, out);
  Node n;
  n.op = op;
  n.operands = {ba, bb};
  return append_inferred(g, std::move(n));
}

ValueId build_select(Graph& g, ValueId cond, ValueId a, ValueId b) {
  for (ValueId id : {cond, a, b}) require_operand(g, id);
  if (g.node(cond).dtype != DType::kBool) {
    fail(StatusCode::kDtype, "select needs a bool condition, but " + describe_value(g, cond) + " is " +
                                 dtype_name(g.node(cond).dtype));
  }
  require_same_dtype(g, OpKind::kSelect, a, b);
  Dims out = broadcast_dims(broadcast_dims(g.node(cond).dims, g.node(a).dims), g.node(b).dims);
  // Before any broadcast is added, so that a failing call leaves the graph unchanged.
  validate_value_size(g.node(a).dtype, out, "select result");
  Node n;
  n.op = OpKind::kSelect;
  n.operands = {build_broadcast(g, cond, out), build_broadcast(g, a, out), build_broadcast(g, b, out)};
  return append_inferred(g, std::move(n));
}

ValueId build_cast(Graph& g, ValueId x, DType dtype) {
  Node n;
  n.op = OpKind::kCast;
  n.operands = {x};
  n.dtype = dtype;
  return append_inferred(g, std::move(n));
}

ValueId build_broadcast(Graph& g, ValueId x, const Dims& dims) {
  require_operand(g, x);
  if (g.node(x).dims == dims) return x;
  Node n;
  n.op = OpKind::kBroadcast;
  n.operands = {x};
  n.dims = dims;
  return append_inferred(g, std::move(n));
}

ValueId build_reduce(Graph& g, OpKind op, ValueId x, const std::vector<int64_t>& axes, bool keepdims) {
  require_operand(g, x);
  const auto rank = static_cast<int64_t>(g.node(x).dims.size());
  std::vector<int64_t> normalized;
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) {
      fail(StatusCode::kShape, std::string(op_name(op)) + ": axis " + std::to_string(axis) +
                                   " is out of range for " + describe_value(g, x) + " (valid: " +
                                   std::to_string(-rank) + ".." + std::to_string(rank - 1) + ")");
    }
    int64_t a = axis < 0 ? axis + rank : axis;
    if (std::find(normalized.begin(), normalized.end(), a) != normalized.end()) {
      fail(StatusCode::kShape, std::string(op_name(op)) + ": axis " + std::to_string(axis) + " is repeated");
    }
    normalized.push_back(a);
  }
  std::sort(normalized.begin(), normalized.end());
  Node n;
  n.op = op;
  n.operands = {x};
  n.axes = normalized;
  n.keepdims = keepdims;
  return append_inferred(g, std::move(n));
}

ValueId build_reshape(Graph& g, ValueId x, const Dims& dims) {
  require_operand(g, x);
  Dims resolved = dims;
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (inferred >= 0)
        fail(StatusCode::kShape, "reshape target " + dims_to_string(dims) + " has more than one -1");
      inferred = static_cast<int>(i);
    } else if (dims[i] >= 1 && known <= INT64_MAX / dims[i]) {
      known *= dims[i];
    }
  }
  if (inferred >= 0) {
    int64_t total = element_count(g.node(x).dims);
    if (known <= 0 || total % known != 0) {
      fail(StatusCode::kShape, "cannot reshape " + describe_value(g, x) + " to " + dims_to_string(dims) +
                                   ": the element count " + std::to_string(total) + " is not divisible by " +
                                   std::to_string(known));
    }
    resolved[static_cast<size_t>(inferred)] = total / known;
  }
  Node n;
  n.op = OpKind::kReshape;
  n.operands = {x};
  n.dims = resolved;
  return append_inferred(g, std::move(n));
}

ValueId build_permute(Graph& g, ValueId x, const std::vector<int64_t>& perm) {
  Node n;
  n.op = OpKind::kPermute;
  n.operands = {x};
  n.axes = perm;
  return append_inferred(g, std::move(n));
}

ValueId build_iota(Graph& g, DType dtype, const Dims& dims, int64_t axis) {
  Node n;
  n.op = OpKind::kIota;
  n.dtype = dtype;
  n.dims = dims;
  n.axis = axis;
  return append_inferred(g, std::move(n));
}

ValueId build_opaque(Graph& g, const std::string& name, const std::vector<ValueId>& inputs, DType dtype,
                     const Dims& dims) {
  Node n;
  n.op = OpKind::kOpaque;
  n.operands = inputs;
  n.dtype = dtype;
  n.dims = dims;
  n.name = name;
  return append_inferred(g, std::move(n));
}

void build_output(Graph& g, const std::string& name, ValueId value) {
  validate_io_name(name, "output");
  require_operand(g, value);
  if (g.has_output_named(name))
    fail(StatusCode::kInvalidArgument, "an output named " + quote_name(name) + " already exists");
  g.add_output(name, value);
}

}  // namespace fstitch
