#include "plan/row_vectors.hpp"

#include <algorithm>

namespace fstitch {

int row_vector_width(const Graph& g, const KernelSpec& spec) {
  if (spec.reduced_axes.empty() || !spec.contiguous_rows || spec.schedule == ScheduleKind::kThreadPerRow)
    return 1;
  size_t widest = 0;
  for (ValueId v : spec.loaded) {
    if (g.node(v).dims == spec.domain) widest = std::max(widest, dtype_size(g.node(v).dtype));
  }
  for (ValueId v : spec.stored) {
    if (spec.role(v) == ValueRole::kElement) widest = std::max(widest, dtype_size(g.node(v).dtype));
  }
  if (widest == 0 || widest > 16) return 1;
  const int64_t T = spec.threads_per_row;
  int64_t V = static_cast<int64_t>(16 / widest);
  auto fits = [&](int64_t width) {
    if (spec.cols % width != 0) return false;
    const int64_t vectors = spec.cols / width;
    return (vectors + T - 1) / T * width <= spec.elems_per_thread;
  };
  while (V > 1 && !fits(V)) V /= 2;
  if (V * static_cast<int64_t>(widest) < 4) return 1;
  return static_cast<int>(V);
}

}  // namespace fstitch
