// Online sums (the running max and sum of softmax): a sum of exp(a - max) where
// max = reduce_max(a) over the same axes needs the max before it starts, one pass over the
// data after the max's. Accumulated beside the max instead, the sum is rescaled whenever the
// running max grows (s * exp(m - m') + exp(a - m')) and partials combine as pairs, so it
// is complete in the max's own pass: a column softmax runs two passes over its chunks, not
// three. The column tile (plan/schedule_columns.hpp) takes them.
#pragma once

#include <vector>

#include "ir/graph.hpp"

namespace fstitch {

struct KernelSpec;

// A reduce_sum `sum` of exp(sub(a, broadcast(max))) with max = reduce_max(a): a, the sub, the
// exp and both reductions in f32 or f64 (nothing rounded to a narrower type between them,
// so only the order of the additions differs from the plain sum).
struct OnlineSum {
  ValueId max = -1;
  ValueId sum = -1;
  ValueId operand = -1;  // a
  ValueId sub = -1;      // a - broadcast(max)
  ValueId exp = -1;      // exp(a - broadcast(max))

  bool operator==(const OnlineSum& o) const { return max == o.max && sum == o.sum; }
};

// The online sums among the kernel's members (spec analyzed up to roles and levels): every
// value of the pattern a member, the reductions row reductions over the kernel's axes.
std::vector<OnlineSum> find_online_sums(const Graph& g, const KernelSpec& spec);

// The members' levels (KernelSpec::levels) when each online sum accumulates in its max's
// pass: the sum takes its max's level, and what is computed from it follows.
std::vector<int> levels_with_online_sums(const Graph& g, const KernelSpec& spec,
                                         const std::vector<OnlineSum>& sums);

// Whether v is the sum of one of `sums`, and the entry.
const OnlineSum* online_sum_of(const std::vector<OnlineSum>& sums, ValueId v);
// Whether v is the max of one of `sums`, and the entry.
const OnlineSum* online_max_of(const std::vector<OnlineSum>& sums, ValueId v);

}  // namespace fstitch
