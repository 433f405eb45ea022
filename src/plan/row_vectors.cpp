#include "plan/row_vectors.hpp"

#include <algorithm>

namespace fstitch {

namespace {

// Bytes of the widest element-shaped load or element store; 0 when there is none.
size_t widest_row_access(const Graph& g, const KernelSpec& spec) {
  size_t widest = 0;
  for (ValueId v : spec.loaded) {
    // Read at the element's flat index: the domain's dims, or its element count through a
    // reshape (codegen reads both in the row's vectors).
    if (element_count(g.node(v).dims) == element_count(spec.domain))
      widest = std::max(widest, dtype_size(g.node(v).dtype));
  }
  for (ValueId v : spec.stored) {
    if (spec.role(v) == ValueRole::kElement) widest = std::max(widest, dtype_size(g.node(v).dtype));
  }
  return widest;
}

}  // namespace

const char* row_vector_alignment_name(RowVectorAlignment a) {
  return a == RowVectorAlignment::kShifted ? "shifted" : "row-start";
}

int64_t widest_row_vector(const Graph& g, const KernelSpec& spec) {
  const size_t widest = widest_row_access(g, spec);
  if (widest == 0 || widest > 16) return 0;
  return static_cast<int64_t>(16 / widest);
}

int64_t shifted_row_slots(int64_t cols, int64_t threads, int vector) {
  const int64_t T = std::max<int64_t>(1, threads), V = std::max(1, vector);
  const int64_t vectors = cols / V;
  return (vectors + T - 1) / T * V + (2 * (V - 1) + T - 1) / T;
}

int64_t innermost_row_run(const KernelSpec& spec) {
  if (spec.contiguous_rows) return spec.cols;
  int64_t run = 1;
  int64_t axis = static_cast<int64_t>(spec.domain.size()) - 1;
  for (auto it = spec.reduced_axes.rbegin(); it != spec.reduced_axes.rend() && *it == axis; ++it, --axis)
    run *= spec.domain[static_cast<size_t>(axis)];
  return axis == static_cast<int64_t>(spec.domain.size()) - 1 ? 0 : run;
}

int row_vector_width(const Graph& g, const KernelSpec& spec, RowVectorAlignment alignment,
                     RowVectorSlots slots) {
  if (spec.reduced_axes.empty() || spec.schedule == ScheduleKind::kThreadPerRow) return 1;
  const int64_t run = innermost_row_run(spec);
  if (!spec.contiguous_rows && (run == 0 || alignment == RowVectorAlignment::kShifted)) return 1;
  const size_t widest = widest_row_access(g, spec);
  if (widest == 0 || widest > 16) return 1;
  const int64_t T = spec.threads_per_row;
  int64_t V = static_cast<int64_t>(16 / widest);
  if (alignment == RowVectorAlignment::kShifted) {
    // Every row needs a whole vector whatever its shift: at least 2V - 1 columns.
    const bool applies =
        spec.cols % V != 0 && spec.cols >= 2 * V - 1 && V * static_cast<int64_t>(widest) >= 4;
    return applies ? static_cast<int>(V) : 1;
  }
  auto fits = [&](int64_t width) {
    if (spec.cols % width != 0 || run % width != 0) return false;
    if (slots == RowVectorSlots::kWholeVectors) return true;
    const int64_t vectors = spec.cols / width;
    return (vectors + T - 1) / T * width <= spec.elems_per_thread;
  };
  while (V > 1 && !fits(V)) V /= 2;
  if (V * static_cast<int64_t>(widest) < 4) return 1;
  return static_cast<int>(V);
}

std::vector<int> vector_fitting_row_threads(const Graph& g, const KernelSpec& spec) {
  std::vector<int> threads;
  const size_t widest = widest_row_access(g, spec);
  if (widest == 0 || widest > 16 || spec.reduced_axes.empty() || !spec.contiguous_rows) return threads;
  const int64_t V = static_cast<int64_t>(16 / widest);
  if (spec.cols % V != 0) return threads;
  const int64_t vectors = spec.cols / V;
  // k whole vectors per thread; past 16 a thread's share is long enough that the power-of-two
  // block sizes already cover the row with few partial steps.
  for (int64_t k = 1; k <= 16; ++k) {
    if (vectors % k != 0) continue;
    const int64_t t = vectors / k;
    if (t < 64 || t > 1024 || t % 32 != 0 || (t & (t - 1)) == 0) continue;
    threads.push_back(static_cast<int>(t));
  }
  return threads;
}

}  // namespace fstitch
