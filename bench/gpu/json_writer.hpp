// A small streaming JSON writer for the benchmark's results file: objects, arrays, strings,
// numbers (non-finite numbers become null) and booleans, with commas placed for the caller.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fstitch::bench_gpu {

// `text` as a JSON string literal, quotes included.
std::string json_quote(std::string_view text);

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);
  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(double number);
  JsonWriter& value(int64_t number);
  JsonWriter& value(uint64_t number);
  JsonWriter& value(int number) { return value(static_cast<int64_t>(number)); }
  JsonWriter& value(bool flag);
  JsonWriter& null();

  // The document; complete once every object and array is closed.
  const std::string& text() const { return out_; }

 private:
  void before_value();
  std::string out_;
  std::vector<bool> has_items_;  // per open container
  bool after_key_ = false;
};

}  // namespace fstitch::bench_gpu
