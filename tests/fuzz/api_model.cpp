#include "api_model.hpp"

namespace fstitch::fuzz {

std::string describe(const ValueType& type) {
  std::string text = fst_dtype_name(type.dtype);
  text += "[";
  for (size_t i = 0; i < type.dims.size(); ++i) text += (i ? "," : "") + std::to_string(type.dims[i]);
  return text + "]";
}

bool is_dtype(int code) {
  return code >= FST_F32 && code <= FST_BOOL;
}

bool is_floating_point(fst_dtype dtype) {
  return dtype == FST_F32 || dtype == FST_F16 || dtype == FST_BF16 || dtype == FST_F64;
}

bool accepts(DTypeRule rule, fst_dtype dtype) {
  switch (rule) {
    case DTypeRule::kAny:
      return true;
    case DTypeRule::kNotBool:
      return dtype != FST_BOOL;
    case DTypeRule::kFloatingPoint:
      return is_floating_point(dtype);
  }
  return false;
}

std::optional<DTypeRule> unary_rule(int op) {
  switch (op) {
    case FST_UNARY_NEG:
    case FST_UNARY_ABS:
    case FST_UNARY_RELU:
    case FST_UNARY_SIGN:
      return DTypeRule::kNotBool;
    case FST_UNARY_LOGICAL_NOT:
      return DTypeRule::kAny;
    default:
      if (op >= FST_UNARY_NEG && op <= FST_UNARY_LOGICAL_NOT) return DTypeRule::kFloatingPoint;
      return std::nullopt;
  }
}

std::optional<DTypeRule> binary_rule(int op) {
  switch (op) {
    case FST_BINARY_ADD:
    case FST_BINARY_SUB:
    case FST_BINARY_MUL:
    case FST_BINARY_DIV:
      return DTypeRule::kNotBool;
    case FST_BINARY_POW:
      return DTypeRule::kFloatingPoint;
    default:
      if (op >= FST_BINARY_MAX && op <= FST_BINARY_LOGICAL_OR) return DTypeRule::kAny;
      return std::nullopt;
  }
}

std::optional<DTypeRule> reduce_rule(int op) {
  switch (op) {
    case FST_REDUCE_SUM:
    case FST_REDUCE_PROD:
      return DTypeRule::kNotBool;
    case FST_REDUCE_MEAN:
      return DTypeRule::kFloatingPoint;
    case FST_REDUCE_MAX:
    case FST_REDUCE_MIN:
      return DTypeRule::kAny;
    default:
      return std::nullopt;
  }
}

bool unary_yields_bool(int op) {
  return op == FST_UNARY_LOGICAL_NOT;
}

bool binary_yields_bool(int op) {
  return op >= FST_BINARY_EQ && op <= FST_BINARY_LOGICAL_OR;
}

StatusSet dim_value_faults(const DimList& dims) {
  StatusSet faults;
  int64_t product = 1;
  bool overflow = false;
  for (int64_t d : dims) {
    if (d == 0) {
      faults.add(FST_ERROR_UNSUPPORTED);  // empty tensors are not supported
    } else if (d < 0) {
      faults.add(FST_ERROR_SHAPE);
    } else if (!overflow && __builtin_mul_overflow(product, d, &product)) {
      overflow = true;
    }
  }
  if (overflow) faults.add(FST_ERROR_SHAPE);
  return faults;
}

bool exceeds_value_byte_limit(const ValueType& type) {
  uint64_t bytes = fst_dtype_size(type.dtype);
  for (int64_t d : type.dims) {
    if (d < 1) return false;  // a fault of its own
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes)) return true;
  }
  return bytes > (uint64_t{1} << 62);
}

StatusSet dims_faults(size_t rank, const DimList& dims, bool array_is_null) {
  StatusSet faults;
  if (rank > FST_MAX_RANK) {
    faults.add(FST_ERROR_SHAPE);
    return faults;
  }
  if (rank > 0 && array_is_null) {
    faults.add(FST_ERROR_INVALID_ARGUMENT);
    return faults;
  }
  return dim_value_faults(DimList(dims.begin(), dims.begin() + static_cast<long>(rank)));
}

std::optional<DimList> broadcast_shapes(const DimList& a, const DimList& b) {
  const size_t rank = std::max(a.size(), b.size());
  DimList out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

bool broadcasts_to(const DimList& from, const DimList& to) {
  if (from.size() > to.size()) return false;
  const size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] != to[offset + i] && from[i] != 1) return false;
  }
  return true;
}

std::optional<int64_t> element_count_of(const DimList& dims) {
  int64_t product = 1;
  for (int64_t d : dims) {
    if (__builtin_mul_overflow(product, d, &product)) return std::nullopt;
  }
  return product;
}

bool valid_io_name(const std::string& name) {
  if (name.empty()) return false;
  for (unsigned char c : name) {
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') return false;
  }
  return true;
}

bool valid_opaque_name(const std::string& name) {
  if (name.empty()) return false;
  for (unsigned char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace fstitch::fuzz
