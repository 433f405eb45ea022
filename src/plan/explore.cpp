#include "plan/explore.hpp"

#include "plan/scratch.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <unordered_map>

namespace fstitch {
namespace {

struct Pattern {
  std::vector<ValueId> members;  // sorted
  double score = 0;              // seconds saved against one kernel per operation
};

std::vector<ValueId> merge_sorted(const std::vector<ValueId>& a, const std::vector<ValueId>& b) {
  std::vector<ValueId> out;
  out.reserve(a.size() + b.size());
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

bool overlaps(const std::vector<ValueId>& members, const std::vector<int>& kernel_of) {
  for (ValueId v : members) {
    if (kernel_of[static_cast<size_t>(v)] >= 0) return true;
  }
  return false;
}

// Cycle searches give up (reporting a cycle) past these many operations: candidates are
// many and cheap to lose, plan-level decisions few.
constexpr size_t kCandidateSearch = 128;
constexpr size_t kPlanSearch = 512;

}  // namespace

namespace {

// The kernel of each operation of a graph of n operations (-1: none).
std::vector<int> kernel_of_members(size_t n, const std::vector<std::vector<ValueId>>& kernels) {
  std::vector<int> kernel_of(n, -1);
  for (size_t k = 0; k < kernels.size(); ++k) {
    for (ValueId v : kernels[k]) kernel_of[static_cast<size_t>(v)] = static_cast<int>(k);
  }
  return kernel_of;
}

}  // namespace

void merge_kernels(const PlanInputs& in, std::vector<int>& kernel_of,
                   std::vector<std::vector<ValueId>>& kernels) {
  std::vector<KernelSpec> specs(kernels.size());
  std::vector<bool> ok(kernels.size());
  KernelList kernel_ptrs;  // stays valid: `kernels` is never resized here
  for (const auto& k : kernels) kernel_ptrs.push_back(&k);
  KernelSpans spans(kernel_of.size());
  for (size_t a = 0; a < kernels.size(); ++a) {
    ok[a] = analyze_kernel(in, kernels[a], &specs[a], nullptr);
    spans.add(kernels[a]);
  }
  // `check_cycle` is false when b is a's only consumer kernel (or the reverse) and no value of
  // a leaves the kernels: every path out of the producer then enters the consumer directly, so
  // merging cannot form a cycle.
  auto try_merge = [&](size_t a, size_t b, bool check_cycle) {
    std::vector<ValueId> joined = merge_sorted(kernels[a], kernels[b]);
    KernelSpec sj;
    if (!analyze_kernel(in, joined, &sj, nullptr)) return false;
    if (sj.est_seconds >= specs[a].est_seconds + specs[b].est_seconds) return false;
    if (check_cycle) {
      // Check the joined kernel with its members unassigned (restored right after).
      for (ValueId v : joined) kernel_of[static_cast<size_t>(v)] = -1;
      const bool cycle = creates_cycle(in, joined, kernel_of, kernel_ptrs, spans, kPlanSearch);
      for (ValueId v : kernels[a]) kernel_of[static_cast<size_t>(v)] = static_cast<int>(a);
      for (ValueId v : kernels[b]) kernel_of[static_cast<size_t>(v)] = static_cast<int>(b);
      if (cycle) return false;
    }
    spans.add(joined);  // stale spans of a and b only widen later searches
    for (ValueId v : joined) kernel_of[static_cast<size_t>(v)] = static_cast<int>(a);
    kernels[a] = std::move(joined);
    specs[a] = std::move(sj);
    kernels[b].clear();
    ok[b] = false;
    return true;
  };
  // Producers into consumers until nothing changes (a few rounds in practice; the bound
  // keeps large graphs near-linear), one pass of remote fusion, then producers again.
  bool changed = false;
  auto merge_producers = [&] {
    bool more = true;
    for (int round = 0; more && round < 8; ++round) {
      more = false;
      // Producer into its only consumer kernel. A user outside every kernel (an opaque
      // operation, run by the caller) is a path that may come back into the consumer
      // (`y = a + opaque(a)`), so then the merge needs the cycle check after all. A producer
      // with several consumer kernels (a value a norm reads and a residual add far later)
      // tries each of a few of them, with the cycle check: its values still leave for the
      // others.
      constexpr size_t kConsumersTried = 4;
      std::vector<int> consumers;
      for (size_t a = 0; a < kernels.size(); ++a) {
        if (!ok[a]) continue;
        consumers.clear();
        bool leaves_kernels = false;
        for (ValueId v : kernels[a]) {
          for (ValueId u : in.users[static_cast<size_t>(v)]) {
            const int k = kernel_of[static_cast<size_t>(u)];
            if (k == static_cast<int>(a)) continue;
            if (k < 0) {
              leaves_kernels = true;
              continue;
            }
            if (std::find(consumers.begin(), consumers.end(), k) == consumers.end()) consumers.push_back(k);
          }
        }
        const bool single = consumers.size() == 1;
        std::sort(consumers.begin(), consumers.end());
        if (consumers.size() > kConsumersTried) consumers.resize(kConsumersTried);
        for (int consumer : consumers) {
          if (!ok[static_cast<size_t>(consumer)]) continue;
          const size_t c = static_cast<size_t>(consumer);
          if (try_merge(std::min(a, c), std::max(a, c), leaves_kernels || !single)) {
            more = true;
            break;
          }
        }
      }
    }
  };
  merge_producers();
  if (in.policy == FusionPolicy::kStitch) {
    // Remote fusion of kernels with one domain that share an input: the candidates come
    // from the kernels reading each input (a bounded number per input keeps it near-linear).
    std::unordered_map<ValueId, std::vector<size_t>> readers;
    for (size_t a = 0; a < kernels.size(); ++a) {
      if (!ok[a]) continue;
      for (ValueId x : specs[a].loaded) {
        auto& list = readers[x];
        if (list.size() < 8) list.push_back(a);
      }
    }
    for (auto& entry : readers) {
      const std::vector<size_t>& list = entry.second;
      for (size_t i = 0; i < list.size(); ++i) {
        for (size_t j = i + 1; j < list.size(); ++j) {
          const size_t a = std::min(list[i], list[j]), b = std::max(list[i], list[j]);
          // Elementwise kernels share a flat domain of one element count; row kernels need
          // the same domain (reduced over the same axes, or over complementary ones: a
          // column reduction joins a row kernel as a column total).
          const bool flat = specs[a].reduced_axes.empty() && specs[b].reduced_axes.empty() &&
                            element_count(specs[a].domain) == element_count(specs[b].domain);
          if (!ok[a] || !ok[b] || (!flat && specs[b].domain != specs[a].domain)) {
            continue;
          }
          if (try_merge(a, b, true)) changed = true;
        }
      }
    }
  }
  if (changed) merge_producers();
}

void KernelSpans::add(const std::vector<ValueId>& kernel) {
  if (kernel.empty()) return;
  const ValueId end = kernel.back();
  for (size_t i = static_cast<size_t>(kernel.front()) + 1; i < tree_.size(); i += i & (~i + 1)) {
    tree_[i] = std::max(tree_[i], end);
  }
}

ValueId KernelSpans::reach(ValueId upto) const {
  ValueId r = -1;
  for (size_t i = std::min(static_cast<size_t>(upto) + 1, tree_.size() - 1); i > 0; i -= i & (~i + 1)) {
    r = std::max(r, tree_[i]);
  }
  return r;
}

ValueId KernelSpans::bound(ValueId last) const {
  ValueId b = last;
  for (ValueId r = reach(b); r > b; r = reach(b)) b = r;
  return b;
}

bool creates_cycle(const PlanInputs& in, const std::vector<ValueId>& members,
                   const std::vector<int>& kernel_of, const KernelList& kernels, const KernelSpans& spans,
                   size_t max_visits) {
  // A cycle needs a path that leaves the set and comes back. Operations are numbered in
  // topological order and kernels only jump within their spans, so the path never passes
  // an operation numbered above the bound.
  const ValueId last = spans.bound(members.back());
  const MemberIndex index(in.graph->size(), members);
  auto in_set = [&](ValueId v) { return index(v) >= 0; };
  SeenSet seen(in.graph->size());
  std::vector<int> kernels_seen;
  std::vector<ValueId> stack;
  auto visit = [&](ValueId v) {
    if (v > last || in_set(v) || !seen.insert(v)) return;
    stack.push_back(v);
  };
  for (ValueId m : members) {
    for (ValueId u : in.users[static_cast<size_t>(m)]) visit(u);
  }
  // Past max_visits operations the search gives up and reports a cycle: a fusion is then
  // missed, never made wrongly, and planning stays near-linear in the graph size.
  size_t visits = 0;
  while (!stack.empty()) {
    if (++visits > max_visits) return true;
    ValueId v = stack.back();
    stack.pop_back();
    for (ValueId u : in.users[static_cast<size_t>(v)]) {
      if (in_set(u)) return true;
      visit(u);
    }
    // Entering a kernel makes all of its outputs reachable.
    int k = kernel_of[static_cast<size_t>(v)];
    if (k >= 0 && std::find(kernels_seen.begin(), kernels_seen.end(), k) == kernels_seen.end()) {
      kernels_seen.push_back(k);
      for (ValueId w : *kernels[static_cast<size_t>(k)]) {
        if (in_set(w)) return true;
        visit(w);
      }
    }
  }
  return false;
}

bool may_hold_column_totals(const Graph& g, const std::vector<ValueId>& members) {
  // A column total keeps its operand's columns: a reduction that sums the operand's last
  // axis (of more than one element) is a row reduction in every domain the kernel can have.
  for (ValueId v : members) {
    const Node& n = g.node(v);
    if (op_family(n.op) != OpFamily::kReduce || n.operands.empty()) continue;
    const Dims& operand = g.node(n.operands.front()).dims;
    if (operand.empty()) continue;
    const auto last = static_cast<int64_t>(operand.size()) - 1;
    const bool sums_last_axis = operand.back() > 1 && std::binary_search(n.axes.begin(), n.axes.end(), last);
    if (!sums_last_axis) return true;
  }
  return false;
}

bool split_at_grid_barriers(const PlanInputs& in, std::vector<std::vector<ValueId>>& kernels) {
  bool split = false;
  KernelSpec joined, part;
  const size_t count = kernels.size();
  for (size_t k = 0; k < count; ++k) {
    if (kernels[k].empty() || !may_hold_column_totals(*in.graph, kernels[k]) ||
        !analyze_kernel(in, kernels[k], &joined, nullptr) || joined.stages != RowStages::kRowsAfterTotals)
      continue;
    // Each barrier stays, or is cut with the totals it waits for on either side: in the
    // kernel before (a row kernel that also sums its values down the columns, then one that
    // scales them by the sums) or in the kernel after (a row kernel that hands its values on,
    // then one that sums and scales them). A part is a run of walks [s, e) with its ends'
    // choices; the fastest cover of the walks (dynamic programming over the cuts, walks
    // being few) replaces the kernel where it beats it.
    const int walks = joined.row_walks;
    auto part_members = [&](int s, bool totals_from_before, int e, bool totals_to_after) {
      std::vector<ValueId> members;
      for (size_t i = 0; i < joined.members.size(); ++i) {
        const int w = joined.walks[i];
        const bool total = joined.roles[i] == ValueRole::kColumnTotal;
        const bool inside = (w >= s && w < e && !(total && w == e - 1 && totals_to_after)) ||
                            (total && w == s - 1 && totals_from_before);
        if (inside) members.push_back(joined.members[i]);
      }
      return members;
    };
    // best[e][m]: the fastest cover of walks [0, e) cut at barrier e with the totals of walk
    // e - 1 after it (m = 1) or before it (m = 0); e == walks: the end of the kernel.
    const double infinity = std::numeric_limits<double>::infinity();
    struct Cover {
      double seconds = std::numeric_limits<double>::infinity();
      int from = -1;
      int from_mode = 0;
    };
    std::vector<std::array<Cover, 2>> best(static_cast<size_t>(walks) + 1);
    best[0][0].seconds = 0;
    for (int e = 1; e <= walks; ++e) {
      for (int end_mode = 0; end_mode < (e < walks ? 2 : 1); ++end_mode) {
        for (int s = 0; s < e; ++s) {
          for (int start_mode = 0; start_mode < (s > 0 ? 2 : 1); ++start_mode) {
            const double before = best[static_cast<size_t>(s)][static_cast<size_t>(start_mode)].seconds;
            if (before == infinity) continue;
            const std::vector<ValueId> members = part_members(s, start_mode == 1, e, end_mode == 1);
            if (members.empty() || !analyze_kernel(in, members, &part, nullptr)) continue;
            Cover& c = best[static_cast<size_t>(e)][static_cast<size_t>(end_mode)];
            if (before + part.est_seconds < c.seconds) c = {before + part.est_seconds, s, start_mode};
          }
        }
      }
    }
    const Cover& whole = best[static_cast<size_t>(walks)][0];
    if (whole.from <= 0 || !(whole.seconds < joined.est_seconds)) continue;  // one part: the kernel
    std::vector<std::vector<ValueId>> parts;
    for (int e = walks, mode = 0; e > 0;) {
      const Cover& c = best[static_cast<size_t>(e)][static_cast<size_t>(mode)];
      parts.push_back(part_members(c.from, c.from_mode == 1, e, mode == 1));
      mode = c.from_mode;
      e = c.from;
    }
    kernels[k] = std::move(parts.back());
    for (size_t p = parts.size() - 1; p-- > 0;) kernels.push_back(std::move(parts[p]));
    split = true;
  }
  return split;
}

void move_column_totals_to_their_reader(const PlanInputs& in, std::vector<std::vector<ValueId>>& kernels) {
  std::vector<int> kernel_of = kernel_of_members(in.graph->size(), kernels);
  KernelSpec with, reader, without, joined;
  for (size_t k = 0; k < kernels.size(); ++k) {
    if (kernels[k].empty() || !may_hold_column_totals(*in.graph, kernels[k]) ||
        !analyze_kernel(in, kernels[k], &with, nullptr) || with.column_totals.empty())
      continue;
    // The one other kernel that reads every total (an output is stored wherever it goes).
    int r = -1;
    bool one_reader = true;
    for (ValueId t : with.column_totals) {
      for (ValueId u : in.users[static_cast<size_t>(t)]) {
        const int ku = kernel_of[static_cast<size_t>(u)];
        one_reader = one_reader && ku >= 0 && ku != static_cast<int>(k) && (r < 0 || ku == r);
        r = ku;
      }
    }
    if (!one_reader || r < 0) continue;
    std::vector<ValueId> rows, totals_and_reader = kernels[static_cast<size_t>(r)];
    for (ValueId v : kernels[k]) {
      (with.is_column_total(v) ? totals_and_reader : rows).push_back(v);
    }
    std::sort(totals_and_reader.begin(), totals_and_reader.end());
    if (rows.empty() || !analyze_kernel(in, kernels[static_cast<size_t>(r)], &reader, nullptr) ||
        !analyze_kernel(in, rows, &without, nullptr) ||
        !analyze_kernel(in, totals_and_reader, &joined, nullptr))
      continue;
    if (without.est_seconds + joined.est_seconds >= with.est_seconds + reader.est_seconds) continue;
    for (ValueId t : with.column_totals) kernel_of[static_cast<size_t>(t)] = r;
    kernels[k] = std::move(rows);
    kernels[static_cast<size_t>(r)] = std::move(totals_and_reader);
  }
}

bool move_column_totals_to_their_writer(const PlanInputs& in, std::vector<std::vector<ValueId>>& kernels) {
  bool moved = false;
  const Graph& g = *in.graph;
  std::vector<int> kernel_of = kernel_of_members(g.size(), kernels);
  KernelSpec with, writer, without, joined;
  for (size_t k = 0; k < kernels.size(); ++k) {
    if (kernels[k].empty() || !may_hold_column_totals(g, kernels[k]) ||
        !analyze_kernel(in, kernels[k], &with, nullptr) || with.stages != RowStages::kRowsAfterTotals)
      continue;
    // The first walk's totals of a value one other kernel writes, read only here.
    int w = -1;
    bool one_writer = true;
    std::vector<ValueId> totals;
    for (ValueId t : with.column_totals) {
      const ValueId operand = g.node(t).operands[0];
      if (with.walk_of(t) != 0 || with.is_member(operand)) continue;
      bool read_here = true;
      for (ValueId u : in.users[static_cast<size_t>(t)]) read_here = read_here && with.is_member(u);
      if (!read_here) continue;
      const int kw = kernel_of[static_cast<size_t>(operand)];
      one_writer = one_writer && kw >= 0 && (w < 0 || kw == w);
      w = kw;
      totals.push_back(t);
    }
    if (!one_writer || w < 0 || totals.empty()) continue;
    std::vector<ValueId> rest, writer_and_totals = kernels[static_cast<size_t>(w)];
    for (ValueId v : kernels[k]) {
      if (std::find(totals.begin(), totals.end(), v) == totals.end()) rest.push_back(v);
    }
    writer_and_totals.insert(writer_and_totals.end(), totals.begin(), totals.end());
    std::sort(writer_and_totals.begin(), writer_and_totals.end());
    if (rest.empty() || !analyze_kernel(in, kernels[static_cast<size_t>(w)], &writer, nullptr) ||
        !analyze_kernel(in, rest, &without, nullptr) ||
        !analyze_kernel(in, writer_and_totals, &joined, nullptr))
      continue;
    if (without.est_seconds + joined.est_seconds >= with.est_seconds + writer.est_seconds) continue;
    for (ValueId t : totals) kernel_of[static_cast<size_t>(t)] = w;
    kernels[k] = std::move(rest);
    kernels[static_cast<size_t>(w)] = std::move(writer_and_totals);
    moved = true;
  }
  return moved;
}

std::vector<std::vector<ValueId>> explore_fusion(const PlanInputs& in, const ExploreOptions& options) {
  const Graph& g = *in.graph;
  const size_t n = g.size();
  std::vector<int> no_kernels(n, -1);
  const KernelList empty_kernels;
  const KernelSpans no_spans(n);

  // Time of each operation as its own kernel: the baseline every pattern is scored against.
  std::vector<double> alone(n, 0);
  std::vector<bool> fusable(n, false);
  KernelSpec spec;  // reused by every analysis below
  for (size_t i = 0; i < n; ++i) {
    fusable[i] = is_fusable(in, static_cast<ValueId>(i));
    if (!fusable[i]) continue;
    if (!analyze_kernel(in, {static_cast<ValueId>(i)}, &spec, nullptr)) continue;
    alone[i] = spec.est_seconds;
  }
  auto score_of = [&](const std::vector<ValueId>& members, double* out) {
    if (members.size() > in.max_candidate_ops) return false;
    if (!analyze_kernel(in, members, &spec, nullptr)) return false;
    if (members.size() > 1 &&
        creates_cycle(in, members, no_kernels, empty_kernels, no_spans, kCandidateSearch))
      return false;
    double baseline = 0;
    for (ValueId v : members) baseline += alone[static_cast<size_t>(v)];
    *out = baseline - spec.est_seconds;
    return true;
  };

  std::vector<std::vector<ValueId>> kernels;
  if (in.policy == FusionPolicy::kNone) {
    for (size_t i = 0; i < n; ++i) {
      if (fusable[i]) kernels.push_back({static_cast<ValueId>(i)});
    }
    return kernels;
  }

  // Post-order DP: candidates of v are v alone, or v joined with candidates of its consumers.
  std::vector<std::vector<Pattern>> candidates(n);
  for (size_t i = n; i-- > 0;) {
    if (!fusable[i]) continue;
    const auto v = static_cast<ValueId>(i);
    std::vector<Pattern> found;
    found.push_back({{v}, 0});
    std::vector<ValueId> consumers;
    for (ValueId u : in.users[i]) {
      if (fusable[static_cast<size_t>(u)] && !candidates[static_cast<size_t>(u)].empty())
        consumers.push_back(u);
    }
    // Enumerate one choice per consumer (skip, or one of its candidates), bounded.
    std::vector<size_t> choice(consumers.size(), 0);
    int combos = 0;
    while (combos++ < options.max_consumer_combos) {
      std::vector<ValueId> members = {v};
      bool any = false;
      for (size_t c = 0; c < consumers.size(); ++c) {
        if (choice[c] == 0) continue;
        members = merge_sorted(members, candidates[static_cast<size_t>(consumers[c])][choice[c] - 1].members);
        any = true;
      }
      double score;
      if (any && score_of(members, &score)) {
        bool duplicate = false;
        for (const Pattern& p : found) duplicate = duplicate || p.members == members;
        if (!duplicate) found.push_back({members, score});
      }
      // Next combination (odometer).
      size_t c = 0;
      for (; c < consumers.size(); ++c) {
        if (++choice[c] <= candidates[static_cast<size_t>(consumers[c])].size()) break;
        choice[c] = 0;
      }
      if (c == consumers.size()) break;
    }
    std::stable_sort(found.begin(), found.end(),
                     [](const Pattern& a, const Pattern& b) { return a.score > b.score; });
    if (found.size() > static_cast<size_t>(options.candidates_per_op))
      found.resize(options.candidates_per_op);
    candidates[i] = std::move(found);
  }

  // Beam search in topological order: each state assigns patterns to operations.
  // Singleton patterns, stable for the states to point at.
  std::vector<std::vector<ValueId>> alone_members(n);
  for (size_t i = 0; i < n; ++i) alone_members[i] = {static_cast<ValueId>(i)};
  struct State {
    std::vector<int> kernel_of;
    KernelList kernels;  // points into `candidates` and `alone_members`
    KernelSpans spans;
    double score = 0;
  };
  std::vector<State> beam(1);
  beam[0].kernel_of.assign(n, -1);
  beam[0].spans = KernelSpans(n);
  const size_t width = static_cast<size_t>(std::max(1, options.beam_width));
  for (size_t i = 0; i < n; ++i) {
    if (!fusable[i]) continue;
    std::vector<State> next;
    for (State& s : beam) {
      if (s.kernel_of[i] >= 0) {
        next.push_back(std::move(s));
        continue;
      }
      std::vector<std::pair<const std::vector<ValueId>*, double>> viable;  // members, score
      for (const Pattern& p : candidates[i]) {
        if (viable.size() >= width) break;
        if (overlaps(p.members, s.kernel_of)) continue;
        if (p.members.size() > 1 &&
            creates_cycle(in, p.members, s.kernel_of, s.kernels, s.spans, kPlanSearch))
          continue;
        viable.emplace_back(&p.members, p.score);
      }
      // The operation alone is always possible, even when its best patterns were taken.
      if (viable.empty()) viable.emplace_back(&alone_members[i], 0.0);
      for (size_t c = 0; c < viable.size(); ++c) {
        // The last extension takes the state itself; the others copy it.
        State t = c + 1 < viable.size() ? s : std::move(s);
        const int k = static_cast<int>(t.kernels.size());
        for (ValueId m : *viable[c].first) t.kernel_of[static_cast<size_t>(m)] = k;
        t.kernels.push_back(viable[c].first);
        t.spans.add(*viable[c].first);
        t.score += viable[c].second;
        next.push_back(std::move(t));
      }
    }
    std::stable_sort(next.begin(), next.end(),
                     [](const State& a, const State& b) { return a.score > b.score; });
    if (next.size() > width) next.resize(width);
    beam = std::move(next);
  }
  State best = std::move(beam.front());

  // Merging passes over the composed plan: a producer kernel whose values all go to one
  // consumer kernel joins it (patterns grow only toward consumers, so producers that come
  // late in topological order are picked up here), and kernels that share a domain and an
  // input but are not ordered by a path are packed into one (remote fusion): the shared input
  // is read once and a launch is saved.
  for (const std::vector<ValueId>* k : best.kernels) kernels.push_back(*k);
  if (in.policy != FusionPolicy::kNone) merge_kernels(in, best.kernel_of, kernels);
  const bool split = split_at_grid_barriers(in, kernels);
  const bool moved = move_column_totals_to_their_writer(in, kernels);
  move_column_totals_to_their_reader(in, kernels);
  kernels.erase(std::remove_if(kernels.begin(), kernels.end(), [](const auto& k) { return k.empty(); }),
                kernels.end());
  // The parts of a kernel split at its barriers, or left by a move, may join a neighbour
  // better than the kernel they came from did (a row normalization's last division).
  if (in.policy != FusionPolicy::kNone && (split || moved)) {
    std::vector<int> kernel_of = kernel_of_members(n, kernels);
    merge_kernels(in, kernel_of, kernels);
    kernels.erase(std::remove_if(kernels.begin(), kernels.end(), [](const auto& k) { return k.empty(); }),
                  kernels.end());
    // A merge may have joined walks the model scores faster apart.
    split_at_grid_barriers(in, kernels);
  }
  return kernels;
}

}  // namespace fstitch
