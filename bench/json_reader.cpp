#include "json_reader.hpp"

#include <charconv>
#include <stdexcept>

namespace fstitch::bench {
namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  JsonValue document() {
    JsonValue value = parse_value(0);
    skip_space();
    if (at_ < text_.size()) fail("text after the value");
    return value;
  }

 private:
  static constexpr int kMaxDepth = 64;

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(at_));
  }

  void skip_space() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r'))
      ++at_;
  }

  bool consume(char c) {
    skip_space();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }

  void expect(char c) {
    if (!consume(c)) fail(std::string("expected '") + c + "'");
  }

  bool literal(const char* word) {
    const std::string w(word);
    if (text_.compare(at_, w.size(), w) != 0) return false;
    at_ += w.size();
    return true;
  }

  JsonValue parse_value(int depth) {
    if (depth > kMaxDepth) fail("nesting too deep");
    skip_space();
    if (at_ >= text_.size()) fail("unexpected end");
    JsonValue value;
    const char c = text_[at_];
    if (c == '{') {
      ++at_;
      value.type = JsonValue::Type::kObject;
      if (consume('}')) return value;
      do {
        skip_space();
        std::string key = parse_string();
        expect(':');
        JsonValue member = parse_value(depth + 1);
        value.members.emplace_back(std::move(key), std::move(member));
      } while (consume(','));
      expect('}');
    } else if (c == '[') {
      ++at_;
      value.type = JsonValue::Type::kArray;
      if (consume(']')) return value;
      do {
        value.items.push_back(parse_value(depth + 1));
      } while (consume(','));
      expect(']');
    } else if (c == '"') {
      value.type = JsonValue::Type::kString;
      value.string = parse_string();
    } else if (literal("true")) {
      value.type = JsonValue::Type::kBool;
      value.boolean = true;
    } else if (literal("false")) {
      value.type = JsonValue::Type::kBool;
    } else if (literal("null")) {
      value.type = JsonValue::Type::kNull;
    } else {
      value.type = JsonValue::Type::kNumber;
      const char* begin = text_.data() + at_;
      const char* end = text_.data() + text_.size();
      const auto [next, error] = std::from_chars(begin, end, value.number);
      if (error != std::errc() || next == begin) fail("not a value");
      at_ += static_cast<size_t>(next - begin);
    }
    return value;
  }

  std::string parse_string() {
    if (at_ >= text_.size() || text_[at_] != '"') fail("expected a string");
    ++at_;
    std::string out;
    while (true) {
      if (at_ >= text_.size()) fail("unterminated string");
      const char c = text_[at_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= text_.size()) fail("unterminated escape");
      const char e = text_[at_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u':
          out += unicode_escape();
          break;
        default:
          fail("bad escape");
      }
    }
  }

  // \uXXXX as UTF-8 (a surrogate half is kept as its own three bytes: the report only
  // compares names, which are ASCII).
  std::string unicode_escape() {
    if (at_ + 4 > text_.size()) fail("short \\u escape");
    unsigned code = 0;
    const auto [next, error] = std::from_chars(text_.data() + at_, text_.data() + at_ + 4, code, 16);
    if (error != std::errc() || next != text_.data() + at_ + 4) fail("bad \\u escape");
    at_ += 4;
    std::string out;
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
    return out;
  }

  const std::string& text_;
  size_t at_ = 0;
};

}  // namespace

const JsonValue* JsonValue::get(const std::string& key) const {
  if (type != Type::kObject) return nullptr;
  for (const auto& [name, value] : members) {
    if (name == key) return &value;
  }
  return nullptr;
}

JsonValue parse_json(const std::string& text) {
  return Parser(text).document();
}

}  // namespace fstitch::bench
