// FuzzInput: reads choices out of a fuzzer's bytes. Running out of bytes is not an error:
// every read then yields zero, so any prefix of an input is itself a valid program.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace fstitch::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return offset_ >= size_; }

  uint8_t byte() { return offset_ < size_ ? data_[offset_++] : 0; }

  // `count` bytes as a little-endian unsigned integer (count <= 8).
  uint64_t bits(size_t count) {
    uint64_t value = 0;
    for (size_t i = 0; i < count; ++i) value |= static_cast<uint64_t>(byte()) << (8 * i);
    return value;
  }

  // A number in [0, limit); 0 when limit is 0.
  size_t below(size_t limit) {
    return limit == 0 ? 0 : static_cast<size_t>(bits(limit > 256 ? 2 : 1) % limit);
  }

  // True with probability about n/256.
  bool chance(unsigned n) { return byte() < n; }

  double f64() {
    uint64_t raw = bits(8);
    double value;
    std::memcpy(&value, &raw, sizeof value);
    return value;
  }

  template <class T, size_t N>
  const T& pick(const T (&choices)[N]) {
    return choices[below(N)];
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t offset_ = 0;
};

}  // namespace fstitch::fuzz
