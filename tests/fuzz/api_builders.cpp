// The builder calls of ApiProgram: each predicts from the documentation what the call must
// do with its arguments, makes it, and checks the result (after_builder).
#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

#include "api_program.hpp"

namespace fstitch::fuzz {
namespace {

constexpr int kBadEnumCodes[] = {0, -1, 22, 99, INT_MAX, INT_MIN};
constexpr int kDimsMayBeNull = 6;  // in 256: how often a dims or axes array is passed as NULL

fst_graph* const kNoGraph = nullptr;

}  // namespace

void ApiProgram::expect_operand(Expectation& expect, const PickedValue& v) const {
  switch (v.origin) {
    case ValueOrigin::kThisGraph:
      return;
    case ValueOrigin::kInvalid:
    case ValueOrigin::kOtherGraph:
    case ValueOrigin::kDestroyed:
    case ValueOrigin::kOutOfRange:
      expect.fault(FST_ERROR_INVALID_ARGUMENT);
      return;
    case ValueOrigin::kArbitrary:
      expect.unpredictable();
      return;
  }
}

void ApiProgram::after_builder(int slot, const char* function, fst_value result, Expectation expect,
                               const std::optional<ValueType>& type, fst_status error_before,
                               const std::string& message_before) {
  GraphSlot& g = graphs_[static_cast<size_t>(slot)];
  const std::string name = function;
  // One value holds at most 2^62 bytes (docs/API.md, "Size limits"): a larger result is a
  // shape error, whatever its element count.
  if (type && is_dtype(type->dtype) && exceeds_value_byte_limit(*type)) expect.fault(FST_ERROR_SHAPE);
  if (error_before != FST_OK) {
    // Sticky: nothing is built once the graph is in error, and the first error stays.
    if (result != FST_VALUE_INVALID) violation(name + " returned a value on a graph in error");
    check_failure(function, fst_last_error_status());
    if (fst_last_error_status() != error_before) {
      violation(name + " on a graph in error with " + fst_status_string(error_before) + " reported " +
                fst_status_string(fst_last_error_status()));
    }
    if (fst_graph_status(g.graph) != error_before || fst_graph_error_message(g.graph) != message_before)
      violation(name + " changed the first error of a graph in error");
    return;
  }
  if (result == FST_VALUE_INVALID) {
    const fst_status status = fst_last_error_status();
    if (status == FST_OK) violation(name + " returned FST_VALUE_INVALID without an error");
    check_status(function, status, expect);
    if (fst_graph_status(g.graph) != status)
      violation(name + " failed with " + fst_status_string(status) + " but the graph status is " +
                fst_status_string(fst_graph_status(g.graph)));
    if (std::string(fst_graph_error_message(g.graph)) != fst_last_error_message())
      violation(name + ": the graph's error message differs from the last error message");
    g.error = status;
    return;
  }
  if (expect.kind == Expectation::Kind::kFail)
    violation(name + " succeeded but must fail with " + expect.failures.describe());
  if (fst_graph_status(g.graph) != FST_OK) violation(name + " succeeded on a graph now in error");

  ValueType actual;
  size_t rank = 99;
  int64_t dims[FST_MAX_RANK] = {};
  check_status("fst_value_dtype", fst_value_dtype(g.graph, result, &actual.dtype), Expectation::succeed());
  check_status("fst_value_rank", fst_value_rank(g.graph, result, &rank), Expectation::succeed());
  if (rank > FST_MAX_RANK) violation(name + " built a value of rank " + std::to_string(rank));
  check_status("fst_value_dims", fst_value_dims(g.graph, result, FST_MAX_RANK, dims), Expectation::succeed());
  actual.dims.assign(dims, dims + rank);
  if (!is_dtype(actual.dtype) || !dim_value_faults(actual.dims).empty())
    violation(name + " built a value of type " + describe(actual));
  if (type && !(*type == actual))
    violation(name + " built " + describe(actual) + " but the documentation says " + describe(*type));
  if (g.values.size() < kMaxValuesPerGraph) g.values.push_back({result, actual});
}

// One builder call: a NULL graph now and then, the graph state before it, the call, the
// checks; `built` receives the result.
#define FST_FUZZ_BUILD(built, slot, function, expect, type, CALL)                                       \
  do {                                                                                                  \
    GraphSlot& g_ = graphs_[static_cast<size_t>(slot)];                                                 \
    if (in_.chance(4)) {                                                                                \
      fst_graph* graph = kNoGraph;                                                                      \
      clear_last_error();                                                                               \
      const fst_value result_ = (CALL);                                                                 \
      if (result_ != FST_VALUE_INVALID) violation(std::string(function) + " built on a NULL graph");    \
      check_status(function, fst_last_error_status(), Expectation::fail({FST_ERROR_INVALID_ARGUMENT})); \
      break;                                                                                            \
    }                                                                                                   \
    fst_graph* graph = g_.graph;                                                                        \
    const fst_status error_before_ = fst_graph_status(graph);                                           \
    if (error_before_ != g_.error) violation("fst_graph_status changed without a call");                \
    const std::string message_before_ = fst_graph_error_message(graph);                                 \
    clear_last_error();                                                                                 \
    const fst_value result_ = (CALL);                                                                   \
    after_builder(slot, function, result_, expect, type, error_before_, message_before_);               \
    built = result_;                                                                                    \
  } while (0)

void ApiProgram::call_input(int slot) {
  [[maybe_unused]] fst_value built = FST_VALUE_INVALID;
  GraphSlot& g = graphs_[static_cast<size_t>(slot)];
  const std::string name = pick_io_name(slot, false);
  const bool null_name = in_.chance(4);
  const fst_dtype dtype = pick_dtype();
  DimList dims = pick_dims(slot);
  const size_t rank = pick_rank(dims);
  const bool null_dims = in_.chance(kDimsMayBeNull);

  Expectation expect;
  if (null_name || !valid_io_name(name) ||
      std::find(g.input_names.begin(), g.input_names.end(), name) != g.input_names.end())
    expect.fault(FST_ERROR_INVALID_ARGUMENT);
  if (!is_dtype(dtype)) expect.fault(FST_ERROR_INVALID_ARGUMENT);
  expect.fault(dims_faults(rank, dims, null_dims));

  FST_FUZZ_BUILD(
      built, slot, "fst_input", expect, (ValueType{dtype, dims}),
      fst_input(graph, null_name ? nullptr : name.c_str(), dtype, rank, null_dims ? nullptr : dims.data()));
  if (built != FST_VALUE_INVALID) g.input_names.push_back(name);
}

void ApiProgram::call_constant(int slot) {
  [[maybe_unused]] fst_value built = FST_VALUE_INVALID;
  static const double kDoubles[] = {0.0,
                                    -0.0,
                                    1.5,
                                    -2.25,
                                    1e300,
                                    -1e-310,
                                    65504.0,
                                    65520.0,
                                    std::numeric_limits<double>::infinity(),
                                    -std::numeric_limits<double>::infinity(),
                                    std::numeric_limits<double>::quiet_NaN(),
                                    -std::numeric_limits<double>::quiet_NaN(),
                                    9.2233720368547758e18};
  static const int64_t kIntegers[] = {0,   1,   -1,        127,       128,       -129,
                                      255, 256, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN};
  if (in_.chance(32)) return call_constant_tensor(slot);
  const fst_dtype dtype = pick_dtype();
  Expectation expect;
  if (!is_dtype(dtype)) expect.fault(FST_ERROR_INVALID_ARGUMENT);
  if (in_.chance(128)) {
    const double value = in_.chance(64) ? in_.f64() : in_.pick(kDoubles);
    FST_FUZZ_BUILD(built, slot, "fst_constant_f64", expect, (ValueType{dtype, {}}),
                   fst_constant_f64(graph, dtype, value));
  } else {
    const int64_t value = in_.chance(64) ? static_cast<int64_t>(in_.bits(8)) : in_.pick(kIntegers);
    FST_FUZZ_BUILD(built, slot, "fst_constant_i64", expect, (ValueType{dtype, {}}),
                   fst_constant_i64(graph, dtype, value));
  }
}

// A tensor constant from a buffer of at most kTensorBufferBytes: the byte count is the
// tensor's size when it fits (sometimes another count), the data sometimes NULL, and bool
// data sometimes holds a byte other than 0 or 1.
void ApiProgram::call_constant_tensor(int slot) {
  [[maybe_unused]] fst_value built = FST_VALUE_INVALID;
  constexpr size_t kTensorBufferBytes = 4096;
  static unsigned char data[kTensorBufferBytes];
  const fst_dtype dtype = pick_dtype();
  DimList dims = pick_dims(slot);
  const size_t rank = pick_rank(dims);
  const bool null_dims = in_.chance(kDimsMayBeNull);
  const bool null_data = in_.chance(8);
  Expectation expect;
  if (!is_dtype(dtype)) expect.fault(FST_ERROR_INVALID_ARGUMENT);
  const StatusSet faults = dims_faults(rank, dims, null_dims);
  expect.fault(faults);
  uint64_t size = is_dtype(dtype) ? fst_dtype_size(dtype) : 0;
  bool fits = size > 0 && faults.empty();
  for (size_t d = 0; fits && d < rank; ++d) {
    fits = !__builtin_mul_overflow(size, static_cast<uint64_t>(dims[d]), &size) && size <= kTensorBufferBytes;
  }
  size_t bytes = fits ? static_cast<size_t>(size) : kTensorBufferBytes;
  if (in_.chance(8)) bytes = in_.below(kTensorBufferBytes + 1);
  if (!fits || bytes != size || null_data) expect.fault(FST_ERROR_INVALID_ARGUMENT);
  const bool bad_bool = dtype == FST_BOOL && in_.chance(16);
  for (size_t k = 0; k < bytes; ++k) {
    const auto byte = static_cast<unsigned char>(k < 64 ? in_.bits(8) : k * 131);
    data[k] = dtype == FST_BOOL && !bad_bool ? byte & 1 : byte;
  }
  if (bad_bool && bytes > 0) {
    data[0] = 2;
    expect.fault(FST_ERROR_INVALID_ARGUMENT);
  }
  FST_FUZZ_BUILD(built, slot, "fst_constant_tensor", expect, (ValueType{dtype, dims}),
                 fst_constant_tensor(graph, dtype, rank, null_dims ? nullptr : dims.data(),
                                     null_data ? nullptr : data, bytes));
}

void ApiProgram::call_unary(int slot) {
  [[maybe_unused]] fst_value built = FST_VALUE_INVALID;
  const int op = in_.chance(8) ? in_.pick(kBadEnumCodes) : 1 + static_cast<int>(in_.below(21));
  const PickedValue x = pick_value(slot);
  Expectation expect;
  const auto rule = unary_rule(op);
  if (!rule) expect.fault(FST_ERROR_INVALID_ARGUMENT);
  expect_operand(expect, x);
  std::optional<ValueType> type;
  if (x.origin == ValueOrigin::kThisGraph) {
    if (rule && !accepts(*rule, x.type.dtype)) expect.fault(FST_ERROR_DTYPE);
    type = ValueType{unary_yields_bool(op) ? FST_BOOL : x.type.dtype, x.type.dims};
  }
  FST_FUZZ_BUILD(built, slot, "fst_unary", expect, type,
                 fst_unary(graph, static_cast<fst_unary_op>(op), x.value));
}

void ApiProgram::call_binary(int slot) {
  [[maybe_unused]] fst_value built = FST_VALUE_INVALID;
  const int op = in_.chance(8) ? in_.pick(kBadEnumCodes) : 1 + static_cast<int>(in_.below(15));
  const PickedValue a = pick_value(slot);
  const PickedValue b = pick_value(slot);
  Expectation expect;
  const auto rule = binary_rule(op);
  if (!rule) expect.fault(FST_ERROR_INVALID_ARGUMENT);
  expect_operand(expect, a);
  expect_operand(expect, b);
  std::optional<ValueType> type;
  if (a.origin == ValueOrigin::kThisGraph && b.origin == ValueOrigin::kThisGraph) {
    if (a.type.dtype != b.type.dtype) expect.fault(FST_ERROR_DTYPE);
    if (rule && !accepts(*rule, a.type.dtype)) expect.fault(FST_ERROR_DTYPE);
    const auto dims = broadcast_shapes(a.type.dims, b.type.dims);
    // Not broadcastable, or a result with more elements than int64 counts.
    if (!dims || !element_count_of(*dims)) expect.fault(FST_ERROR_SHAPE);
    if (dims) type = ValueType{binary_yields_bool(op) ? FST_BOOL : a.type.dtype, *dims};
    // A comparison is sized at its operands' dtype before it yields bool: past 2^62 bytes
    // there it is a shape error too.
    if (dims && binary_yields_bool(op) && is_dtype(a.type.dtype) &&
        exceeds_value_byte_limit(ValueType{a.type.dtype, *dims}))
      expect.fault(FST_ERROR_SHAPE);
  }
  FST_FUZZ_BUILD(built, slot, "fst_binary", expect, type,
                 fst_binary(graph, static_cast<fst_binary_op>(op), a.value, b.value));
}

void ApiProgram::call_select(int slot) {
  [[maybe_unused]] fst_value built = FST_VALUE_INVALID;
  const PickedValue cond = pick_value(slot);
  const PickedValue a = pick_value(slot);
  const PickedValue b = pick_value(slot);
  Expectation expect;
  expect_operand(expect, cond);
  expect_operand(expect, a);
  expect_operand(expect, b);
  std::optional<ValueType> type;
  if (cond.origin == ValueOrigin::kThisGraph && a.origin == ValueOrigin::kThisGraph &&
      b.origin == ValueOrigin::kThisGraph) {
    if (cond.type.dtype != FST_BOOL || a.type.dtype != b.type.dtype) expect.fault(FST_ERROR_DTYPE);
    auto dims = broadcast_shapes(cond.type.dims, a.type.dims);
    if (dims) dims = broadcast_shapes(*dims, b.type.dims);
    if (!dims || !element_count_of(*dims)) expect.fault(FST_ERROR_SHAPE);
    if (dims) type = ValueType{a.type.dtype, *dims};
  }
  FST_FUZZ_BUILD(built, slot, "fst_select", expect, type, fst_select(graph, cond.value, a.value, b.value));
}

void ApiProgram::call_cast(int slot) {
  [[maybe_unused]] fst_value built = FST_VALUE_INVALID;
  const PickedValue x = pick_value(slot);
  const fst_dtype dtype = pick_dtype();
  Expectation expect;
  expect_operand(expect, x);
  if (!is_dtype(dtype)) expect.fault(FST_ERROR_INVALID_ARGUMENT);
  std::optional<ValueType> type;
  if (x.origin == ValueOrigin::kThisGraph) type = ValueType{dtype, x.type.dims};
  FST_FUZZ_BUILD(built, slot, "fst_cast", expect, type, fst_cast(graph, x.value, dtype));
}

void ApiProgram::call_broadcast(int slot) {
  [[maybe_unused]] fst_value built = FST_VALUE_INVALID;
  const PickedValue x = pick_value(slot);
  DimList dims = pick_dims(slot);
  const size_t rank = pick_rank(dims);
  const bool null_dims = in_.chance(kDimsMayBeNull);
  Expectation expect;
  expect_operand(expect, x);
  const StatusSet faults = dims_faults(rank, dims, null_dims);
  expect.fault(faults);
  std::optional<ValueType> type;
  if (x.origin == ValueOrigin::kThisGraph) {
    if (faults.empty() && !broadcasts_to(x.type.dims, dims)) expect.fault(FST_ERROR_SHAPE);
    type = ValueType{x.type.dtype, dims};
  }
  FST_FUZZ_BUILD(built, slot, "fst_broadcast", expect, type,
                 fst_broadcast(graph, x.value, rank, null_dims ? nullptr : dims.data()));
}

void ApiProgram::call_reduce(int slot) {
  [[maybe_unused]] fst_value built = FST_VALUE_INVALID;
  const int op = in_.chance(8) ? in_.pick(kBadEnumCodes) : 1 + static_cast<int>(in_.below(5));
  const PickedValue x = pick_value(slot);
  const auto rank = static_cast<int64_t>(x.origin == ValueOrigin::kThisGraph ? x.type.dims.size() : 2);
  DimList axes;
  const size_t count = 1 + in_.below(in_.chance(16) ? FST_MAX_RANK : 2);
  for (size_t i = 0; i < count; ++i) {
    if (in_.chance(16)) {
      static const int64_t kBadAxes[] = {8, -9, INT64_MAX, INT64_MIN, 0};
      axes.push_back(in_.pick(kBadAxes));
    } else {
      axes.push_back(rank > 0 ? static_cast<int64_t>(in_.below(static_cast<size_t>(2 * rank))) - rank : 0);
    }
  }
  if (in_.chance(8)) axes.clear();
  size_t naxes = axes.size();
  if (in_.chance(4)) naxes = FST_MAX_RANK + 1 + in_.below(3);
  if (in_.chance(4)) naxes = SIZE_MAX;
  const bool null_axes = in_.chance(kDimsMayBeNull);
  static const int kKeepdims[] = {0, 1, 0, 1, 2, -1};
  const int keepdims = in_.pick(kKeepdims);

  Expectation expect;
  const auto rule = reduce_rule(op);
  if (!rule) expect.fault(FST_ERROR_INVALID_ARGUMENT);
  expect_operand(expect, x);
  if (naxes == 0 || naxes > FST_MAX_RANK)
    expect.fault(FST_ERROR_SHAPE);
  else if (null_axes)
    expect.fault(FST_ERROR_INVALID_ARGUMENT);
  std::optional<ValueType> type;
  if (x.origin == ValueOrigin::kThisGraph && naxes >= 1 && naxes <= FST_MAX_RANK && !null_axes) {
    std::vector<bool> reduced(static_cast<size_t>(rank), false);
    bool axes_ok = rank > 0;
    for (int64_t axis : axes) {
      if (axis < -rank || axis >= rank) {
        axes_ok = false;
        continue;
      }
      const auto a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
      if (reduced[a]) axes_ok = false;
      reduced[a] = true;
    }
    if (!axes_ok) expect.fault(FST_ERROR_SHAPE);
    if (rule && !accepts(*rule, x.type.dtype)) expect.fault(FST_ERROR_DTYPE);
    DimList out;
    for (size_t i = 0; i < static_cast<size_t>(rank); ++i) {
      if (!reduced[i])
        out.push_back(x.type.dims[i]);
      else if (keepdims != 0)
        out.push_back(1);
    }
    type = ValueType{x.type.dtype, out};
  }
  FST_FUZZ_BUILD(built, slot, "fst_reduce", expect, type,
                 fst_reduce(graph, static_cast<fst_reduce_op>(op), x.value, naxes,
                            null_axes ? nullptr : axes.data(), keepdims));
}

void ApiProgram::call_reshape(int slot) {
  [[maybe_unused]] fst_value built = FST_VALUE_INVALID;
  const PickedValue x = pick_value(slot);
  DimList dims;
  if (x.origin == ValueOrigin::kThisGraph && in_.chance(180)) {
    const int64_t total = element_count_of(x.type.dims).value_or(1);
    switch (in_.below(4)) {
      case 0:
        dims = {-1};
        break;
      case 1:
        dims = {total};
        break;
      case 2:
        dims = x.type.dims.empty() ? DimList{1} : DimList{-1, x.type.dims.back()};
        break;
      default:
        dims = x.type.dims;
        dims.insert(dims.begin() + static_cast<long>(in_.below(dims.size() + 1)), in_.chance(64) ? -1 : 1);
        if (dims.size() > FST_MAX_RANK) dims.pop_back();
        break;
    }
  } else {
    dims = pick_dims(slot);
  }
  const size_t rank = pick_rank(dims);
  const bool null_dims = in_.chance(kDimsMayBeNull);

  Expectation expect;
  expect_operand(expect, x);
  std::optional<ValueType> type;
  if (rank > FST_MAX_RANK) {
    expect.fault(FST_ERROR_SHAPE);
  } else if (rank > 0 && null_dims) {
    expect.fault(FST_ERROR_INVALID_ARGUMENT);
  } else if (x.origin == ValueOrigin::kThisGraph) {
    const int64_t total = *element_count_of(x.type.dims);
    const auto inferred = std::count(dims.begin(), dims.end(), -1);
    DimList known;
    for (int64_t d : dims)
      if (d != -1) known.push_back(d);
    const StatusSet faults = dim_value_faults(known);
    const auto product = element_count_of(known);
    if (inferred > 1 || !faults.empty() || !product) {
      expect.fault(FST_ERROR_SHAPE);
      expect.fault(faults);
    } else if (inferred == 1 ? total % *product != 0 : *product != total) {
      expect.fault(FST_ERROR_SHAPE);
    } else {
      DimList resolved = dims;
      for (int64_t& d : resolved)
        if (d == -1) d = total / *product;
      type = ValueType{x.type.dtype, resolved};
    }
  }
  FST_FUZZ_BUILD(built, slot, "fst_reshape", expect, type,
                 fst_reshape(graph, x.value, rank, null_dims ? nullptr : dims.data()));
}

void ApiProgram::call_permute(int slot) {
  [[maybe_unused]] fst_value built = FST_VALUE_INVALID;
  const PickedValue x = pick_value(slot);
  DimList perm;
  const size_t x_rank = x.origin == ValueOrigin::kThisGraph ? x.type.dims.size() : 2;
  for (size_t i = 0; i < x_rank; ++i) perm.push_back(static_cast<int64_t>(i));
  for (size_t i = perm.size(); i > 1; --i) std::swap(perm[i - 1], perm[in_.below(i)]);
  if (in_.chance(24) && !perm.empty()) perm[in_.below(perm.size())] = static_cast<int64_t>(in_.bits(1)) - 128;
  if (in_.chance(16)) perm.push_back(static_cast<int64_t>(perm.size()));
  if (in_.chance(16) && !perm.empty()) perm.pop_back();
  const size_t rank = pick_rank(perm);
  const bool null_perm = in_.chance(kDimsMayBeNull);

  Expectation expect;
  expect_operand(expect, x);
  std::optional<ValueType> type;
  if (rank > FST_MAX_RANK) {
    expect.fault(FST_ERROR_SHAPE);
  } else if (rank > 0 && null_perm) {
    expect.fault(FST_ERROR_INVALID_ARGUMENT);
  } else if (x.origin == ValueOrigin::kThisGraph) {
    std::vector<bool> seen(perm.size(), false);
    bool ok = perm.size() == x_rank;
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[static_cast<size_t>(p)]) {
        ok = false;
        break;
      }
      seen[static_cast<size_t>(p)] = true;
    }
    if (!ok) {
      expect.fault(FST_ERROR_SHAPE);
    } else {
      DimList out;
      for (int64_t p : perm) out.push_back(x.type.dims[static_cast<size_t>(p)]);
      type = ValueType{x.type.dtype, out};
    }
  }
  FST_FUZZ_BUILD(built, slot, "fst_permute", expect, type,
                 fst_permute(graph, x.value, rank, null_perm ? nullptr : perm.data()));
}

void ApiProgram::call_iota(int slot) {
  [[maybe_unused]] fst_value built = FST_VALUE_INVALID;
  const fst_dtype dtype = pick_dtype();
  DimList dims = pick_dims(slot);
  const size_t rank = pick_rank(dims);
  const bool null_dims = in_.chance(kDimsMayBeNull);
  static const int64_t kBadAxes[] = {-1, 8, INT64_MIN, INT64_MAX};
  const int64_t axis = in_.chance(16) ? in_.pick(kBadAxes) : static_cast<int64_t>(in_.below(dims.size() + 1));

  Expectation expect;
  if (!is_dtype(dtype)) expect.fault(FST_ERROR_INVALID_ARGUMENT);
  expect.fault(dims_faults(rank, dims, null_dims));
  if (dtype == FST_BOOL) expect.fault(FST_ERROR_DTYPE);
  if (rank == 0 || axis < 0 || axis >= static_cast<int64_t>(dims.size())) expect.fault(FST_ERROR_SHAPE);
  FST_FUZZ_BUILD(built, slot, "fst_iota", expect, (ValueType{dtype, dims}),
                 fst_iota(graph, dtype, rank, null_dims ? nullptr : dims.data(), axis));
}

void ApiProgram::call_opaque(int slot) {
  [[maybe_unused]] fst_value built = FST_VALUE_INVALID;
  static const char* const kOpaqueNames[] = {"matmul", "conv.2d", "a-b_c", "bad name", "", "x/y", "\xc3\xa9"};
  const char* name = in_.chance(4) ? nullptr : in_.pick(kOpaqueNames);
  std::vector<PickedValue> operands(in_.below(4));
  for (PickedValue& v : operands) v = pick_value(slot);
  std::vector<fst_value> values;
  for (const PickedValue& v : operands) values.push_back(v.value);
  const bool null_inputs = !values.empty() && in_.chance(8);
  const fst_dtype dtype = pick_dtype();
  DimList dims = pick_dims(slot);
  const size_t rank = pick_rank(dims);
  const bool null_dims = in_.chance(kDimsMayBeNull);

  Expectation expect;
  if (name == nullptr || !valid_opaque_name(name) || null_inputs || !is_dtype(dtype))
    expect.fault(FST_ERROR_INVALID_ARGUMENT);
  if (!null_inputs)
    for (const PickedValue& v : operands) expect_operand(expect, v);
  expect.fault(dims_faults(rank, dims, null_dims));
  FST_FUZZ_BUILD(built, slot, "fst_opaque", expect, (ValueType{dtype, dims}),
                 fst_opaque(graph, name, values.size(), null_inputs ? nullptr : values.data(), dtype, rank,
                            null_dims ? nullptr : dims.data()));
  if (built != FST_VALUE_INVALID) graphs_[static_cast<size_t>(slot)].has_opaque = true;
}

void ApiProgram::call_output(int slot) {
  GraphSlot& g = graphs_[static_cast<size_t>(slot)];
  const std::string name = pick_io_name(slot, true);
  const bool null_name = in_.chance(4);
  const PickedValue v = pick_value(slot);
  Expectation expect;
  if (null_name || !valid_io_name(name) ||
      std::find(g.output_names.begin(), g.output_names.end(), name) != g.output_names.end())
    expect.fault(FST_ERROR_INVALID_ARGUMENT);
  expect_operand(expect, v);

  if (in_.chance(4)) {
    clear_last_error();
    check_status("fst_output", fst_output(nullptr, name.c_str(), v.value),
                 Expectation::fail({FST_ERROR_INVALID_ARGUMENT}));
    return;
  }
  const fst_status error_before = fst_graph_status(g.graph);
  const std::string message_before = fst_graph_error_message(g.graph);
  clear_last_error();
  const fst_status status = fst_output(g.graph, null_name ? nullptr : name.c_str(), v.value);
  if (error_before != FST_OK) {
    if (status != error_before) violation("fst_output on a graph in error returned another status");
    check_failure("fst_output", status);
    if (fst_graph_error_message(g.graph) != message_before) violation("fst_output changed the first error");
    return;
  }
  check_status("fst_output", status, expect);
  if (fst_graph_status(g.graph) != status) violation("fst_output's status differs from the graph status");
  if (status != FST_OK) {
    g.error = status;
    return;
  }
  g.output_names.push_back(name);
}

// ---- data movement -----------------------------------------------------------------------

namespace {

// A slice bound, pad width or axis: small mostly, now and then an extreme.
int64_t pick_movement_int(FuzzInput& in, int64_t lo, int64_t hi) {
  if (in.chance(6)) return in.chance(128) ? INT64_MAX : INT64_MIN;
  return lo + static_cast<int64_t>(in.below(static_cast<size_t>(hi - lo + 1)));
}

// Python's bound normalization for a positive step (include/fstitch.h, fst_slice).
int64_t clamp_slice_bound(int64_t bound, int64_t dim) {
  if (bound < 0) return bound + dim < 0 ? 0 : bound + dim;
  return bound > dim ? dim : bound;
}

}  // namespace

void ApiProgram::call_slice(int slot) {
  [[maybe_unused]] fst_value built = FST_VALUE_INVALID;
  const PickedValue x = pick_value(slot);
  const size_t x_rank = x.origin == ValueOrigin::kThisGraph ? x.type.dims.size() : 2;
  DimList starts, stops, steps;
  for (size_t i = 0; i < x_rank; ++i) {
    starts.push_back(pick_movement_int(in_, -6, 6));
    stops.push_back(pick_movement_int(in_, -6, 40));
    steps.push_back(in_.chance(200) ? 1 : pick_movement_int(in_, -1, 4));
  }
  const size_t rank = in_.chance(8) ? x_rank + 1 : x_rank;
  if (rank > x_rank) starts.push_back(0), stops.push_back(1), steps.push_back(1);
  const bool null_bounds = in_.chance(kDimsMayBeNull);
  const bool null_steps = in_.chance(64);
  Expectation expect;
  expect_operand(expect, x);
  std::optional<ValueType> type;
  if (x.origin == ValueOrigin::kThisGraph) {
    if (rank != x_rank) {
      expect.fault(FST_ERROR_SHAPE);
    } else if (rank > 0 && null_bounds) {
      expect.fault(FST_ERROR_INVALID_ARGUMENT);
    } else {
      DimList out;
      for (size_t i = 0; i < rank; ++i) {
        const int64_t step = null_steps ? 1 : steps[i];
        const int64_t start = clamp_slice_bound(starts[i], x.type.dims[i]);
        const int64_t stop = clamp_slice_bound(stops[i], x.type.dims[i]);
        if (step < 1 || start >= stop) {
          expect.fault(FST_ERROR_SHAPE);
          break;
        }
        out.push_back((stop - start - 1) / step + 1);
      }
      if (expect.kind == Expectation::Kind::kSucceed) type = ValueType{x.type.dtype, out};
    }
  }
  FST_FUZZ_BUILD(built, slot, "fst_slice", expect, type,
                 fst_slice(graph, x.value, rank, null_bounds ? nullptr : starts.data(),
                           null_bounds ? nullptr : stops.data(), null_steps ? nullptr : steps.data()));
}

void ApiProgram::call_concat(int slot) {
  [[maybe_unused]] fst_value built = FST_VALUE_INVALID;
  const size_t n = in_.chance(8) ? 0 : 1 + in_.below(3);
  std::vector<PickedValue> picked;
  for (size_t i = 0; i < n; ++i) picked.push_back(pick_value(slot));
  const int64_t axis = pick_movement_int(in_, -3, 3);
  const bool null_values = n > 0 && in_.chance(kDimsMayBeNull);
  Expectation expect;
  if (n == 0 || null_values) expect.fault(FST_ERROR_INVALID_ARGUMENT);
  bool known = n > 0;
  for (const PickedValue& v : picked) {
    expect_operand(expect, v);
    known = known && v.origin == ValueOrigin::kThisGraph;
  }
  std::optional<ValueType> type;
  if (known && !null_values) {
    const ValueType& first = picked[0].type;
    const auto rank = static_cast<int64_t>(first.dims.size());
    if (rank == 0 || axis < -rank || axis >= rank) {
      expect.fault(FST_ERROR_SHAPE);
    } else {
      const auto a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
      DimList out = first.dims;
      out[a] = 0;
      for (const PickedValue& v : picked) {
        if (v.type.dtype != first.dtype) expect.fault(FST_ERROR_DTYPE);
        bool same = v.type.dims.size() == first.dims.size();
        for (size_t i = 0; same && i < first.dims.size(); ++i)
          same = i == a || v.type.dims[i] == first.dims[i];
        if (!same) {
          expect.fault(FST_ERROR_SHAPE);
          continue;
        }
        if (__builtin_add_overflow(out[a], v.type.dims[a], &out[a])) expect.fault(FST_ERROR_SHAPE);
      }
      if (expect.kind == Expectation::Kind::kSucceed) type = ValueType{first.dtype, out};
    }
  }
  std::vector<fst_value> values;
  for (const PickedValue& v : picked) values.push_back(v.value);
  FST_FUZZ_BUILD(built, slot, "fst_concat", expect, type,
                 fst_concat(graph, n, null_values ? nullptr : values.data(), axis));
}

void ApiProgram::call_pad(int slot) {
  [[maybe_unused]] fst_value built = FST_VALUE_INVALID;
  const PickedValue x = pick_value(slot);
  const size_t x_rank = x.origin == ValueOrigin::kThisGraph ? x.type.dims.size() : 2;
  DimList low, high;
  for (size_t i = 0; i < x_rank; ++i) {
    low.push_back(in_.chance(224) ? static_cast<int64_t>(in_.below(3)) : pick_movement_int(in_, -2, 2));
    high.push_back(in_.chance(224) ? static_cast<int64_t>(in_.below(3)) : pick_movement_int(in_, -2, 2));
  }
  const size_t rank = in_.chance(8) && x_rank > 0 ? x_rank - 1 : x_rank;
  const bool null_pads = in_.chance(kDimsMayBeNull);
  const double value = static_cast<double>(static_cast<int64_t>(in_.bits(2)) - 32768) / 8.0;
  Expectation expect;
  expect_operand(expect, x);
  std::optional<ValueType> type;
  if (x.origin == ValueOrigin::kThisGraph) {
    if (rank != x_rank) {
      expect.fault(FST_ERROR_SHAPE);
    } else if (rank > 0 && null_pads) {
      expect.fault(FST_ERROR_INVALID_ARGUMENT);
    } else {
      DimList out = x.type.dims;
      for (size_t i = 0; i < rank; ++i) {
        if (low[i] < 0 || high[i] < 0 || __builtin_add_overflow(out[i], low[i], &out[i]) ||
            __builtin_add_overflow(out[i], high[i], &out[i])) {
          expect.fault(FST_ERROR_SHAPE);
          break;
        }
      }
      if (expect.kind == Expectation::Kind::kSucceed) type = ValueType{x.type.dtype, out};
    }
  }
  FST_FUZZ_BUILD(built, slot, "fst_pad", expect, type,
                 fst_pad(graph, x.value, rank, null_pads ? nullptr : low.data(),
                         null_pads ? nullptr : high.data(), value));
}

void ApiProgram::call_take(int slot) {
  [[maybe_unused]] fst_value built = FST_VALUE_INVALID;
  const PickedValue x = pick_value(slot);
  const PickedValue indices = pick_value(slot);
  const int64_t axis = pick_movement_int(in_, -3, 3);
  Expectation expect;
  expect_operand(expect, x);
  expect_operand(expect, indices);
  std::optional<ValueType> type;
  if (x.origin == ValueOrigin::kThisGraph) {
    const auto rank = static_cast<int64_t>(x.type.dims.size());
    if (rank == 0 || axis < -rank || axis >= rank) expect.fault(FST_ERROR_SHAPE);
    if (indices.origin == ValueOrigin::kThisGraph) {
      if (indices.type.dtype != FST_I32 && indices.type.dtype != FST_I64) expect.fault(FST_ERROR_DTYPE);
      if (expect.kind == Expectation::Kind::kSucceed) {
        const auto a = static_cast<size_t>(axis < 0 ? axis + rank : axis);
        DimList out(x.type.dims.begin(), x.type.dims.begin() + static_cast<std::ptrdiff_t>(a));
        out.insert(out.end(), indices.type.dims.begin(), indices.type.dims.end());
        out.insert(out.end(), x.type.dims.begin() + static_cast<std::ptrdiff_t>(a) + 1, x.type.dims.end());
        if (out.size() > FST_MAX_RANK || !dim_value_faults(out).empty()) {
          expect.fault(FST_ERROR_SHAPE);
        } else {
          type = ValueType{x.type.dtype, out};
        }
      }
    }
  }
  FST_FUZZ_BUILD(built, slot, "fst_take", expect, type, fst_take(graph, x.value, indices.value, axis));
}

// fst_split returns a status: checked like fst_output, with the values it builds (or the
// untouched out_values on failure).
void ApiProgram::call_split(int slot) {
  GraphSlot& g = graphs_[static_cast<size_t>(slot)];
  const PickedValue x = pick_value(slot);
  const int64_t axis = pick_movement_int(in_, -3, 3);
  DimList sizes;
  const size_t n = in_.chance(8) ? 0 : 1 + in_.below(3);
  int64_t dim = 0;
  const bool known = x.origin == ValueOrigin::kThisGraph;
  const auto rank = known ? static_cast<int64_t>(x.type.dims.size()) : 0;
  const bool axis_ok = known && rank > 0 && axis >= -rank && axis < rank;
  if (axis_ok) dim = x.type.dims[static_cast<size_t>(axis < 0 ? axis + rank : axis)];
  for (size_t i = 0; i < n; ++i) {
    const bool last = i + 1 == n;
    int64_t size = static_cast<int64_t>(in_.below(4));
    if (last && in_.chance(200) && axis_ok) {
      int64_t used = 0;
      for (int64_t s : sizes) used += s;
      size = dim - used;  // often adds up
    }
    sizes.push_back(size);
  }
  const bool null_sizes = n > 0 && in_.chance(kDimsMayBeNull);
  const bool null_out = in_.chance(kDimsMayBeNull);
  Expectation expect;
  if (null_out || n == 0 || null_sizes) expect.fault(FST_ERROR_INVALID_ARGUMENT);
  expect_operand(expect, x);
  std::vector<ValueType> types;
  if (known && !null_sizes && n > 0) {
    if (!axis_ok) expect.fault(FST_ERROR_SHAPE);
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 1) expect.fault(FST_ERROR_SHAPE);
      total += s;
    }
    if (axis_ok && total != dim) expect.fault(FST_ERROR_SHAPE);
    if (axis_ok && expect.kind == Expectation::Kind::kSucceed) {
      for (int64_t s : sizes) {
        ValueType t = x.type;
        t.dims[static_cast<size_t>(axis < 0 ? axis + rank : axis)] = s;
        types.push_back(t);
      }
    }
  }
  std::vector<fst_value> out(std::max<size_t>(n, 1), static_cast<fst_value>(0x5e5e5e5e));
  const fst_status error_before = fst_graph_status(g.graph);
  const std::string message_before = fst_graph_error_message(g.graph);
  clear_last_error();
  const fst_status status = fst_split(g.graph, x.value, axis, n, null_sizes ? nullptr : sizes.data(),
                                      null_out ? nullptr : out.data());
  const bool untouched = std::all_of(out.begin(), out.end(),
                                     [](fst_value v) { return v == static_cast<fst_value>(0x5e5e5e5e); });
  if (status != FST_OK && !untouched) violation("fst_split wrote out_values on failure");
  if (error_before != FST_OK) {
    if (status != error_before) violation("fst_split on a graph in error returned another status");
    check_failure("fst_split", status);
    if (fst_graph_error_message(g.graph) != message_before) violation("fst_split changed the first error");
    return;
  }
  check_status("fst_split", status, expect);
  if (fst_graph_status(g.graph) != status) violation("fst_split's status differs from the graph status");
  if (status != FST_OK) {
    g.error = status;
    return;
  }
  for (size_t i = 0; i < n && i < types.size(); ++i) {
    ValueType actual;
    size_t value_rank = 99;
    int64_t dims[FST_MAX_RANK] = {};
    check_status("fst_value_dtype", fst_value_dtype(g.graph, out[i], &actual.dtype), Expectation::succeed());
    check_status("fst_value_rank", fst_value_rank(g.graph, out[i], &value_rank), Expectation::succeed());
    check_status("fst_value_dims", fst_value_dims(g.graph, out[i], FST_MAX_RANK, dims),
                 Expectation::succeed());
    actual.dims.assign(dims, dims + std::min<size_t>(value_rank, FST_MAX_RANK));
    if (!(actual == types[i]))
      violation("fst_split built " + describe(actual) + " but the documentation says " + describe(types[i]));
    if (g.values.size() < kMaxValuesPerGraph) g.values.push_back({out[i], actual});
  }
}

}  // namespace fstitch::fuzz
