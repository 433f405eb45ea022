// parse_graph: a line-at-a-time lexer and a recursive-descent parser over one line's tokens.
// The grammar is in docs/text-format.md. Every value line is parsed in full first, then built
// through the builders, so syntax errors are reported before type errors.
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/builder.hpp"
#include "ir/tensor_data.hpp"
#include "ir/text.hpp"
#include "support/error.hpp"
#include "support/quote.hpp"

namespace fstitch {
namespace {

constexpr std::string_view kHeaderWord = "fstitch.graph";
constexpr std::string_view kOutputWord = "output";
// Longest piece of a token quoted back in a message; longer ones are cut with "...".
constexpr size_t kQuoteLimit = 40;

struct Position {
  size_t line = 1;    // 1-based
  size_t column = 1;  // 1-based, in bytes
};

[[noreturn]] void fail_at(StatusCode code, Position at, const std::string& what) {
  fail(code, "line " + std::to_string(at.line) + ", column " + std::to_string(at.column) + ": " + what);
}

[[noreturn]] void parse_error(Position at, const std::string& what) {
  fail_at(StatusCode::kParse, at, what);
}

// ---------------------------------------------------------------------------------------
// Characters and tokens.

bool is_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_word_char(char c) {
  return is_letter(c) || is_digit(c) || c == '_' || c == '.';
}
bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}
bool is_punct(char c) {
  return c == '=' || c == ':' || c == ',' || c == '[' || c == ']' || c == '(' || c == ')';
}

// 'x' for a printable character, '\xNN' for any other byte.
std::string quote_char(char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (byte >= 0x20 && byte < 0x7f) return std::string("'") + c + "'";
  const char* hex = "0123456789abcdef";
  return std::string("'\\x") + hex[byte >> 4] + hex[byte & 0xf] + "'";
}

std::string abbreviate(std::string_view text) {
  return printable_text(text, kQuoteLimit);
}

enum class TokenKind {
  kValueName,  // %name; text is the name without '%'
  kWord,       // [A-Za-z_][A-Za-z0-9_.]*: op names, dtypes, keywords, attribute keys
  kNumber,     // starts with a digit, '-', '+' or '.'; validated where it is used
  kString,     // "..."; text is the content without the quotes
  kPunct,      // one of = : , [ ] ( )
  kEnd,        // end of the line (or the start of its comment)
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;
  size_t column = 1;
};

std::string describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::kValueName:
      return "%" + abbreviate(token.text);
    case TokenKind::kWord:
    case TokenKind::kNumber:
    case TokenKind::kPunct:
      return "'" + abbreviate(token.text) + "'";
    case TokenKind::kString:
      return quote_name(token.text, kQuoteLimit);
    case TokenKind::kEnd:
      return "end of line";
  }
  return "?";
}

// Splits one line (without its '\n') into tokens, ending with a kEnd token.
std::vector<Token> tokenize(std::string_view line, size_t line_number) {
  std::vector<Token> tokens;
  size_t i = 0;
  auto at = [&](size_t index) { return Position{line_number, index + 1}; };
  while (i < line.size()) {
    const char c = line[i];
    const size_t start = i;
    if (is_blank(c)) {
      ++i;
    } else if (c == '#') {
      break;
    } else if (is_punct(c)) {
      tokens.push_back({TokenKind::kPunct, line.substr(i, 1), i + 1});
      ++i;
    } else if (c == '%') {
      ++i;
      while (i < line.size() && is_word_char(line[i])) ++i;
      if (i == start + 1) {
        parse_error(at(start), "expected a value name after '%' (letters, digits, '_' or '.'), found " +
                                   (i < line.size() ? quote_char(line[i]) : std::string("end of line")));
      }
      tokens.push_back({TokenKind::kValueName, line.substr(start + 1, i - start - 1), start + 1});
    } else if (is_letter(c) || c == '_') {
      while (i < line.size() && is_word_char(line[i])) ++i;
      tokens.push_back({TokenKind::kWord, line.substr(start, i - start), start + 1});
    } else if (is_digit(c) || c == '-' || c == '+' || c == '.') {
      // Take the whole run, exponent signs included, so "12abc" is one bad number and not
      // a number followed by a word.
      ++i;
      while (i < line.size() && (is_word_char(line[i]) || ((line[i] == '-' || line[i] == '+') &&
                                                           (line[i - 1] == 'e' || line[i - 1] == 'E')))) {
        ++i;
      }
      tokens.push_back({TokenKind::kNumber, line.substr(start, i - start), start + 1});
    } else if (c == '"') {
      ++i;
      while (i < line.size() && line[i] != '"') {
        const auto byte = static_cast<unsigned char>(line[i]);
        if (byte < 0x20 || byte >= 0x7f) {
          parse_error(at(i), "character " + quote_char(line[i]) +
                                 " is not allowed in a name (names are printable ASCII)");
        }
        if (line[i] == '\\') {
          parse_error(at(i), "a name cannot contain a backslash (the text format has no escapes)");
        }
        ++i;
      }
      if (i == line.size()) {
        parse_error(at(start), "unterminated string: expected a closing '\"' on the same line");
      }
      tokens.push_back({TokenKind::kString, line.substr(start + 1, i - start - 1), start + 1});
      ++i;
    } else {
      parse_error(at(start), "unexpected character " + quote_char(c));
    }
  }
  tokens.push_back({TokenKind::kEnd, std::string_view(), i + 1});
  return tokens;
}

// ---------------------------------------------------------------------------------------
// Numbers.

// -?[0-9]+
bool is_integer_literal(std::string_view s) {
  size_t i = s.size() > 0 && s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i) {
    if (!is_digit(s[i])) return false;
  }
  return true;
}

// Advances i over a run of digits; returns how many there were.
size_t skip_digits(std::string_view s, size_t& i) {
  const size_t start = i;
  while (i < s.size() && is_digit(s[i])) ++i;
  return i - start;
}

// -?(digits[.digits*] | .digits)([eE][+-]?digits)?
bool is_decimal_literal(std::string_view s) {
  size_t i = s.size() > 0 && s[0] == '-' ? 1 : 0;
  size_t mantissa_digits = skip_digits(s, i);
  if (i < s.size() && s[i] == '.') {
    ++i;
    mantissa_digits += skip_digits(s, i);
  }
  if (mantissa_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (skip_digits(s, i) == 0) return false;
  }
  return i == s.size();
}

// Reads an int64; kParse errors name `what` ("a dim", "an axis"...).
int64_t integer_value(const Token& token, size_t line, const std::string& what) {
  const Position at{line, token.column};
  if (token.kind != TokenKind::kNumber || !is_integer_literal(token.text)) {
    parse_error(at, "expected " + what + " (an integer), found " + describe(token));
  }
  int64_t value = 0;
  std::from_chars_result result =
      std::from_chars(token.text.data(), token.text.data() + token.text.size(), value);
  if (result.ec != std::errc() || result.ptr != token.text.data() + token.text.size()) {
    parse_error(at, "integer " + abbreviate(token.text) + " is out of the int64 range");
  }
  return value;
}

// A floating constant: a decimal literal (in double, rounded to nearest) or inf/nan with
// an optional '-'.
double float_value(const Token& token, size_t line, DType dtype) {
  const Position at{line, token.column};
  const std::string_view s = token.text;
  const double infinity = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (s == "inf") return infinity;
  if (s == "-inf") return -infinity;
  if (s == "nan") return nan;
  if (s == "-nan") return std::copysign(nan, -1.0);
  if (token.kind != TokenKind::kNumber || !is_decimal_literal(s)) {
    parse_error(at, std::string("expected a constant of dtype ") + dtype_name(dtype) +
                        " (a decimal number, inf, -inf, nan or -nan), found " + describe(token));
  }
  double value = 0;
  std::from_chars_result result = std::from_chars(s.data(), s.data() + s.size(), value);
  if (result.ec == std::errc::result_out_of_range) {
    parse_error(at, "number " + abbreviate(s) +
                        " is outside the range of f64 (nonzero magnitudes from about 4.9e-324 to 1.8e308); "
                        "write inf, -inf or 0");
  }
  if (result.ec != std::errc() || result.ptr != s.data() + s.size()) {
    parse_error(at, "malformed number " + abbreviate(s));
  }
  return value;
}

// ---------------------------------------------------------------------------------------
// One line's tokens.

class LineCursor {
 public:
  LineCursor(const std::vector<Token>& tokens, size_t line) : tokens_(tokens), line_(line) {}

  const Token& peek() const { return tokens_[index_]; }
  const Token& next() {
    const Token& token = tokens_[index_];
    if (token.kind != TokenKind::kEnd) ++index_;
    return token;
  }
  size_t line() const { return line_; }
  Position position(const Token& token) const { return {line_, token.column}; }

  bool at_punct(char c) const { return peek().kind == TokenKind::kPunct && peek().text[0] == c; }

  [[noreturn]] void expected(const std::string& what) const {
    parse_error(position(peek()), "expected " + what + ", found " + describe(peek()));
  }

  const Token& expect(TokenKind kind, const std::string& what) {
    if (peek().kind != kind) expected(what);
    return next();
  }

  void expect_punct(char c, const std::string& what) {
    if (!at_punct(c)) expected(what);
    next();
  }

  void expect_end() {
    if (peek().kind != TokenKind::kEnd) {
      parse_error(position(peek()), "unexpected " + describe(peek()) + " after the end of the statement");
    }
  }

 private:
  const std::vector<Token>& tokens_;
  size_t line_;
  size_t index_ = 0;
};

// ---------------------------------------------------------------------------------------
// Value lines.

struct TypeAnnotation {
  DType dtype = DType::kF32;
  Dims dims;
  Position at;
};

// The attributes one operation family takes; each appears exactly once, in any order.
enum class AttrKind { kIntList, kInt, kBool, kLiteral };
struct AttrSpec {
  std::string_view key;
  AttrKind kind;
};

std::vector<AttrSpec> attribute_specs(OpFamily family) {
  switch (family) {
    case OpFamily::kReduce:
      return {{"axes", AttrKind::kIntList}, {"keepdims", AttrKind::kBool}};
    case OpFamily::kPermute:
      return {{"perm", AttrKind::kIntList}};
    case OpFamily::kIota:
    case OpFamily::kConcat:
    case OpFamily::kTake:
      return {{"axis", AttrKind::kInt}};
    case OpFamily::kSlice:
      return {{"start", AttrKind::kIntList}, {"stop", AttrKind::kIntList}, {"step", AttrKind::kIntList}};
    case OpFamily::kPad:
      return {{"low", AttrKind::kIntList}, {"high", AttrKind::kIntList}, {"value", AttrKind::kLiteral}};
    default:
      return {};
  }
}

std::string attribute_syntax(const AttrSpec& spec) {
  switch (spec.kind) {
    case AttrKind::kIntList:
      return std::string(spec.key) + "=[...]";
    case AttrKind::kInt:
      return std::string(spec.key) + "=N";
    case AttrKind::kBool:
      return std::string(spec.key) + "=true|false";
    case AttrKind::kLiteral:
      return std::string(spec.key) + "=<constant>";
  }
  return std::string(spec.key);
}

// A value line, parsed but not yet built.
struct Statement {
  OpKind op = OpKind::kInput;
  Position op_at;
  std::vector<ValueId> operands;
  std::string name;  // input and opaque
  Token literal;     // constant; pad: the pad value
  // tensor: the element tokens, at elements[0], elements[2], ... (commas between them) in the
  // line's token vector, which outlives the statement.
  const Token* elements = nullptr;
  size_t element_count = 0;
  std::vector<int64_t> list;  // axes or perm
  // slice: start, stop, step; pad: low, high
  std::unordered_map<std::string_view, std::vector<int64_t>> lists;
  int64_t integer = 0;  // axis
  bool flag = false;    // keepdims
  TypeAnnotation type;
};

class Parser {
 public:
  Graph parse(std::string_view text) {
    size_t line_number = 1;
    size_t start = 0;
    while (true) {
      const size_t newline = text.find('\n', start);
      const size_t end = newline == std::string_view::npos ? text.size() : newline;
      const std::string_view line = text.substr(start, end - start);
      std::vector<Token> tokens = tokenize(line, line_number);
      if (tokens.front().kind != TokenKind::kEnd) {
        LineCursor cursor(tokens, line_number);
        if (!seen_header_) {
          parse_header(cursor);
        } else {
          parse_statement(cursor);
        }
      }
      if (newline == std::string_view::npos) {
        if (!seen_header_) {
          parse_error({line_number, line.size() + 1}, "expected the header 'fstitch.graph " +
                                                          std::to_string(kTextFormatVersion) +
                                                          "', found end of input");
        }
        break;
      }
      start = newline + 1;
      ++line_number;
    }
    return std::move(graph_);
  }

 private:
  void parse_header(LineCursor& c) {
    const std::string header = "'fstitch.graph " + std::to_string(kTextFormatVersion) + "'";
    if (c.peek().kind != TokenKind::kWord || c.peek().text != kHeaderWord) {
      c.expected("the header " + header + " on the first line");
    }
    c.next();
    const Token& version = c.peek();
    if (version.kind != TokenKind::kNumber || !is_integer_literal(version.text)) {
      c.expected("the format version after 'fstitch.graph' (an integer)");
    }
    if (version.text != std::to_string(kTextFormatVersion)) {
      parse_error(c.position(version), "format version " + abbreviate(version.text) +
                                           " is not supported; this library reads version " +
                                           std::to_string(kTextFormatVersion));
    }
    c.next();
    c.expect_end();
    seen_header_ = true;
  }

  void parse_statement(LineCursor& c) {
    const Token& first = c.peek();
    if (first.kind == TokenKind::kValueName) return parse_value(c);
    if (first.kind == TokenKind::kWord && first.text == kOutputWord) return parse_output(c);
    if (first.kind == TokenKind::kWord && first.text == kHeaderWord) {
      parse_error(c.position(first), "the header 'fstitch.graph' may appear only once, on the first line");
    }
    c.expected("a value definition ('%name = op ...') or an output ('output \"name\" = %value')");
  }

  void parse_output(LineCursor& c) {
    const Position keyword_at = c.position(c.next());
    const Token& name = c.expect(TokenKind::kString, "the output name in double quotes");
    c.expect_punct('=', "'=' after the output name");
    const ValueId value = operand(c);
    c.expect_end();
    try {
      build_output(graph_, std::string(name.text), value);
    } catch (const Error& e) {
      fail_at(e.code(), keyword_at, e.what());
    }
  }

  void parse_value(LineCursor& c) {
    const Token& name = c.next();
    const std::string key(name.text);
    auto previous = definitions_.find(key);
    if (previous != definitions_.end()) {
      parse_error(c.position(name), "value %" + abbreviate(name.text) + " is already defined on line " +
                                        std::to_string(previous->second.line));
    }
    c.expect_punct('=', "'=' after %" + abbreviate(name.text));
    const Token& op_token = c.expect(TokenKind::kWord, "an operation name");
    std::optional<OpKind> op = parse_op_name(op_token.text);
    if (!op) parse_error(c.position(op_token), "unknown operation '" + abbreviate(op_token.text) + "'");
    Statement s;
    s.op = *op;
    s.op_at = c.position(op_token);
    parse_arguments(c, s);
    parse_attributes(c, s);
    c.expect_punct(':', "':' and the result type");
    s.type = parse_type(c);
    c.expect_end();
    const ValueId id = build(s, c.line());
    check_annotation(s, id);
    definitions_.emplace(key, Definition{id, c.line()});
  }

  // Operands and names, by family; attributes follow in parse_attributes.
  void parse_arguments(LineCursor& c, Statement& s) {
    switch (op_family(s.op)) {
      case OpFamily::kInput:
        s.name = c.expect(TokenKind::kString, "the input name in double quotes").text;
        break;
      case OpFamily::kConstant: {
        const Token& literal = c.peek();
        if (literal.kind != TokenKind::kNumber && literal.kind != TokenKind::kWord) {
          c.expected("the constant's value (a number, inf, nan, true or false)");
        }
        s.literal = c.next();
        break;
      }
      case OpFamily::kTensor:
        tensor_elements(c, s);
        break;
      case OpFamily::kOpaque:
        s.name = c.expect(TokenKind::kString, "the opaque operation's name in double quotes").text;
        c.expect_punct('(', "'(' and the operand list");
        if (!c.at_punct(')')) {
          s.operands.push_back(operand(c));
          while (c.at_punct(',')) {
            c.next();
            s.operands.push_back(operand(c));
          }
        }
        c.expect_punct(')', "',' or ')' in the operand list");
        break;
      case OpFamily::kIota:
        break;
      case OpFamily::kConcat:
        s.operands.push_back(operand(c));
        while (c.at_punct(',')) {
          c.next();
          s.operands.push_back(operand(c));
        }
        break;
      case OpFamily::kTake:
      case OpFamily::kBinary:
        operands(c, s, 2);
        break;
      case OpFamily::kSelect:
        operands(c, s, 3);
        break;
      case OpFamily::kUnary:
      case OpFamily::kReduce:
      case OpFamily::kCast:
      case OpFamily::kBroadcast:
      case OpFamily::kReshape:
      case OpFamily::kPermute:
      case OpFamily::kSlice:
      case OpFamily::kPad:
        operands(c, s, 1);
        break;
    }
  }

  // '[' (element (',' element)*)? ']' -- the elements are read once the type is known.
  void tensor_elements(LineCursor& c, Statement& s) {
    c.expect_punct('[', "'[' and the tensor's elements");
    auto element = [&] {
      const Token& token = c.peek();
      if (token.kind != TokenKind::kNumber && token.kind != TokenKind::kWord) c.expected("a tensor element");
      c.next();
      if (s.elements == nullptr) s.elements = &token;
      ++s.element_count;
    };
    if (!c.at_punct(']')) {
      element();
      while (c.at_punct(',')) {
        c.next();
        element();
      }
    }
    c.expect_punct(']', "',' or ']' in the tensor's elements");
  }

  void operands(LineCursor& c, Statement& s, size_t count) {
    for (size_t i = 0; i < count; ++i) {
      if (i > 0) {
        c.expect_punct(',', "',' and operand " + std::to_string(i + 1) + " of " + op_name(s.op) +
                                " (it takes " + std::to_string(count) + ")");
      }
      s.operands.push_back(operand(c));
    }
  }

  ValueId operand(LineCursor& c) {
    const Token& token = c.expect(TokenKind::kValueName, "an operand (%name)");
    auto found = definitions_.find(std::string(token.text));
    if (found == definitions_.end()) {
      parse_error(c.position(token), "value %" + abbreviate(token.text) +
                                         " is not defined (values must be defined before they are used)");
    }
    return found->second.id;
  }

  void parse_attributes(LineCursor& c, Statement& s) {
    const std::vector<AttrSpec> specs = attribute_specs(op_family(s.op));
    std::vector<bool> seen(specs.size(), false);
    while (c.peek().kind == TokenKind::kWord) {
      const Token& key = c.next();
      size_t index = 0;
      while (index < specs.size() && specs[index].key != key.text) ++index;
      if (index == specs.size()) {
        std::string takes = specs.empty() ? "it takes none" : "it takes";
        for (const AttrSpec& spec : specs) takes += " " + attribute_syntax(spec);
        parse_error(c.position(key), std::string(op_name(s.op)) + " has no attribute '" +
                                         abbreviate(key.text) + "' (" + takes + ")");
      }
      if (seen[index]) {
        parse_error(c.position(key), "attribute '" + std::string(key.text) + "' is given twice");
      }
      seen[index] = true;
      c.expect_punct('=', "'=' after the attribute name");
      switch (specs[index].kind) {
        case AttrKind::kIntList:
          s.list = integer_list(c, "an entry of " + std::string(key.text));
          s.lists[specs[index].key] = s.list;
          break;
        case AttrKind::kLiteral:
          if (c.peek().kind != TokenKind::kNumber && c.peek().kind != TokenKind::kWord) {
            c.expected("the value of " + std::string(key.text) + " (a number, inf, nan, true or false)");
          }
          s.literal = c.next();
          break;
        case AttrKind::kInt:
          s.integer = integer_value(c.next(), c.line(), "the value of " + std::string(key.text));
          break;
        case AttrKind::kBool:
          s.flag = bool_value(c);
          break;
      }
    }
    for (size_t i = 0; i < specs.size(); ++i) {
      if (!seen[i]) c.expected(std::string(op_name(s.op)) + "'s attribute " + attribute_syntax(specs[i]));
    }
  }

  bool bool_value(LineCursor& c) {
    const Token& token = c.peek();
    if (token.kind == TokenKind::kWord && (token.text == "true" || token.text == "false")) {
      c.next();
      return token.text == "true";
    }
    c.expected("true or false");
  }

  // '[' (int (',' int)*)? ']'
  std::vector<int64_t> integer_list(LineCursor& c, const std::string& what) {
    c.expect_punct('[', "'['");
    std::vector<int64_t> values;
    if (!c.at_punct(']')) {
      values.push_back(integer_value(c.next(), c.line(), what));
      while (c.at_punct(',')) {
        c.next();
        values.push_back(integer_value(c.next(), c.line(), what));
      }
    }
    c.expect_punct(']', "',' or ']'");
    return values;
  }

  // dtype ('[' dims ']')?  -- a scalar is "f32" or "f32[]".
  TypeAnnotation parse_type(LineCursor& c) {
    TypeAnnotation type;
    const Token& dtype =
        c.expect(TokenKind::kWord, "a dtype (f32, f16, bf16, f64, i8, i32, i64, u8 or bool)");
    type.at = c.position(dtype);
    std::optional<DType> parsed = parse_dtype(dtype.text);
    if (!parsed) {
      parse_error(type.at, "unknown dtype '" + abbreviate(dtype.text) +
                               "' (expected f32, f16, bf16, f64, i8, i32, i64, u8 or bool)");
    }
    type.dtype = *parsed;
    if (c.at_punct('[')) type.dims = integer_list(c, "a dim");
    return type;
  }

  // ---- building

  ValueId build(const Statement& s, size_t line) {
    // Constants are converted outside the builder guard: their errors point at the literal.
    if (op_family(s.op) == OpFamily::kConstant) return build_literal(s, line);
    if (op_family(s.op) == OpFamily::kTensor) return build_tensor_literal(s, line);
    const Scalar pad = op_family(s.op) == OpFamily::kPad ? pad_value(s, s.operands[0]) : Scalar{};
    try {
      return build_operation(s, pad);
    } catch (const Error& e) {
      fail_at(e.code(), s.op_at, e.what());
    }
  }

  ValueId build_operation(const Statement& s, Scalar pad) {
    const std::vector<ValueId>& x = s.operands;
    switch (op_family(s.op)) {
      case OpFamily::kInput:
        return build_input(graph_, s.name, s.type.dtype, s.type.dims);
      case OpFamily::kUnary:
        return build_unary(graph_, s.op, x[0]);
      case OpFamily::kBinary:
        return build_binary(graph_, s.op, x[0], x[1]);
      case OpFamily::kSelect:
        return build_select(graph_, x[0], x[1], x[2]);
      case OpFamily::kCast:
        return build_cast(graph_, x[0], s.type.dtype);
      case OpFamily::kBroadcast:
        return append_broadcast(x[0], s.type.dims);
      case OpFamily::kReduce:
        return build_reduce(graph_, s.op, x[0], s.list, s.flag);
      case OpFamily::kReshape:
        return build_reshape(graph_, x[0], s.type.dims);
      case OpFamily::kPermute:
        return build_permute(graph_, x[0], s.list);
      case OpFamily::kIota:
        return build_iota(graph_, s.type.dtype, s.type.dims, s.integer);
      case OpFamily::kOpaque:
        return build_opaque(graph_, s.name, x, s.type.dtype, s.type.dims);
      case OpFamily::kSlice:
        return build_slice(graph_, x[0], s.lists.at("start"), s.lists.at("stop"), s.lists.at("step"));
      case OpFamily::kConcat:
        return build_concat(graph_, x, s.integer);
      case OpFamily::kTake:
        return build_take(graph_, x[0], x[1], s.integer);
      case OpFamily::kPad:
        return build_pad(graph_, x[0], s.lists.at("low"), s.lists.at("high"), pad);
      case OpFamily::kConstant:
      case OpFamily::kTensor:
        break;
    }
    fail(StatusCode::kInternal, "constant reached the operation builder");
  }

  // Not build_broadcast: it elides a broadcast to the operand's own shape, and every node in
  // the text must come back as a node.
  ValueId append_broadcast(ValueId x, const Dims& dims) {
    Node node;
    node.op = OpKind::kBroadcast;
    node.operands = {x};
    node.dims = dims;
    ValueType type = infer_type(graph_, node);
    node.dtype = type.dtype;
    node.dims = std::move(type.dims);
    return graph_.append(std::move(node));
  }

  ValueId build_literal(const Statement& s, size_t line) {
    const DType dtype = s.type.dtype;
    if (!s.type.dims.empty()) {
      fail_at(StatusCode::kShape, s.type.at,
              "a constant is a scalar; write its type as " + std::string(dtype_name(dtype)) + ", not " +
                  dtype_name(dtype) + dims_to_string(s.type.dims));
    }
    return build_constant(graph_, dtype, literal_scalar(s.literal, line, dtype));
  }

  // The pad value, read in the dtype of the padded operand.
  Scalar pad_value(const Statement& s, ValueId x) const {
    return literal_scalar(s.literal, s.op_at.line, graph_.node(x).dtype);
  }

  // A literal token as a scalar of `dtype`: kParse errors point at the literal.
  static Scalar literal_scalar(const Token& literal, size_t line, DType dtype) {
    const Position at{line, literal.column};
    if (is_float(dtype)) return scalar_from_f64(float_value(literal, line, dtype), dtype);
    if (is_bool(dtype)) {
      if (literal.kind != TokenKind::kWord || (literal.text != "true" && literal.text != "false")) {
        parse_error(at, "expected a bool constant (true or false), found " + describe(literal));
      }
      return scalar_from_i64(literal.text == "true" ? 1 : 0, dtype);
    }
    const int64_t value =
        integer_value(literal, line, std::string("a constant of dtype ") + dtype_name(dtype));
    if (value < integer_min(dtype) || value > integer_max(dtype)) {
      parse_error(at, "constant " + std::to_string(value) + " is out of range for " + dtype_name(dtype) +
                          " (" + std::to_string(integer_min(dtype)) + ".." +
                          std::to_string(integer_max(dtype)) + ")");
    }
    return scalar_from_i64(value, dtype);
  }

  // The type comes from the annotation; each element's error points at the element.
  ValueId build_tensor_literal(const Statement& s, size_t line) {
    const DType dtype = s.type.dtype;
    try {
      validate_value_size(dtype, s.type.dims, "tensor constant");
    } catch (const Error& e) {
      fail_at(e.code(), s.type.at, e.what());
    }
    const auto expected = static_cast<uint64_t>(element_count(s.type.dims));
    if (expected != s.element_count) {
      fail_at(StatusCode::kShape, s.type.at,
              "tensor has " + std::to_string(s.element_count) + " element(s), but its type " +
                  dtype_name(dtype) + dims_to_string(s.type.dims) + " has " + std::to_string(expected));
    }
    const size_t size = dtype_size(dtype);
    auto data = std::make_shared<std::vector<uint8_t>>(s.element_count * size);
    for (size_t k = 0; k < s.element_count; ++k) {
      const Token& token = s.elements[2 * k];
      if (!parse_element_text(token.text, dtype, data->data() + k * size)) {
        parse_error({line, token.column}, "expected a tensor element of dtype " +
                                              std::string(dtype_name(dtype)) + " (" + element_syntax(dtype) +
                                              "), found " + describe(token));
      }
    }
    try {
      return build_tensor_constant(graph_, dtype, s.type.dims, std::move(data));
    } catch (const Error& e) {
      fail_at(e.code(), s.op_at, e.what());
    }
  }

  // The annotation states the result type; where the builder inferred it, they must agree.
  void check_annotation(const Statement& s, ValueId id) const {
    const Node& node = graph_.node(id);
    if (node.dtype == s.type.dtype && node.dims == s.type.dims) return;
    const std::string message = std::string(op_name(s.op)) + " yields " + dtype_name(node.dtype) +
                                dims_to_string(node.dims) + ", but the annotation says " +
                                dtype_name(s.type.dtype) + dims_to_string(s.type.dims);
    fail_at(node.dtype != s.type.dtype ? StatusCode::kDtype : StatusCode::kShape, s.type.at, message);
  }

  struct Definition {
    ValueId id;
    size_t line;
  };

  Graph graph_;
  std::unordered_map<std::string, Definition> definitions_;
  bool seen_header_ = false;
};

}  // namespace

Graph parse_graph(std::string_view text) {
  return Parser().parse(text);
}

}  // namespace fstitch
