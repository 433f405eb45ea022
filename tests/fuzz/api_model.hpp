// What include/fstitch.h documents about each builder, as predictions: for given arguments,
// which statuses a call may fail with, or the type its result must have. The call-sequence
// target checks the library against these.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "contract.hpp"
#include "fstitch.h"

namespace fstitch::fuzz {

using DimList = std::vector<int64_t>;

struct ValueType {
  fst_dtype dtype = FST_F32;
  DimList dims;
  bool operator==(const ValueType& other) const { return dtype == other.dtype && dims == other.dims; }
};

std::string describe(const ValueType& type);

// Which dtypes an operation accepts, from the comments on the op enums.
enum class DTypeRule { kAny, kNotBool, kFloatingPoint };

bool is_dtype(int code);
bool is_floating_point(fst_dtype dtype);
bool accepts(DTypeRule rule, fst_dtype dtype);

// nullopt for a code outside the enum.
std::optional<DTypeRule> unary_rule(int op);
std::optional<DTypeRule> binary_rule(int op);
std::optional<DTypeRule> reduce_rule(int op);
bool unary_yields_bool(int op);
bool binary_yields_bool(int op);

// Faults of a dims argument: a rank above FST_MAX_RANK, a NULL array for a nonzero rank
// (when `array_is_null`), and dims below 1 or overflowing int64 (`dims` holds rank entries
// unless the rank is too large). Empty when valid.
StatusSet dims_faults(size_t rank, const DimList& dims, bool array_is_null);
// The same for dims already known to be of a valid rank and present.
StatusSet dim_value_faults(const DimList& dims);
// Whether a value of this (valid) dtype and these dims would hold more than 2^62 bytes.
bool exceeds_value_byte_limit(const ValueType& type);

std::optional<DimList> broadcast_shapes(const DimList& a, const DimList& b);
bool broadcasts_to(const DimList& from, const DimList& to);
std::optional<int64_t> element_count_of(const DimList& dims);  // nullopt on overflow

bool valid_io_name(const std::string& name);
bool valid_opaque_name(const std::string& name);

}  // namespace fstitch::fuzz
