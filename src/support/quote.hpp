// User text (input, output and operation names, tokens) as it appears in messages: control
// and non-ASCII bytes escaped, so a name cannot break a log line or a terminal, and long
// text cut short, so a megabyte name gives a short message.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fstitch {

// How many bytes of user text a message shows before it is cut.
constexpr size_t kQuotedTextLimit = 64;

// `text` with \", \\, \n, \r, \t and \xNN escapes; when longer than `limit` bytes, its first
// `limit` bytes followed by "... (N bytes)".
std::string printable_text(std::string_view text, size_t limit = kQuotedTextLimit);

// printable_text in double quotes: quote_name("x\ny") == "\"x\\ny\"".
std::string quote_name(std::string_view text, size_t limit = kQuotedTextLimit);

}  // namespace fstitch
