#include "support/number_text.hpp"

#include <charconv>
#include <system_error>

namespace fstitch {
namespace {

// 17 significant digits, a sign, a point, an exponent: far below this bound; fixed notation
// of 1e308 with a few decimals needs about 320.
constexpr int kBufferBytes = 400;

template <class Format>
std::string format_with(Format&& format) {
  char buffer[kBufferBytes];
  const std::to_chars_result result = format(buffer, buffer + sizeof buffer);
  if (result.ec != std::errc()) return "nan";  // unreachable for the sizes above
  return std::string(buffer, result.ptr);
}

}  // namespace

std::string shortest_text(double x) {
  return format_with([&](char* first, char* last) { return std::to_chars(first, last, x); });
}

std::string shortest_text(float x) {
  return format_with([&](char* first, char* last) { return std::to_chars(first, last, x); });
}

std::string fixed_text(double x, int decimals) {
  return format_with([&](char* first, char* last) {
    return std::to_chars(first, last, x, std::chars_format::fixed, decimals);
  });
}

std::string general_text(double x, int digits) {
  return format_with([&](char* first, char* last) {
    return std::to_chars(first, last, x, std::chars_format::general, digits);
  });
}

std::string hex_text(uint64_t x) {
  return "0x" + format_with([&](char* first, char* last) { return std::to_chars(first, last, x, 16); });
}

}  // namespace fstitch
