// Helpers for the reference evaluator tests: host buffers, and f16/bf16 conversions written
// independently of src/ir/numeric.cpp (decoding by formula, rounding by searching the sorted
// table of finite values), so expected values never come from the code under test.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ir/builder.hpp"
#include "ref/evaluator.hpp"

namespace fstitch::reftest {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- f16 / bf16, independently of numeric.cpp ----

inline double f16_value(uint16_t bits) {
  const int sign = bits >> 15;
  const int exponent = (bits >> 10) & 0x1F;
  const int fraction = bits & 0x3FF;
  double magnitude;
  if (exponent == 0x1F) {
    magnitude = fraction != 0 ? kNaN : kInf;
  } else if (exponent == 0) {
    magnitude = fraction * std::pow(2.0, -24);
  } else {
    magnitude = (1024 + fraction) * std::pow(2.0, exponent - 25);
  }
  return sign ? -magnitude : magnitude;
}

// bf16 is the top half of an f32.
inline double bf16_value(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}

// Round to nearest, ties to the even pattern, by binary search over `table`, the values of
// the positive finite patterns 0..max_finite (they increase with the pattern). Past the
// largest finite value the next "value" is infinity, one ulp further, whose pattern is even.
inline uint16_t nearest_bits(double v, const std::vector<double>& table, uint16_t nan_bits) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  if (std::isnan(v)) return static_cast<uint16_t>(sign | nan_bits);
  const double a = std::fabs(v);
  const int max_finite = static_cast<int>(table.size()) - 1;
  const double max_value = table.back();
  const double overflow_mid = max_value + (max_value - table[table.size() - 2]) / 2;
  if (a >= overflow_mid) return static_cast<uint16_t>(sign | (max_finite + 1));
  if (a >= max_value) return static_cast<uint16_t>(sign | max_finite);
  int lo = 0;  // table[lo] <= a < table[hi]
  int hi = max_finite;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (table[static_cast<size_t>(mid)] <= a) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  // The midpoint of two neighbours has one more significant bit than either: exact in f64.
  const double midpoint = (table[static_cast<size_t>(lo)] + table[static_cast<size_t>(hi)]) / 2;
  const int pick = a < midpoint ? lo : a > midpoint ? hi : (lo % 2 == 0 ? lo : hi);
  return static_cast<uint16_t>(sign | pick);
}

inline std::vector<double> positive_finite_values(double (*decode)(uint16_t), uint16_t max_finite) {
  std::vector<double> table;
  for (uint32_t bits = 0; bits <= max_finite; ++bits) table.push_back(decode(static_cast<uint16_t>(bits)));
  return table;
}

inline uint16_t f16_bits(double v) {
  static const std::vector<double> table = positive_finite_values(f16_value, 0x7BFF);
  return nearest_bits(v, table, 0x7E00);
}
inline uint16_t bf16_bits(double v) {
  static const std::vector<double> table = positive_finite_values(bf16_value, 0x7F7F);
  return nearest_bits(v, table, 0x7FC0);
}

// v rounded to a floating dtype, by the rules of the public API.
inline double round_to(DType dtype, double v) {
  switch (dtype) {
    case DType::kF32:
      return static_cast<float>(v);
    case DType::kF16:
      return f16_value(f16_bits(v));
    case DType::kBF16:
      return bf16_value(bf16_bits(v));
    default:
      return v;
  }
}

// ---- host buffers ----

struct HostBuffer {
  DType dtype = DType::kF32;
  std::vector<unsigned char> bytes;
};

template <class T>
HostBuffer raw_buffer(DType dtype, const std::vector<T>& values) {
  EXPECT_EQ(sizeof(T), dtype_size(dtype));
  HostBuffer b{dtype, std::vector<unsigned char>(values.size() * sizeof(T))};
  if (!values.empty()) std::memcpy(b.bytes.data(), values.data(), b.bytes.size());
  return b;
}

template <class T>
std::vector<T> raw_values(const HostBuffer& b) {
  EXPECT_EQ(sizeof(T), dtype_size(b.dtype));
  std::vector<T> values(b.bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), b.bytes.data(), values.size() * sizeof(T));
  return values;
}

// Floating values encoded into `dtype` (rounded to nearest even).
inline HostBuffer float_buffer(DType dtype, const std::vector<double>& values) {
  switch (dtype) {
    case DType::kF64:
      return raw_buffer(dtype, values);
    case DType::kF32:
      return raw_buffer(dtype, std::vector<float>(values.begin(), values.end()));
    case DType::kF16:
    case DType::kBF16: {
      std::vector<uint16_t> bits;
      for (double v : values) bits.push_back(dtype == DType::kF16 ? f16_bits(v) : bf16_bits(v));
      return raw_buffer(dtype, bits);
    }
    default:
      ADD_FAILURE() << "float_buffer of " << dtype_name(dtype);
      return {};
  }
}

inline std::vector<double> float_values(const HostBuffer& b) {
  switch (b.dtype) {
    case DType::kF64:
      return raw_values<double>(b);
    case DType::kF32: {
      std::vector<float> v = raw_values<float>(b);
      return std::vector<double>(v.begin(), v.end());
    }
    case DType::kF16:
    case DType::kBF16: {
      std::vector<double> out;
      for (uint16_t bits : raw_values<uint16_t>(b))
        out.push_back(b.dtype == DType::kF16 ? f16_value(bits) : bf16_value(bits));
      return out;
    }
    default:
      ADD_FAILURE() << "float_values of " << dtype_name(b.dtype);
      return {};
  }
}

// Integer values stored into `dtype` (each must be in range; bool bytes are stored as given).
inline HostBuffer int_buffer(DType dtype, const std::vector<int64_t>& values) {
  switch (dtype) {
    case DType::kI8:
      return raw_buffer(dtype, std::vector<int8_t>(values.begin(), values.end()));
    case DType::kU8:
    case DType::kBool:
      return raw_buffer(dtype, std::vector<uint8_t>(values.begin(), values.end()));
    case DType::kI32:
      return raw_buffer(dtype, std::vector<int32_t>(values.begin(), values.end()));
    case DType::kI64:
      return raw_buffer(dtype, values);
    default:
      ADD_FAILURE() << "int_buffer of " << dtype_name(dtype);
      return {};
  }
}

inline std::vector<int64_t> int_values(const HostBuffer& b) {
  switch (b.dtype) {
    case DType::kI8: {
      auto v = raw_values<int8_t>(b);
      return std::vector<int64_t>(v.begin(), v.end());
    }
    case DType::kU8:
    case DType::kBool: {
      auto v = raw_values<uint8_t>(b);
      return std::vector<int64_t>(v.begin(), v.end());
    }
    case DType::kI32: {
      auto v = raw_values<int32_t>(b);
      return std::vector<int64_t>(v.begin(), v.end());
    }
    case DType::kI64:
      return raw_values<int64_t>(b);
    default:
      ADD_FAILURE() << "int_values of " << dtype_name(b.dtype);
      return {};
  }
}

// Runs the reference evaluator; outputs are sized from the graph and pre-filled with 0xA5
// bytes so an unwritten element shows.
inline std::vector<HostBuffer> evaluate(const Graph& g, const std::vector<HostBuffer>& inputs) {
  std::vector<const void*> in;
  for (const HostBuffer& b : inputs) in.push_back(b.bytes.data());
  std::vector<HostBuffer> outputs;
  for (const GraphOutput& out : g.outputs()) {
    const Node& n = g.node(out.value);
    outputs.push_back({n.dtype, std::vector<unsigned char>(
                                    static_cast<size_t>(element_count(n.dims)) * dtype_size(n.dtype), 0xA5)});
  }
  std::vector<void*> out;
  for (HostBuffer& b : outputs) out.push_back(b.bytes.data());
  evaluate_reference(g, in, out);
  return outputs;
}

// Same value, NaN equal to NaN, and the sign of zero must match.
inline bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

inline void expect_same_values(const std::vector<double>& actual, const std::vector<double>& expected,
                               const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t k = 0; k < actual.size(); ++k) {
    EXPECT_TRUE(same_value(actual[k], expected[k]))
        << what << " element " << k << ": got " << actual[k] << ", expected " << expected[k];
  }
}

inline const std::vector<DType>& float_dtypes() {
  static const std::vector<DType> dtypes = {DType::kF32, DType::kF64, DType::kF16, DType::kBF16};
  return dtypes;
}

}  // namespace fstitch::reftest
