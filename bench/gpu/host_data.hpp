// Host-side data of the GPU benchmark: random inputs, reading elements of any float dtype,
// and the accuracy measures of DESIGN §9 (relative L2 error against the reference; a
// non-finite value where the reference is finite always fails).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/dtype.hpp"

namespace fstitch::bench_gpu {

// `count` elements of `dtype` drawn uniformly from [-2, 2) (splitmix64 from `seed`), rounded
// to the dtype. Only floating dtypes: the canonical graphs have no other inputs.
std::vector<unsigned char> random_elements(int64_t count, DType dtype, uint64_t seed);

// Element `index` of a dense buffer of floating `dtype`, as a double.
double element_as_double(const void* base, int64_t index, DType dtype);

// Elements among `count` that are NaN or infinite.
int64_t count_nonfinite(const void* base, int64_t count, DType dtype);

// The accuracy limit of an output of `dtype`: 1e-2 for f16 and bf16, 1e-5 otherwise.
double relative_l2_limit(DType dtype);

struct Accuracy {
  double relative_l2 = 0;            // ||result - reference||_2 / ||reference||_2 over the finite pairs
  int64_t mismatched_nonfinite = 0;  // elements non-finite in one buffer but not the other
  bool passes(double limit) const { return mismatched_nonfinite == 0 && relative_l2 <= limit; }
};

// Compares `count` elements of `result` with `reference`, both of `dtype`.
Accuracy compare_elements(const void* result, const void* reference, int64_t count, DType dtype);

}  // namespace fstitch::bench_gpu
