// Seeded random graphs for the differential tests: elementwise chains, broadcasts, row,
// column and full reductions stitched back into elementwise code, layout ops on inputs,
// data movement (rolls, gathers, pads and interleaves along one axis),
// mixed float dtypes, and (in a separate mode) integer graphs. The same seed gives the same
// graph on every platform: the generator uses its own PRNG and never a std distribution.
//
// Float graphs are built to be numerically well conditioned, so that a correct backend
// stays within the relative L2 tolerances of docs/testing.md: arguments of sin/cos/exp/...
// are kept small, division is by (|y| + 1), sqrt/log get non-negative arguments away from
// their singular points, comparisons see graph inputs only, and a reduction result is
// subtracted only from values that vary along the reduced axes.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.hpp"

namespace fstitch::testing {

// splitmix64 to seed xoshiro256**.
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  // Uniform in [0, n); n > 0.
  uint64_t below(uint64_t n);
  // Uniform in [lo, hi], both included.
  int64_t range(int64_t lo, int64_t hi);
  // Uniform in [0, 1), 53 random bits.
  double uniform();
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  bool chance(double p) { return uniform() < p; }
  template <class T>
  const T& pick(const std::vector<T>& items) {
    return items[static_cast<size_t>(below(items.size()))];
  }

 private:
  uint64_t s_[4];
};

enum class GraphMode {
  kAuto,     // the seed decides: about one graph in seven is an integer graph
  kFloat,    // f32 mostly, some f16/bf16/f64
  kInteger,  // i32/i8/u8 arithmetic, comparisons and selects, compared exactly
};

struct RandomGraphOptions {
  GraphMode mode = GraphMode::kAuto;
  // Generator steps; each adds one operation or a small pattern (softmax- or layernorm-like).
  int max_steps = 14;
  // Rarely, rows of 100,000 elements (with few rows).
  bool allow_long_rows = true;
  // Upper bound on the element count of the graph's main shape.
  int64_t max_elements = 200000;
  // Most softmaxes are then divided by 1 + their sums down the other axes (a Sinkhorn-like
  // step: column totals that values of their own kernel read after a grid barrier). Off, the
  // generator draws exactly what it did before the option existed.
  bool column_sums_after_rows = false;
  // With column_sums_after_rows: most quotients are then divided by 1 + their sums along the
  // softmax's own axes again (a row reduction of what reads the column sums).
  bool row_sums_after_column_sums = false;
  // With row_sums_after_column_sums: most of those are then divided by 1 + their sums down the
  // other axes once more (column sums of what reads the first ones: a second grid barrier).
  bool column_sums_again = false;
};

// The graph of `seed`; its inputs are named x0, x1, ... and its outputs y0, y1, ...
Graph random_graph(uint64_t seed, const RandomGraphOptions& options = {});

// Whether random_graph(seed, options) builds an integer graph.
bool is_integer_seed(uint64_t seed, const RandomGraphOptions& options = {});

}  // namespace fstitch::testing
