// What every section of the report shares: the run counts, the graph shapes, and the
// list of findings (measurements that deserve a reader's attention) collected on the way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/dtype.hpp"

namespace fstitch::bench {

struct BenchConfig {
  int planner_runs = 11;  // plan_fusion calls per canonical graph and policy
  int compile_runs = 3;   // cold and disk compiles per stitch plan
  int warm_runs = 101;    // memory-hit lookups per stitch plan
  int scaling_runs = 5;   // plan_fusion calls per random graph (fewer when one run is slow)
  bool quick = false;     // small shapes and graphs only: a smoke run of the whole report
};

struct BenchShape {
  int64_t rows;
  int64_t cols;
  DType dtype;
};

// "8192x1024".
std::string shape_text(const BenchShape& shape);

// The shapes the canonical graphs are planned at.
std::vector<BenchShape> canonical_shapes(const BenchConfig& config);

// Notable measurements, listed at the end of the report.
struct Findings {
  std::vector<std::string> items;
  void add(std::string item) { items.push_back(std::move(item)); }
};

// Progress on stderr, so a long run shows what it is doing.
void progress(const std::string& message);

}  // namespace fstitch::bench
