// Judging a backend's outputs against the reference evaluator: which tolerance each output
// deserves, and the comparison itself (docs/testing.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.hpp"

namespace fstitch::testing {

struct Tolerance {
  // Every element must equal the reference: integers, bools, and floats whose computation
  // involves no rounding that could differ (layout ops, casts, max/min, select of inputs).
  bool exact = true;
  double l2 = 0;            // bound on ||y - ref||_2 / max(||ref||_2, tiny)
  double max_over_rms = 0;  // bound on max_i |y_i - ref_i| / max(rms(ref), tiny)
};

// The tolerance of each graph output. A float value is inexact when an operation on its
// path rounds differently in f32 than in the reference's f64 (arithmetic, transcendental
// functions, sums and means); it then gets the tolerance of the lowest-precision dtype among
// the inexact values it depends on: f32/f64 1e-5, f16/bf16 1e-2 (a computed value rounded to
// f16 may land one f16 ulp away, even when the output is f32).
std::vector<Tolerance> output_tolerances(const Graph& graph);

// Whether node n, given identical operands, may give a different result in the backend's
// compute type (f32 for f32/f16/bf16) than in the reference's float64.
bool rounds_differently(const Graph& graph, const Node& n);

struct Comparison {
  bool ok = true;
  double l2_error = 0;      // relative L2 error (inexact float outputs)
  double max_over_rms = 0;  // largest element error relative to the reference's RMS
  int64_t bad_elements = 0;
  std::string report;  // on failure: the measures and the first mismatching elements
};

// Compares dense buffers of `dims` elements of `dtype`.
Comparison compare_output(const void* result, const void* reference, DType dtype, const Dims& dims,
                          const Tolerance& tolerance);

}  // namespace fstitch::testing
