// Tensor constants (OpKind::kTensor): the rules for their data, and the text of one element
// in the graph text format (docs/text-format.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dtype.hpp"
#include "ir/shape.hpp"

namespace fstitch {

// A tensor constant's elements, dense row-major in the storage format of its dtype. Shared
// by every copy of a graph and by the fusions made from it; never modified once built.
using TensorData = std::shared_ptr<const std::vector<uint8_t>>;

// Throws unless `data` is the data of a `dtype` tensor of `dims`: the dims are a valid value
// (validate_value_size), data is present and holds exactly element_count(dims) x
// dtype_size(dtype) bytes (kInvalidArgument otherwise), and a bool tensor has only bytes 0
// and 1 (kInvalidArgument naming the first other byte: any other byte is not a bool the
// generated code or the reference evaluator could agree on).
void validate_tensor_data(DType dtype, const Dims& dims, const std::vector<uint8_t>* data);

// Appends the text of one element (dtype_size(dtype) bytes at `element`): integers in
// decimal, bool as true or false, floating dtypes as the hexadecimal bit pattern of their
// storage format with every digit written ("0x3f800000" for f32 1, "0x3c00" for f16 1), so
// every value, NaN payloads and -0 included, comes back exactly.
void append_element_text(std::string& text, DType dtype, const uint8_t* element);

// Parses one element as printed by append_element_text into `element`; a floating element may
// also be a decimal number, rounded to the dtype. Returns false (leaving `element` unchanged)
// unless `text` is such an element in range for `dtype`.
bool parse_element_text(std::string_view text, DType dtype, uint8_t* element);

// What parse_element_text accepts for `dtype`, for error messages.
std::string element_syntax(DType dtype);

}  // namespace fstitch
