#include "host_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/random_graph.hpp"
#include "ir/numeric.hpp"
#include "support/error.hpp"

namespace fstitch::bench_gpu {
namespace {

void require_float(DType dtype) {
  if (!is_float(dtype)) {
    fail(StatusCode::kUnsupported,
         std::string("the GPU benchmark handles floating dtypes only, not ") + dtype_name(dtype));
  }
}

}  // namespace

std::vector<unsigned char> random_elements(int64_t count, DType dtype, uint64_t seed) {
  require_float(dtype);
  const size_t size = dtype_size(dtype);
  std::vector<unsigned char> bytes(static_cast<size_t>(count) * size);
  testing::Rng rng(seed);
  for (int64_t i = 0; i < count; ++i) {
    const double value = rng.uniform(-2.0, 2.0);
    unsigned char* at = bytes.data() + static_cast<size_t>(i) * size;
    switch (dtype) {
      case DType::kF32: {
        const auto f = static_cast<float>(value);
        std::memcpy(at, &f, sizeof f);
        break;
      }
      case DType::kF64:
        std::memcpy(at, &value, sizeof value);
        break;
      case DType::kF16: {
        const uint16_t bits = f64_to_f16_bits(value);
        std::memcpy(at, &bits, sizeof bits);
        break;
      }
      default: {
        const uint16_t bits = f64_to_bf16_bits(value);
        std::memcpy(at, &bits, sizeof bits);
        break;
      }
    }
  }
  return bytes;
}

double element_as_double(const void* base, int64_t index, DType dtype) {
  require_float(dtype);
  const auto* at = static_cast<const unsigned char*>(base) + static_cast<size_t>(index) * dtype_size(dtype);
  switch (dtype) {
    case DType::kF32: {
      float f;
      std::memcpy(&f, at, sizeof f);
      return f;
    }
    case DType::kF64: {
      double d;
      std::memcpy(&d, at, sizeof d);
      return d;
    }
    case DType::kF16: {
      uint16_t bits;
      std::memcpy(&bits, at, sizeof bits);
      return f16_bits_to_f64(bits);
    }
    default: {
      uint16_t bits;
      std::memcpy(&bits, at, sizeof bits);
      return bf16_bits_to_f64(bits);
    }
  }
}

int64_t count_nonfinite(const void* base, int64_t count, DType dtype) {
  require_float(dtype);
  int64_t nonfinite = 0;
  if (dtype == DType::kBF16 || dtype == DType::kF16) {
    // All exponent bits set: infinity or NaN.
    const uint16_t exponent = dtype == DType::kBF16 ? 0x7F80 : 0x7C00;
    const auto* bits = static_cast<const unsigned char*>(base);
    for (int64_t i = 0; i < count; ++i) {
      uint16_t b;
      std::memcpy(&b, bits + 2 * i, sizeof b);
      if ((b & exponent) == exponent) ++nonfinite;
    }
    return nonfinite;
  }
  for (int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(element_as_double(base, i, dtype))) ++nonfinite;
  }
  return nonfinite;
}

double relative_l2_limit(DType dtype) {
  return dtype == DType::kF16 || dtype == DType::kBF16 ? 1e-2 : 1e-5;
}

Accuracy compare_elements(const void* result, const void* reference, int64_t count, DType dtype) {
  Accuracy accuracy;
  double error_sq = 0;
  double reference_sq = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double y = element_as_double(result, i, dtype);
    const double r = element_as_double(reference, i, dtype);
    const bool y_finite = std::isfinite(y);
    const bool r_finite = std::isfinite(r);
    if (y_finite != r_finite) {
      ++accuracy.mismatched_nonfinite;
      continue;
    }
    if (!r_finite) {
      // Both non-finite: the same infinity agrees; NaN never does.
      if (std::isnan(y) || std::isnan(r) || y != r) ++accuracy.mismatched_nonfinite;
      continue;
    }
    error_sq += (y - r) * (y - r);
    reference_sq += r * r;
  }
  accuracy.relative_l2 = std::sqrt(error_sq) / std::max(std::sqrt(reference_sq), 1e-300);
  return accuracy;
}

}  // namespace fstitch::bench_gpu
