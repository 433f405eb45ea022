// The rounding-noise floor of a graph's outputs: how far they move when the result of every
// float operation that a backend may round differently from the reference moves by about one
// f32 unit in the last place (sums and means by about sqrt(n) units, as a summation order
// would). It is measured with the reference evaluator on a copy of the graph that multiplies
// those results by random factors near 1, so it needs nothing from the code under test. An
// output whose floor is far above its dtype's tolerance is ill-conditioned (a difference of
// nearly equal values); the harness widens its tolerance to a multiple of the floor.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.hpp"

namespace fstitch::testing {

struct NoiseFloor {
  double l2 = 0;            // relative L2 distance from the unperturbed reference
  double max_over_rms = 0;  // largest element distance relative to the reference's RMS
};

// inputs[i] for graph.inputs()[i]; reference[i] is the reference output i. One result per
// output; zero for outputs of non-float dtype. Throws what the reference evaluator throws.
std::vector<NoiseFloor> measure_noise_floor(const Graph& graph, const std::vector<const void*>& inputs,
                                            const std::vector<const void*>& reference, uint64_t seed);

}  // namespace fstitch::testing
