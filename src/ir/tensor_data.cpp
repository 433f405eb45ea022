#include "ir/tensor_data.hpp"

#include <charconv>
#include <cstring>

#include "ir/numeric.hpp"
#include "support/error.hpp"

namespace fstitch {
namespace {

// The bit pattern of a floating element: 2, 4 or 8 bytes, native byte order.
uint64_t element_bits(DType dtype, const uint8_t* element) {
  uint64_t bits = 0;
  switch (dtype_size(dtype)) {
    case 2: {
      uint16_t v;
      std::memcpy(&v, element, 2);
      bits = v;
      break;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, element, 4);
      bits = v;
      break;
    }
    default:
      std::memcpy(&bits, element, 8);
      break;
  }
  return bits;
}

void store_bits(DType dtype, uint64_t bits, uint8_t* element) {
  switch (dtype_size(dtype)) {
    case 2: {
      const auto v = static_cast<uint16_t>(bits);
      std::memcpy(element, &v, 2);
      break;
    }
    case 4: {
      const auto v = static_cast<uint32_t>(bits);
      std::memcpy(element, &v, 4);
      break;
    }
    default:
      std::memcpy(element, &bits, 8);
      break;
  }
}

// "0x" followed by 1 to 2 x dtype_size hex digits.
bool parse_hex_bits(std::string_view text, DType dtype, uint64_t* bits) {
  if (text.size() < 3 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) return false;
  const std::string_view digits = text.substr(2);
  if (digits.size() > 2 * dtype_size(dtype)) return false;
  uint64_t value = 0;
  const auto result = std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
  if (result.ec != std::errc() || result.ptr != digits.data() + digits.size()) return false;
  *bits = value;
  return true;
}

// -?[0-9]+ (from_chars also takes no '+', and nothing else).
bool parse_integer(std::string_view text, int64_t* value) {
  if (text.empty()) return false;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), *value);
  return result.ec == std::errc() && result.ptr == text.data() + text.size();
}

// A decimal number as from_chars reads it in general format, without "inf"/"nan" words
// (they would read here as the hex-free spelling of a special value; the text format writes
// those as bit patterns) and without a leading '+'.
bool parse_decimal(std::string_view text, double* value) {
  if (text.empty()) return false;
  for (char c : text) {
    const bool ok = (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E';
    if (!ok) return false;
  }
  if (text[0] == '+') return false;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), *value);
  return result.ec == std::errc() && result.ptr == text.data() + text.size();
}

}  // namespace

void validate_tensor_data(DType dtype, const Dims& dims, const std::vector<uint8_t>* data) {
  validate_value_size(dtype, dims, "tensor constant");
  if (data == nullptr) fail(StatusCode::kInvalidArgument, "tensor constant has no data");
  const uint64_t expected = byte_size(dtype, dims);
  if (data->size() != expected) {
    fail(StatusCode::kInvalidArgument, "tensor constant " + std::string(dtype_name(dtype)) +
                                           dims_to_string(dims) + " needs " + std::to_string(expected) +
                                           " bytes of data (" + std::to_string(element_count(dims)) +
                                           " elements of " + std::to_string(dtype_size(dtype)) +
                                           " bytes), got " + std::to_string(data->size()));
  }
  if (is_bool(dtype)) {
    for (size_t k = 0; k < data->size(); ++k) {
      const uint8_t byte = (*data)[k];
      if (byte > 1) {
        fail(StatusCode::kInvalidArgument, "bool tensor constant: element " + std::to_string(k) +
                                               " is byte " + std::to_string(byte) +
                                               "; a bool element must be 0 or 1");
      }
    }
  }
}

void append_element_text(std::string& text, DType dtype, const uint8_t* element) {
  if (is_float(dtype)) {
    static const char kDigits[] = "0123456789abcdef";
    const uint64_t bits = element_bits(dtype, element);
    text += "0x";
    for (size_t d = 2 * dtype_size(dtype); d-- > 0;) text += kDigits[(bits >> (4 * d)) & 0xf];
    return;
  }
  const Scalar s = load_scalar(element, 0, dtype);
  if (is_bool(dtype)) {
    text += s.i != 0 ? "true" : "false";
    return;
  }
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), s.i);
  text.append(buffer, result.ptr);
}

bool parse_element_text(std::string_view text, DType dtype, uint8_t* element) {
  if (is_float(dtype)) {
    uint64_t bits = 0;
    if (parse_hex_bits(text, dtype, &bits)) {
      store_bits(dtype, bits, element);
      return true;
    }
    double value = 0;
    if (!parse_decimal(text, &value)) return false;
    Scalar s;
    s.f = round_to_float_dtype(value, dtype);
    store_scalar(element, 0, dtype, s);
    return true;
  }
  Scalar s;
  if (is_bool(dtype)) {
    if (text != "true" && text != "false") return false;
    s.i = text == "true" ? 1 : 0;
  } else if (!parse_integer(text, &s.i) || s.i < integer_min(dtype) || s.i > integer_max(dtype)) {
    return false;
  }
  store_scalar(element, 0, dtype, s);
  return true;
}

std::string element_syntax(DType dtype) {
  if (is_bool(dtype)) return "true or false";
  if (is_float(dtype)) {
    return "a bit pattern 0x followed by up to " + std::to_string(2 * dtype_size(dtype)) +
           " hex digits, or a decimal number";
  }
  return "an integer from " + std::to_string(integer_min(dtype)) + " to " +
         std::to_string(integer_max(dtype));
}

}  // namespace fstitch
