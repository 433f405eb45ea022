// Deterministic random graphs for planner scaling: elementwise ops, broadcasts and row
// reductions over one [rows, cols] domain, wired as a long chain or as a wide DAG.
#pragma once

#include <cstdint>

#include "ir/graph.hpp"

namespace fstitch::bench {

// splitmix64: tiny, fast, and the same sequence on every platform.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();
  // Uniform in [0, n); n > 0. The modulo bias is irrelevant for generating graphs.
  uint64_t below(uint64_t n) { return next() % n; }
  // True with probability percent / 100.
  bool percent(uint64_t percent) { return below(100) < percent; }

 private:
  uint64_t state_;
};

enum class DagShape : uint8_t {
  kChain,  // operands are almost always the newest values: long dependency chains
  kDag,    // operands are drawn from the whole graph half of the time: long-range edges
};
const char* dag_shape_name(DagShape shape);

struct RandomDagOptions {
  int64_t operations = 1000;  // nodes to create besides the graph inputs
  DagShape shape = DagShape::kChain;
  uint64_t seed = 1;
  int64_t rows = 1024;
  int64_t cols = 1024;
};

// A verified f32 graph with at least options.operations operation nodes (a step may add
// two: an operation and the broadcast its operand needs). Every value nothing else reads
// is a graph output.
Graph random_dag(const RandomDagOptions& options);

}  // namespace fstitch::bench
