#include "ref/gelu_table.hpp"

#include <cmath>

#include "ir/numeric.hpp"
#include "ref/elementwise.hpp"
#include "ref/tensor.hpp"

namespace fstitch::ref {
namespace {

constexpr uint32_t kSign = 0x8000u;
constexpr uint32_t kInfinity = 0x7f80u;  // magnitude bits of +-inf; above it, NaN
constexpr uint16_t kMinusZero = 0x8000u;

// x / 2 rounded to bf16 (halving is exact in f64).
uint16_t half_bits(uint16_t bits) {
  return f64_to_bf16_bits(bf16_bits_to_f64(bits) / 2);
}

Bf16GeluTable build() {
  // The smallest magnitude where x / 2 is not the reference's value, for either sign, and
  // the magnitudes from which x (positive) and -0 (negative) are.
  uint32_t first = kInfinity;
  uint32_t positive_end = 0, negative_end = 0;
  for (uint32_t mag = 0; mag < kInfinity; ++mag) {
    for (uint32_t sign : {0u, kSign}) {
      const uint16_t bits = static_cast<uint16_t>(sign | mag);
      const uint16_t value = bf16_gelu_reference(bits);
      if (value != half_bits(bits) && mag < first) first = mag;
      if (sign == 0 && value != bits) positive_end = mag + 1;
      if (sign != 0 && value != kMinusZero) negative_end = mag + 1;
    }
  }
  Bf16GeluTable t;
  t.first_magnitude = first;
  t.positive = positive_end > first ? positive_end - first : 0;
  t.negative = negative_end > first ? negative_end - first : 0;
  for (uint32_t sign : {0u, kSign}) {
    const uint32_t count = sign ? t.negative : t.positive;
    for (uint32_t k = 0; k < count; ++k)
      t.entries.push_back(bf16_gelu_reference(static_cast<uint16_t>(sign | (first + k))));
  }
  // The rules hold outside the table by construction; the special values are checked here.
  if (bf16_gelu_reference(kInfinity) != kInfinity || !std::isnan(gelu_erf(-INFINITY)))
    internal_error("the reference GELU is not +inf at +inf and NaN at -inf");
  return t;
}

}  // namespace

uint16_t bf16_gelu_reference(uint16_t bits) {
  return f64_to_bf16_bits(gelu_erf(bf16_bits_to_f64(bits)));
}

const Bf16GeluTable& bf16_gelu_table() {
  static const Bf16GeluTable table = build();
  return table;
}

}  // namespace fstitch::ref
