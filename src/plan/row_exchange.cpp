#include "plan/row_exchange.hpp"

#include <set>

#include "plan/schedule_columns.hpp"

namespace fstitch {

namespace {

bool exchanged(const Graph& g, const KernelSpec& s, ValueId v) {
  return op_family(g.node(v).op) == OpFamily::kReduce && !s.is_column_total(v);
}

}  // namespace

int row_exchanges(const Graph& g, const KernelSpec& s) {
  if (s.threads_per_row <= 32 || s.schedule == ScheduleKind::kColumnTile) return 0;
  std::set<int> levels;
  for (ValueId v : s.members) {
    if (exchanged(g, s, v)) levels.insert(s.level(v));
  }
  const bool group_in_global =
      s.schedule == ScheduleKind::kSplitRow && s.split.residency != GroupResidency::kCluster;
  return static_cast<int>(levels.size()) * (group_in_global ? 2 : 1);
}

int row_barriers(const Graph& g, const KernelSpec& s) {
  const int exchanges = row_exchanges(g, s);
  const bool shifted_slots = s.row_alignment == RowVectorAlignment::kShifted && s.cache == RowCache::kShared;
  return exchanges + (shifted_slots || exchanges % 2 == 1 ? 1 : 0);
}

size_t row_exchange_scratch_bytes(const Graph& g, const KernelSpec& s) {
  if (s.threads_per_row <= 32 || s.schedule == ScheduleKind::kColumnTile) return 0;
  const size_t warps = static_cast<size_t>(s.threads_per_row / 32);
  size_t bytes = 0;
  for (ValueId v : s.members) {
    if (!exchanged(g, s, v)) continue;
    const size_t size = accumulator_bytes(g.node(v).op, g.node(v).dtype);
    bytes += 2 * warps * size;
  }
  // An array per accumulator type: at most four (float, double, int, long long).
  return bytes == 0 ? 0 : bytes + 16 * 4;
}

}  // namespace fstitch
