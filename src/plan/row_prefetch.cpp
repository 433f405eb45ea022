#include "plan/row_prefetch.hpp"

#include <algorithm>
#include <cmath>

#include "plan/cost_model.hpp"
#include "plan/row_exchange.hpp"

namespace fstitch {

namespace {

// Rows each taken whole by the threads of one block: sub-warp, warp or block per row.
bool one_block_per_row(const KernelSpec& s) {
  return s.schedule == ScheduleKind::kSubWarpPerRow || s.schedule == ScheduleKind::kWarpPerRow ||
         s.schedule == ScheduleKind::kBlockPerRow;
}

}  // namespace

bool row_prefetch_applies(const KernelSpec& s) {
  return one_block_per_row(s) && s.phases > 0 && keeps_values_in_registers(s) && s.vector_width > 1 &&
         s.row_alignment == RowVectorAlignment::kRowStart;
}

int row_prefetch_registers(const Graph& g, const KernelSpec& s) {
  const int64_t n = element_count(s.domain);
  int64_t words = 0;
  for (ValueId v : s.loaded) {
    if (element_count(g.node(v).dims) != n) continue;
    words += (s.elems_per_thread * static_cast<int64_t>(dtype_size(g.node(v).dtype)) + 3) / 4;
  }
  return static_cast<int>(std::min<int64_t>(255, words));
}

RowTimeline row_timeline(const ArchParams& a, const Graph& g, const KernelSpec& s) {
  RowTimeline t;
  // The first pass's loads take one memory latency per round of the bytes a thread keeps in
  // flight.
  const int64_t n = element_count(s.domain);
  double row_bytes = 0;
  for (ValueId v : s.loaded) {
    if (element_count(g.node(v).dims) == n)
      row_bytes += static_cast<double>(dtype_size(g.node(v).dtype)) * static_cast<double>(s.elems_per_thread);
  }
  const double in_flight = std::max(1.0, bytes_in_flight_per_thread(g, s));
  t.loads = std::max(1.0, std::ceil(row_bytes / in_flight)) * a.memory_latency_seconds;
  // Each pass ends in a combine of the row's threads: a shuffle round per halving within the
  // warp, then across warps through shared memory behind the row's exchange barriers
  // (plan/row_exchange.hpp; a shared access costs about a shuffle).
  const int T = std::max(1, s.threads_per_row);
  const double steps = std::log2(std::min(32.0, static_cast<double>(T)));
  double combine = steps * a.warp_shuffle_seconds;
  if (T > 32) {
    const double barriers_per_pass =
        static_cast<double>(row_barriers(g, s)) / static_cast<double>(std::max(1, row_exchanges(g, s)));
    combine += barriers_per_pass * a.block_barrier_seconds + (2.0 + T / 32.0) * a.warp_shuffle_seconds;
  }
  // The row's instructions, at one warp instruction per clock; the first pass is one of the
  // phases + 1 passes.
  const double instructions = instructions_per_element(g, s) * static_cast<double>(s.elems_per_thread);
  const double compute = instructions / a.clock_hz;
  t.first_pass = compute / (s.phases + 1.0);
  t.rest = static_cast<double>(std::max(1, s.phases)) * combine + compute;
  return t;
}

double row_load_duty(const ArchParams& a, const Graph& g, const KernelSpec& s) {
  if (!one_block_per_row(s) || s.phases == 0) return 1;
  const RowTimeline t = row_timeline(a, g, s);
  const double period =
      s.prefetch == RowPrefetch::kNextRow ? std::max(t.loads + t.first_pass, t.rest) : t.loads + t.rest;
  return std::min(1.0, t.loads / std::max(period, 1e-15));
}

}  // namespace fstitch
