#include "plan/online_sums.hpp"

#include <algorithm>

#include "plan/kernel_spec.hpp"

namespace fstitch {
namespace {

bool wide_float(DType t) {
  return t == DType::kF32 || t == DType::kF64;
}

}  // namespace

std::vector<OnlineSum> find_online_sums(const Graph& g, const KernelSpec& spec) {
  std::vector<OnlineSum> sums;
  auto member = [&](ValueId v) { return v >= 0 && spec.is_member(v); };
  for (ValueId v : spec.members) {
    const Node& sum = g.node(v);
    if (sum.op != OpKind::kReduceSum || spec.role(v) != ValueRole::kRow || !wide_float(sum.dtype)) continue;
    const ValueId e = sum.operands[0];
    if (!member(e) || g.node(e).op != OpKind::kExp || g.node(e).dtype != sum.dtype) continue;
    const ValueId d = g.node(e).operands[0];
    if (!member(d) || g.node(d).op != OpKind::kSub || g.node(d).dtype != sum.dtype) continue;
    const ValueId a = g.node(d).operands[0], b = g.node(d).operands[1];
    if (!member(b) || g.node(b).op != OpKind::kBroadcast) continue;
    const ValueId m = g.node(b).operands[0];
    if (!member(m) || g.node(m).op != OpKind::kReduceMax || spec.role(m) != ValueRole::kRow) continue;
    const Node& max = g.node(m);
    if (max.operands[0] != a || max.axes != sum.axes || max.dtype != sum.dtype) continue;
    if (g.node(a).dtype != sum.dtype || g.node(a).dims != spec.domain) continue;
    if (online_max_of(sums, m)) continue;  // one sum rescaled with each max
    sums.push_back({m, v, a, d, e});
  }
  return sums;
}

std::vector<int> levels_with_online_sums(const Graph& g, const KernelSpec& spec,
                                         const std::vector<OnlineSum>& sums) {
  std::vector<int> levels(spec.members.size(), 0);
  for (size_t i = 0; i < spec.members.size(); ++i) {
    const ValueId v = spec.members[i];
    const Node& n = g.node(v);
    if (const OnlineSum* s = online_sum_of(sums, v)) {
      levels[i] = levels[static_cast<size_t>(spec.index_of(s->max))];
      continue;
    }
    int level = 0;
    for (ValueId op : n.operands) {
      const int k = spec.index_of(op);
      if (k >= 0) level = std::max(level, levels[static_cast<size_t>(k)]);
    }
    if (op_family(n.op) == OpFamily::kReduce && !spec.is_column_total(v)) level += 1;
    levels[i] = level;
  }
  return levels;
}

const OnlineSum* online_sum_of(const std::vector<OnlineSum>& sums, ValueId v) {
  const auto it = std::find_if(sums.begin(), sums.end(), [&](const OnlineSum& s) { return s.sum == v; });
  return it == sums.end() ? nullptr : &*it;
}

const OnlineSum* online_max_of(const std::vector<OnlineSum>& sums, ValueId v) {
  const auto it = std::find_if(sums.begin(), sums.end(), [&](const OnlineSum& s) { return s.max == v; });
  return it == sums.end() ? nullptr : &*it;
}

}  // namespace fstitch
