// A small JSON reader for the GPU benchmark's results file (bench.json), which the kernel
// report reads to fill its measured column. Standard JSON; numbers are read without the
// locale.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fstitch::bench {

struct JsonValue {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> items;                            // kArray
  std::vector<std::pair<std::string, JsonValue>> members;  // kObject, in file order

  // The member named `key` of an object, nullptr when absent or not an object.
  const JsonValue* get(const std::string& key) const;
  bool is_number() const { return type == Type::kNumber; }
  bool is_string() const { return type == Type::kString; }
};

// Throws std::runtime_error naming the offset of the first error.
JsonValue parse_json(const std::string& text);

}  // namespace fstitch::bench
