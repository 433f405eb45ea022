// Can a set of operations be one kernel, and with which schedule? The kernel iterates over a
// domain D split into rows (kept axes) and cols (reduced axes); every member is an element
// value, a row value, or an index-pure value computed on demand.
#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_set>

#include "plan/kernel_spec.hpp"
#include "plan/op_class.hpp"

namespace fstitch {
namespace {

bool is_elementwise(OpKind op) {
  OpFamily f = op_family(op);
  return f == OpFamily::kUnary || f == OpFamily::kBinary || f == OpFamily::kSelect || f == OpFamily::kCast;
}

int64_t pow2_ceil(int64_t x) {
  int64_t p = 1;
  while (p < x) p <<= 1;
  return p;
}

// Dims of D with the reduced axes removed.
Dims kept_dims(const Dims& domain, const std::vector<int64_t>& axes) {
  Dims out;
  for (size_t i = 0; i < domain.size(); ++i) {
    if (!std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i))) out.push_back(domain[i]);
  }
  return out;
}

// `dims`, aligned at the right with D, is 1 (or absent) on every reduced axis and equal to D
// elsewhere: broadcasting it to D repeats each row value along the row.
bool is_aligned_row_shape(const Dims& dims, const Dims& domain, const std::vector<int64_t>& axes) {
  if (dims.size() > domain.size()) return false;
  const size_t offset = domain.size() - dims.size();
  for (size_t i = 0; i < domain.size(); ++i) {
    const bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i));
    const int64_t d = i < offset ? 1 : dims[i - offset];
    if (reduced ? d != 1 : d != domain[i]) return false;
  }
  return true;
}

size_t value_bytes(const Graph& g, ValueId id) {
  return static_cast<size_t>(element_count(g.node(id).dims)) * dtype_size(g.node(id).dtype);
}

}  // namespace

const char* fusion_policy_name(FusionPolicy p) {
  switch (p) {
    case FusionPolicy::kStitch: return "stitch";
    case FusionPolicy::kLoop: return "loop";
    case FusionPolicy::kNone: return "none";
  }
  return "?";
}

const char* value_role_name(ValueRole r) {
  switch (r) {
    case ValueRole::kElement: return "element";
    case ValueRole::kRow: return "row";
    case ValueRole::kIndexed: return "indexed";
  }
  return "?";
}

const char* schedule_kind_name(ScheduleKind s) {
  switch (s) {
    case ScheduleKind::kElementwise: return "elementwise";
    case ScheduleKind::kThreadPerRow: return "thread-per-row";
    case ScheduleKind::kSubWarpPerRow: return "subwarp-per-row";
    case ScheduleKind::kWarpPerRow: return "warp-per-row";
    case ScheduleKind::kBlockPerRow: return "block-per-row";
  }
  return "?";
}

const char* stitch_scheme_name(StitchScheme s) {
  switch (s) {
    case StitchScheme::kLocal: return "local";
    case StitchScheme::kWarp: return "warp";
    case StitchScheme::kRegional: return "regional";
    case StitchScheme::kGlobal: return "global";
  }
  return "?";
}

PlanInputs make_plan_inputs(const Graph& graph, FusionPolicy policy, const ArchParams& arch) {
  PlanInputs in;
  in.graph = &graph;
  in.policy = policy;
  in.arch = arch;
  const size_t n = graph.size();
  in.users.assign(n, {});
  in.live.assign(n, false);
  in.graph_output.assign(n, false);
  for (const GraphOutput& out : graph.outputs()) {
    in.graph_output[static_cast<size_t>(out.value)] = true;
    in.live[static_cast<size_t>(out.value)] = true;
  }
  for (size_t i = n; i-- > 0;) {
    if (!in.live[i]) continue;
    for (ValueId op : graph.node(static_cast<ValueId>(i)).operands) {
      in.live[static_cast<size_t>(op)] = true;
      auto& u = in.users[static_cast<size_t>(op)];
      if (u.empty() || u.back() != static_cast<ValueId>(i)) u.push_back(static_cast<ValueId>(i));
    }
  }
  for (auto& u : in.users) std::sort(u.begin(), u.end());
  in.inlined.assign(n, false);
  for (size_t i = 0; i < n; ++i) {
    if (policy == FusionPolicy::kNone) {
      // One kernel per operation: only constants are folded into their users.
      in.inlined[i] = graph.node(static_cast<ValueId>(i)).op == OpKind::kConstant && !in.graph_output[i];
      continue;
    }
    const Node& node = graph.node(static_cast<ValueId>(i));
    if (in.graph_output[i]) continue;  // an output is stored by a kernel of its own
    bool sources_only = true;
    for (ValueId op : node.operands) {
      const bool source = graph.node(op).op == OpKind::kInput || in.inlined[static_cast<size_t>(op)];
      sources_only = sources_only && source;
    }
    switch (op_family(node.op)) {
      case OpFamily::kConstant:
      case OpFamily::kIota: in.inlined[i] = true; break;
      case OpFamily::kBroadcast: in.inlined[i] = sources_only; break;
      case OpFamily::kUnary:
      case OpFamily::kBinary:
      case OpFamily::kSelect: {
        // Arithmetic on constants only: free to recompute anywhere.
        bool constants_only = true;
        for (ValueId op : node.operands) constants_only = constants_only && in.inlined[static_cast<size_t>(op)];
        in.inlined[i] = constants_only;
        break;
      }
      default: break;
    }
  }
  return in;
}

bool is_fusable(const PlanInputs& in, ValueId id) {
  if (!in.live[static_cast<size_t>(id)]) return false;
  if (in.inlined[static_cast<size_t>(id)]) return false;
  OpKind op = in.graph->node(id).op;
  return op != OpKind::kInput && op != OpKind::kConstant && op != OpKind::kOpaque;
}

bool analyze_kernel(const PlanInputs& in, std::vector<ValueId> members, KernelSpec* out, std::string* why_not) {
  const Graph& g = *in.graph;
  auto reject = [&](const std::string& why) {
    if (why_not) *why_not = why;
    return false;
  };
  std::sort(members.begin(), members.end());
  members.erase(std::unique(members.begin(), members.end()), members.end());
  if (members.empty()) return reject("no operations");
  std::unordered_set<ValueId> in_set(members.begin(), members.end());
  for (ValueId v : members) {
    if (!is_fusable(in, v)) return reject("%" + std::to_string(v) + " cannot be a kernel member");
  }

  KernelSpec spec;
  spec.members = members;

  // Stored values: used after the kernel or graph outputs.
  for (ValueId v : members) {
    bool leaves = in.graph_output[static_cast<size_t>(v)];
    for (ValueId u : in.users[static_cast<size_t>(v)]) leaves = leaves || !in_set.count(u);
    if (leaves) spec.stored.push_back(v);
  }

  // The domain: the reductions' operand shape and axes, or the stored values' shape.
  bool has_reduction = false;
  for (ValueId v : members) {
    const Node& n = g.node(v);
    if (op_family(n.op) != OpFamily::kReduce) continue;
    const Dims& operand_dims = g.node(n.operands[0]).dims;
    if (!has_reduction) {
      spec.domain = operand_dims;
      spec.reduced_axes = n.axes;
      has_reduction = true;
    } else if (operand_dims != spec.domain || n.axes != spec.reduced_axes) {
      return reject("reductions over different domains or axes");
    }
  }
  if (!has_reduction) {
    if (spec.stored.empty()) return reject("nothing leaves the kernel");
    spec.domain = g.node(spec.stored[0]).dims;
    for (ValueId v : spec.stored) {
      if (g.node(v).dims != spec.domain) return reject("stored values of different shapes");
    }
  }
  const Dims row_dims = kept_dims(spec.domain, spec.reduced_axes);
  spec.rows = element_count(row_dims);
  spec.cols = element_count(spec.domain) / spec.rows;
  spec.contiguous_rows = true;
  for (size_t i = 0; i < spec.reduced_axes.size(); ++i) {
    if (spec.reduced_axes[spec.reduced_axes.size() - 1 - i] != static_cast<int64_t>(spec.domain.size() - 1 - i)) {
      spec.contiguous_rows = false;
    }
  }

  // Roles, purity, levels; then every internal edge must be one the schedule can carry.
  for (ValueId v : members) {
    const Node& n = g.node(v);
    const bool reduce = op_family(n.op) == OpFamily::kReduce;
    ValueRole role;
    if (reduce) {
      role = ValueRole::kRow;
    } else if (n.dims == spec.domain) {
      role = ValueRole::kElement;
    } else if (has_reduction && (n.dims == row_dims || is_aligned_row_shape(n.dims, spec.domain, spec.reduced_axes))) {
      role = ValueRole::kRow;
    } else {
      role = ValueRole::kIndexed;
    }
    bool pure = !reduce;
    int level = 0;
    for (ValueId op : n.operands) {
      if (!in_set.count(op)) continue;
      pure = pure && spec.pure[op];
      level = std::max(level, spec.level[op]);
    }
    if (reduce) level += 1;
    spec.role[v] = role;
    spec.pure[v] = pure;
    spec.level[v] = level;
    spec.phases = std::max(spec.phases, level);

    if (role == ValueRole::kIndexed && !pure) return reject("%" + std::to_string(v) + " has a shape off the kernel's grid");
    if (role == ValueRole::kIndexed && classify(g, v) == OpClass::kExpensiveElementwise &&
        element_count(n.dims) < element_count(spec.domain)) {
      return reject("expensive %" + std::to_string(v) + " would be recomputed across a broadcast");
    }
    for (ValueId op : n.operands) {
      if (!in_set.count(op) || spec.pure[op]) continue;
      const ValueRole from = spec.role[op];
      bool ok = false;
      if (is_elementwise(n.op)) {
        ok = from == role || (from == ValueRole::kRow && spec.cols == 1);
      } else if (n.op == OpKind::kReshape) {
        ok = from == role && role != ValueRole::kIndexed;
      } else if (n.op == OpKind::kBroadcast) {
        ok = from == ValueRole::kRow && role == ValueRole::kElement &&
             is_aligned_row_shape(g.node(op).dims, spec.domain, spec.reduced_axes);
      } else if (op_family(n.op) == OpFamily::kReduce) {
        ok = from == ValueRole::kElement;
      }
      if (!ok) {
        return reject("%" + std::to_string(op) + " (" + value_role_name(from) + ") cannot feed %" +
                      std::to_string(v) + " (" + op_name(n.op) + ", " + value_role_name(role) + ") in one kernel");
      }
    }
    if (in.policy == FusionPolicy::kLoop && reduce) {
      for (ValueId u : in.users[static_cast<size_t>(v)]) {
        if (in_set.count(u)) return reject("loop fusion ends a kernel at each reduction");
      }
    }
  }
  for (ValueId v : spec.stored) {
    if (spec.role[v] == ValueRole::kIndexed) return reject("%" + std::to_string(v) + " leaves the kernel off its grid");
  }

  // Loaded values, in first-use order.
  std::set<ValueId> loaded_seen, inlined_seen;
  std::vector<ValueId> pending;
  auto reach = [&](ValueId op) {
    if (in_set.count(op)) return;
    if (in.inlined[static_cast<size_t>(op)]) {
      if (inlined_seen.insert(op).second) pending.push_back(op);
    } else if (loaded_seen.insert(op).second) {
      spec.loaded.push_back(op);
    }
  };
  for (ValueId v : members) {
    for (ValueId op : g.node(v).operands) reach(op);
    while (!pending.empty()) {
      ValueId w = pending.back();
      pending.pop_back();
      for (ValueId op : g.node(w).operands) reach(op);
    }
  }
  spec.inlined.assign(inlined_seen.begin(), inlined_seen.end());

  // Schedule.
  const int64_t C = spec.cols, R = spec.rows;
  const int64_t wave_threads = static_cast<int64_t>(in.arch.sm_count) * in.arch.max_threads_per_sm;
  if (!has_reduction) {
    spec.schedule = ScheduleKind::kElementwise;
    spec.threads_per_row = 1;
    spec.block_threads = 256;
    spec.grid_blocks = std::max<int64_t>(1, std::min<int64_t>((R + 255) / 256, wave_threads / 256));
  } else {
    // Threads per row: enough that each thread holds at most ~8 elements of the row (so the
    // row fits in registers), a warp or less for short rows, a block for long ones or when
    // there are too few rows to fill the machine with warps.
    int64_t T;
    const int64_t target = pow2_ceil((C + 7) / 8);
    if (!spec.contiguous_rows || C == 1) {
      spec.schedule = ScheduleKind::kThreadPerRow;
      T = 1;
    } else if (C <= 16) {
      spec.schedule = ScheduleKind::kSubWarpPerRow;
      T = pow2_ceil(C);
    } else if (target > 32 || (C > 256 && R < 4 * in.arch.sm_count)) {
      spec.schedule = ScheduleKind::kBlockPerRow;
      T = std::min<int64_t>(1024, std::max<int64_t>(128, target));
    } else {
      spec.schedule = ScheduleKind::kWarpPerRow;
      T = 32;
    }
    spec.threads_per_row = static_cast<int>(T);
    spec.block_threads = spec.schedule == ScheduleKind::kBlockPerRow ? static_cast<int>(T) : 128;
    const int64_t rows_per_block = spec.block_threads / T;
    spec.grid_blocks = std::max<int64_t>(
        1, std::min<int64_t>((R + rows_per_block - 1) / rows_per_block, wave_threads / spec.block_threads));
  }
  spec.elems_per_thread = static_cast<int>((C + spec.threads_per_row - 1) / spec.threads_per_row);

  // Passes over each row: reductions of level L accumulate in pass L-1; stored element
  // values are written in the last pass. Element values needed by several passes are kept in
  // registers when they fit, else recomputed from global memory.
  bool stores_elements = false;
  for (ValueId v : spec.stored) stores_elements = stores_elements || spec.role[v] == ValueRole::kElement;
  const int final_pass = spec.phases;
  auto need_passes = [&](bool allow_cache, std::vector<ValueId>* cached) {
    std::unordered_map<ValueId, std::set<int>> need;
    std::unordered_map<ValueId, int> first;
    auto contribute = [&](ValueId user, std::set<int>& into) {
      const Node& u = g.node(user);
      if (op_family(u.op) == OpFamily::kReduce) {
        into.insert(spec.level[user] - 1);
      } else if (spec.role[user] == ValueRole::kElement && (is_elementwise(u.op) || u.op == OpKind::kReshape)) {
        auto f = first.find(user);
        if (f != first.end()) {
          into.insert(f->second);
        } else {
          into.insert(need[user].begin(), need[user].end());
        }
      }
    };
    for (size_t i = members.size(); i-- > 0;) {
      ValueId v = members[i];
      if (spec.role[v] != ValueRole::kElement) continue;
      std::set<int>& s = need[v];
      if (std::find(spec.stored.begin(), spec.stored.end(), v) != spec.stored.end()) s.insert(final_pass);
      for (ValueId u : in.users[static_cast<size_t>(v)]) {
        if (in_set.count(u)) contribute(u, s);
      }
      if (allow_cache && s.size() >= 2) {
        first[v] = *s.begin();
        cached->push_back(v);
      }
    }
    uint64_t reads = 0;
    for (ValueId v : spec.loaded) {
      std::set<int> s;
      const bool element_load = g.node(v).dims == spec.domain;
      for (ValueId u : in.users[static_cast<size_t>(v)]) {
        if (!in_set.count(u)) continue;
        if (element_load) {
          contribute(u, s);
        } else {
          s.insert(std::max(0, spec.level[u] - (op_family(g.node(u).op) == OpFamily::kReduce ? 1 : 0)));
        }
      }
      if (element_load && allow_cache && s.size() >= 2) {
        cached->push_back(v);
        s = {*s.begin()};
      }
      reads += value_bytes(g, v) * std::max<size_t>(1, s.size());
    }
    return reads;
  };
  std::vector<ValueId> cached;
  uint64_t reads = need_passes(true, &cached);
  const int slots = static_cast<int>(cached.size()) * spec.elems_per_thread;
  if (!cached.empty() && slots > in.register_cap / 2) {
    cached.clear();
    reads = need_passes(false, &cached);
    spec.cache = RowCache::kRecompute;
  } else {
    spec.cache = RowCache::kRegisters;
  }
  std::sort(cached.begin(), cached.end());
  spec.cached = cached;
  (void)stores_elements;
  spec.bytes_read = reads;
  for (ValueId v : spec.stored) {
    size_t copies = 0;
    for (const GraphOutput& o : g.outputs()) copies += o.value == v ? 1 : 0;
    spec.bytes_written += value_bytes(g, v) * std::max<size_t>(1, copies);
  }
  for (ValueId v : members) {
    spec.compute_ops += op_compute_weight(g.node(v).op) * static_cast<double>(element_count(g.node(v).dims));
  }
  spec.est_seconds = estimate_seconds(in, spec);
  *out = std::move(spec);
  return true;
}

double estimate_seconds(const PlanInputs& in, const KernelSpec& spec) {
  const ArchParams& a = in.arch;
  // Memory bandwidth needs roughly half the machine's threads in flight to saturate.
  const double threads = static_cast<double>(spec.grid_blocks) * spec.block_threads;
  const double active = std::min(threads, static_cast<double>(spec.rows) * spec.threads_per_row);
  const double saturation = std::min(1.0, active / (0.5 * a.sm_count * a.max_threads_per_sm));
  const double efficiency = std::max(saturation, 1e-3);
  const double memory = static_cast<double>(spec.bytes_read + spec.bytes_written) / (a.dram_bandwidth * efficiency);
  const double compute = spec.compute_ops / (a.flops_per_second * efficiency);
  return a.launch_overhead_seconds + std::max(memory, compute);
}

}  // namespace fstitch
