// GELU (erf form) of every bf16 value, tabulated from the reference evaluator: the values
// generated kernels look up (codegen/gelu_lookup.hpp) so that GELU in bf16 is the
// reference's, bit for bit, at a fraction of the f32 evaluation's instructions.
//
// Outside the table three rules give the reference's value (checked over every input when
// the table is built):
//   - magnitudes below `first_magnitude`: GELU(x) rounds as x / 2 does;
//   - positive x from first_magnitude + positive on (+inf included): GELU(x) rounds to x;
//   - negative x from first_magnitude + negative on: GELU(x) rounds to -0 (-inf gives NaN).
// NaN stays NaN. The table holds `positive` entries for x > 0, magnitudes first_magnitude,
// first_magnitude + 1, ..., then `negative` entries for x < 0 likewise, each the bf16 bits
// of the reference's result.
#pragma once

#include <cstdint>
#include <vector>

namespace fstitch::ref {

struct Bf16GeluTable {
  uint32_t first_magnitude = 0;  // bf16 bits without the sign
  uint32_t positive = 0;
  uint32_t negative = 0;
  std::vector<uint16_t> entries;  // positive + negative
};

// Built once, on first use (thread-safe).
const Bf16GeluTable& bf16_gelu_table();

// GELU of the bf16 value with these bits as the reference evaluator gives it, rounded to
// bf16 (NaN as 0x7fc0).
uint16_t bf16_gelu_reference(uint16_t bits);

}  // namespace fstitch::ref
