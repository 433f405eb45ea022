#include "support/quote.hpp"

namespace fstitch {

std::string printable_text(std::string_view text, size_t limit) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::string_view shown = text.substr(0, limit);
  std::string out;
  out.reserve(shown.size() + 16);
  for (const char ch : shown) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  if (text.size() > shown.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

std::string quote_name(std::string_view text, size_t limit) {
  return "\"" + printable_text(text, limit) + "\"";
}

}  // namespace fstitch
