#include "plan/plan.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <locale>
#include <map>
#include <optional>
#include <queue>
#include <sstream>

#include "plan/constants.hpp"
#include "plan/cost_model.hpp"
#include "plan/explore.hpp"
#include "plan/gelu_evaluation.hpp"
#include "plan/in_place.hpp"
#include "plan/op_class.hpp"
#include "plan/packing.hpp"
#include "plan/steps.hpp"
#include "support/checked_math.hpp"
#include "support/error.hpp"
#include "support/number_text.hpp"

namespace fstitch {
namespace {

constexpr size_t kWorkspaceAlignment = 256;

// A kernel that writes a graph input, a constant or an opaque result straight to its outputs
// (or, for a constant an opaque operation reads, to the workspace). `stores` is how many
// buffers it writes: one per output naming the value, at least one.
KernelSpec copy_spec(const PlanInputs& in, ValueId source, uint32_t stores) {
  const Graph& g = *in.graph;
  KernelSpec spec;
  spec.domain = g.node(source).dims;
  spec.rows = element_count(spec.domain);
  spec.stored = {source};
  if (g.node(source).op != OpKind::kConstant) spec.loaded = {source};
  spec.block_threads = 256;
  const size_t size = dtype_size(g.node(source).dtype);
  if (spec.rows >= static_cast<int64_t>(16 / size)) spec.vector_width = static_cast<int>(16 / size);
  size_grid(in, spec);
  spec.bytes_read = spec.loaded.empty() ? 0 : value_bytes(g, source);
  spec.bytes_written = add_traffic(0, value_bytes(g, source), std::max<uint32_t>(1, stores));
  spec.est_seconds = estimate_seconds(in, spec);
  return spec;
}

// A workspace slot for a value: its bytes rounded up to the alignment. Cannot overflow, as a
// value has at most 2^62 bytes.
size_t workspace_slot_bytes(const Graph& g, ValueId id) {
  return (value_bytes(g, id) + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}

// Appends a slot of `size` bytes to the workspace and returns its offset. The workspace is
// one allocation, held to the limit on one value (2^62 bytes).
size_t append_workspace_slot(FusionPlan& plan, size_t size) {
  const size_t offset = plan.workspace_bytes;
  const std::optional<size_t> end = checked_add(offset, size);
  if (!end || *end > static_cast<size_t>(kMaxValueBytes)) {
    fail(StatusCode::kOutOfMemory, "the workspace would need more than 2^62 bytes (" +
                                       std::to_string(offset) + " bytes so far, plus " +
                                       std::to_string(size) + "); the graph is too large");
  }
  plan.workspace_bytes = *end;
  return offset;
}

// A workspace slot of `bytes` rounded up to the workspace alignment; returns its offset.
size_t append_aligned_workspace_slot(FusionPlan& plan, uint64_t bytes) {
  const size_t size =
      (static_cast<size_t>(bytes) + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
  return append_workspace_slot(plan, size);
}

// The scratch of a split column reduction, or of a row split across a cooperative group: its
// partials and its counters get workspace slots of their own (never shared, so no other
// value's bytes can leave a counter nonzero), passed as the kernel's last two parameters; the
// counters are zeroed before each launch.
void add_split_scratch(FusionPlan& plan, PlannedKernel& k) {
  const bool split_columns = k.spec.schedule == ScheduleKind::kColumnTile && k.spec.column.split > 1;
  // A split row in a cluster exchanges its partials in distributed shared memory instead.
  const bool split_rows =
      k.spec.schedule == ScheduleKind::kSplitRow && k.spec.split.residency == GroupResidency::kCooperative;
  const bool column_totals = !k.spec.column_totals.empty();
  if (!split_columns && !split_rows && !column_totals) return;
  auto slot = [&](uint64_t bytes) { return append_aligned_workspace_slot(plan, bytes); };
  const auto partial_bytes = static_cast<size_t>(column_totals ? k.spec.column_total_partial_bytes
                                                 : split_rows  ? k.spec.split.partial_bytes
                                                               : k.spec.column.partial_bytes);
  // Column totals: one counter per group (of the largest grid a launch may take) and one for
  // the groups; with walks after grid barriers, each walk has its own, and one that releases
  // the grid into the next walk.
  const int64_t walk_counters = k.spec.stages == RowStages::kRowsAfterTotals
                                    ? k.spec.column_total_counter_stride() * k.spec.row_walks
                                    : k.spec.column_total_capacity_groups() + 1;
  const auto counter_bytes = static_cast<size_t>(column_totals ? 4 * walk_counters
                                                 : split_rows  ? k.spec.split.counter_bytes
                                                               : k.spec.column.counter_bytes);
  KernelParam partials{ParamKind::kWorkspace, slot(partial_bytes), -1, true};
  partials.scratch = ParamScratch::kSplitPartials;
  partials.scratch_bytes = partial_bytes;
  KernelParam counters{ParamKind::kWorkspace, slot(counter_bytes), -1, true};
  counters.scratch = ParamScratch::kSplitCounters;
  counters.scratch_bytes = counter_bytes;
  k.zeroed_workspace = {counters.index, counter_bytes};
  k.params.push_back(partials);
  k.params.push_back(counters);
}

// The blocks of a split row's group wait for each other, so they must be resident together:
// a cluster, or a cooperative grid.
LaunchKind launch_kind_of(const KernelSpec& s) {
  // So do the groups of a column tile's passes.
  if (s.schedule == ScheduleKind::kColumnTile && s.column.releases_groups()) return LaunchKind::kCooperative;
  // And every block of a kernel whose rows wait for the column totals at a grid barrier.
  if (s.stages == RowStages::kRowsAfterTotals) return LaunchKind::kCooperative;
  if (s.schedule != ScheduleKind::kSplitRow) return LaunchKind::kRegular;
  return s.split.residency == GroupResidency::kCluster ? LaunchKind::kCluster : LaunchKind::kCooperative;
}

// A packed launch takes its parts' kind (packing.cpp packs split rows only with split rows of
// their kind): a launch of clusters, or a cooperative one whose groups meet across it.
LaunchKind packed_launch_kind(const PlannedKernel& k) {
  for (const KernelPart& part : k.parts) {
    if (part.spec.schedule == ScheduleKind::kSplitRow) return launch_kind_of(part.spec);
  }
  return LaunchKind::kRegular;
}

// The scratch of a packed launch's split rows across the grid: each part's partials in a slot
// of their own, and one slot of counters that all of them share, each part's counters after
// the previous part's (RowSplit::counter_offset): the range zeroed before the launch is that
// one parameter. Each part takes its partials and the counters as its last parameters.
void add_part_split_scratch(FusionPlan& plan, PlannedKernel& k) {
  std::vector<size_t> split_parts;
  for (size_t j = 0; j < k.parts.size(); ++j) {
    const KernelSpec& s = k.parts[j].spec;
    if (s.schedule == ScheduleKind::kSplitRow && s.split.residency == GroupResidency::kCooperative)
      split_parts.push_back(j);
  }
  if (split_parts.empty()) return;
  auto slot = [&](uint64_t bytes) { return append_aligned_workspace_slot(plan, bytes); };
  std::vector<size_t> partials;
  uint64_t counter_bytes = 0;
  for (size_t j : split_parts) {
    RowSplit& split = k.parts[j].spec.split;
    partials.push_back(k.params.size());
    KernelParam p{ParamKind::kWorkspace, slot(split.partial_bytes), -1, true};
    p.scratch = ParamScratch::kSplitPartials;
    p.scratch_bytes = split.partial_bytes;
    k.params.push_back(p);
    split.counter_offset = counter_bytes / 4;
    counter_bytes += split.counter_bytes;
  }
  KernelParam counters{ParamKind::kWorkspace, slot(counter_bytes), -1, true};
  counters.scratch = ParamScratch::kSplitCounters;
  counters.scratch_bytes = counter_bytes;
  k.zeroed_workspace = {counters.index, static_cast<size_t>(counter_bytes)};
  const size_t counters_param = k.params.size();
  k.params.push_back(counters);
  for (size_t i = 0; i < split_parts.size(); ++i) {
    KernelPart& part = k.parts[split_parts[i]];
    part.params.push_back(partials[i]);
    part.params.push_back(counters_param);
  }
}

// A topological order of nodes 0..n-1 under `successors`, the ready node with the smallest
// key first (deterministic); shorter than n when the nodes form a cycle.
std::vector<int> topological_order(const std::vector<std::vector<int>>& successors, std::vector<int> pending,
                                   const std::vector<ValueId>& key) {
  auto later = [&](int a, int b) { return key[static_cast<size_t>(a)] > key[static_cast<size_t>(b)]; };
  std::priority_queue<int, std::vector<int>, decltype(later)> ready(later);
  for (size_t k = 0; k < pending.size(); ++k) {
    if (pending[k] == 0) ready.push(static_cast<int>(k));
  }
  std::vector<int> order;
  while (!ready.empty()) {
    int k = ready.top();
    ready.pop();
    order.push_back(k);
    for (int s : successors[static_cast<size_t>(k)]) {
      if (--pending[static_cast<size_t>(s)] == 0) ready.push(s);
    }
  }
  return order;
}

// For each opaque operation's result, the kernels that produce what it reads (the root's
// producer for a free view), directly or through other opaque operations (operands are
// earlier values, so one pass in id order).
std::vector<std::vector<int>> kernels_feeding_opaque_ops(const Graph& graph,
                                                         const std::vector<ValueId>& opaque_ops,
                                                         const std::vector<int>& producer,
                                                         const std::vector<ValueId>& storage) {
  std::vector<std::vector<int>> feeding(graph.size());
  for (ValueId op : opaque_ops) {
    std::vector<int>& list = feeding[static_cast<size_t>(op)];
    for (ValueId read : graph.node(op).operands) {
      const ValueId operand = storage[static_cast<size_t>(read)];
      const int p = producer[static_cast<size_t>(operand)];
      if (p >= 0) list.push_back(p);
      for (int q : feeding[static_cast<size_t>(operand)]) list.push_back(q);
    }
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  return feeding;
}

// Which buffers hold the plan's values: a free view lives in its root's buffer, and a root
// that is no output itself but has outputs that view it lives in the first of them.
struct Storage {
  std::vector<ValueId> root;                            // per value: the value whose buffer holds it
  std::map<ValueId, std::vector<size_t>> view_outputs;  // root -> outputs that are free views of it

  Storage(const Graph& graph, const PlanInputs& in) : root(graph.size()) {
    for (size_t i = 0; i < graph.size(); ++i)
      root[i] = in.view_root[i] >= 0 ? in.view_root[i] : static_cast<ValueId>(i);
    for (size_t j = 0; j < graph.outputs().size(); ++j) {
      const ValueId v = graph.outputs()[j].value;
      if (in.view_root[static_cast<size_t>(v)] >= 0)
        view_outputs[in.view_root[static_cast<size_t>(v)]].push_back(j);
    }
  }
  ValueId of(ValueId v) const { return root[static_cast<size_t>(v)]; }
  // The output that holds root r when it is no output itself: the first output viewing it.
  std::optional<size_t> view_home(ValueId r) const {
    auto it = view_outputs.find(r);
    if (it == view_outputs.end()) return std::nullopt;
    return it->second.front();
  }
};

// The global bytes no plan can avoid: what the fused regions (everything but the opaque
// operations and the free views) must read and write once each. They read every graph input
// and every opaque result they use, and write every graph output and every value an opaque
// operation reads (unless it is in memory already: a graph input, an opaque result, or a
// value written once already; a view reads its root's buffer). An opaque operation writes
// the first output holding its result itself; further outputs holding it are copies.
uint64_t lower_bound_bytes(const Graph& graph, const PlanInputs& in, const Storage& storage) {
  auto is_opaque = [&](ValueId v) { return graph.node(v).op == OpKind::kOpaque; };
  auto is_free_view = [&](ValueId v) { return in.view_root[static_cast<size_t>(v)] >= 0; };
  // The output an opaque result is written to by the caller's operation, if any.
  auto opaque_home = [&](ValueId r) -> std::optional<size_t> {
    for (size_t j = 0; j < graph.outputs().size(); ++j) {
      if (graph.outputs()[j].value == r) return j;
    }
    return storage.view_home(r);
  };
  // Whether a kernel reads r: a user that is neither opaque nor a free view (whose users
  // count in turn), or an output that copies r.
  auto read_by_regions = [&](ValueId r) {
    std::vector<ValueId> pending{r};
    while (!pending.empty()) {
      const ValueId v = pending.back();
      pending.pop_back();
      for (ValueId u : in.users[static_cast<size_t>(v)]) {
        if (is_free_view(u)) {
          pending.push_back(u);
        } else if (!is_opaque(u)) {
          return true;
        }
      }
    }
    return false;
  };
  std::vector<bool> copied(graph.size(), false);  // an output holding r needs a kernel to copy r
  for (size_t j = 0; j < graph.outputs().size(); ++j) {
    const ValueId r = storage.of(graph.outputs()[j].value);
    if (in_memory_before_run(graph, r) || (is_opaque(r) && opaque_home(r) != j))
      copied[static_cast<size_t>(r)] = true;
  }
  uint64_t bytes = 0;
  std::vector<ValueId> sources = graph.inputs();
  for (ValueId c : plan_constants(graph, in.live)) sources.push_back(c);  // read like inputs
  for (ValueId v : sources) {
    if (in.live[static_cast<size_t>(v)] && (copied[static_cast<size_t>(v)] || read_by_regions(v)))
      bytes = add_traffic(bytes, value_bytes(graph, v));
  }
  std::vector<bool> written(graph.size(), false);
  for (size_t j = 0; j < graph.outputs().size(); ++j) {
    const ValueId v = graph.outputs()[j].value;
    const ValueId r = storage.of(v);
    if (is_opaque(r) && opaque_home(r) == j) continue;  // the caller's operation writes it
    written[static_cast<size_t>(r)] = true;
    bytes = add_traffic(bytes, value_bytes(graph, v));
  }
  for (size_t i = 0; i < graph.size(); ++i) {
    const auto v = static_cast<ValueId>(i);
    if (!in.live[i] || !is_opaque(v)) continue;
    if (copied[i] || read_by_regions(v)) bytes = add_traffic(bytes, value_bytes(graph, v));
    for (ValueId operand : graph.node(v).operands) {
      const ValueId r = storage.of(operand);
      if (in_memory_before_run(graph, r) || is_opaque(r) || written[static_cast<size_t>(r)]) continue;
      written[static_cast<size_t>(r)] = true;
      bytes = add_traffic(bytes, value_bytes(graph, r));
    }
  }
  return bytes;
}

// "input 0", "output 1", "workspace+256", "constant 2".
std::string location_text(const ValueLocation& l) {
  switch (l.kind) {
    case ParamKind::kInput:
      return "input " + std::to_string(l.index);
    case ParamKind::kOutput:
      return "output " + std::to_string(l.index);
    case ParamKind::kConstant:
      return "constant " + std::to_string(l.index);
    case ParamKind::kWorkspace:
      break;
  }
  return "workspace+" + std::to_string(l.index);
}

std::string seconds_text(double s) {
  return fixed_text(s * 1e6, 2) + " us";
}

// The plan's steps as a graph: kernels 0..K-1 (launch positions) and the opaque operations
// after them, an edge wherever a step reads what another one produces.
class StepGraph {
 public:
  StepGraph(const Graph& graph, const FusionPlan& plan, const std::vector<int>& producer,
            const Storage& storage)
      : kernel_count_(plan.kernels.size()), opaque_ops_(plan.opaque_ops) {
    successors_.resize(kernel_count_ + opaque_ops_.size());
    std::map<ValueId, int> opaque_step;
    for (size_t o = 0; o < opaque_ops_.size(); ++o) opaque_step[opaque_ops_[o]] = static_cast<int>(kernel_count_ + o);
    auto node_of = [&](ValueId loaded) -> int {
      const ValueId v = storage.of(loaded);
      if (producer[static_cast<size_t>(v)] >= 0) return producer[static_cast<size_t>(v)];
      const auto op = opaque_step.find(v);
      return op == opaque_step.end() ? -1 : op->second;
    };
    auto add_edge = [&](int from, int to) {
      if (from < 0 || from == to) return;
      std::vector<int>& next = successors_[static_cast<size_t>(from)];
      if (std::find(next.begin(), next.end(), to) == next.end()) next.push_back(to);
    };
    for (size_t k = 0; k < kernel_count_; ++k) {
      for (ValueId v : plan.kernels[k].spec.loaded) add_edge(node_of(v), static_cast<int>(k));
    }
    for (size_t o = 0; o < opaque_ops_.size(); ++o) {
      for (ValueId v : graph.node(opaque_ops_[o]).operands)
        add_edge(node_of(v), static_cast<int>(kernel_count_ + o));
    }
  }

  // The first step of a path from kernel `from` to kernel `to` through some other step, or
  // nothing: fusing the two kernels would then put that step both before and after them.
  // One search for all first steps: what an earlier one saw without reaching `to` cannot
  // reach it from a later one either.
  std::optional<int> detour(int from, int to) const {
    std::vector<bool> seen(successors_.size(), false);
    for (int first : successors_[static_cast<size_t>(from)]) {
      if (first != to && reaches(first, to, seen)) return first;
    }
    return std::nullopt;
  }

  std::string step_text(int step) const {
    if (static_cast<size_t>(step) < kernel_count_) return "kernel " + std::to_string(step);
    return "opaque operation %" + std::to_string(opaque_ops_[static_cast<size_t>(step) - kernel_count_]);
  }

 private:
  // Kernels launch in topological order, so a kernel after `to` never leads back to it.
  bool reaches(int from, int to, std::vector<bool>& seen) const {
    if (seen[static_cast<size_t>(from)]) return false;
    std::vector<int> stack = {from};
    seen[static_cast<size_t>(from)] = true;
    while (!stack.empty()) {
      const int s = stack.back();
      stack.pop_back();
      if (s == to) return true;
      for (int next : successors_[static_cast<size_t>(s)]) {
        const bool past = static_cast<size_t>(next) < kernel_count_ && next > to;
        if (!past && !seen[static_cast<size_t>(next)]) {
          seen[static_cast<size_t>(next)] = true;
          stack.push_back(next);
        }
      }
    }
    return false;
  }

  size_t kernel_count_;
  std::vector<ValueId> opaque_ops_;
  std::vector<std::vector<int>> successors_;
};

}  // namespace

const char* boundary_cause_name(BoundaryCause cause) {
  switch (cause) {
    case BoundaryCause::kPolicy:
      return "policy";
    case BoundaryCause::kCannotFuse:
      return "cannot fuse";
    case BoundaryCause::kResource:
      return "resources";
    case BoundaryCause::kCycle:
      return "cycle";
    case BoundaryCause::kCost:
      return "cost";
    case BoundaryCause::kSearch:
      return "search";
  }
  return "?";
}

FusionPlan plan_fusion(const Graph& graph, const FusionOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  std::optional<ArchParams> arch = arch_params(options.target_sm);
  if (arch && options.device && options.device->sm == options.target_sm) arch = options.device;
  if (!arch) {
    fail(StatusCode::kUnsupported, "target architecture sm_" + std::to_string(options.target_sm) +
                                       " is not supported (supported: sm_80, sm_90)");
  }
  FusionPlan plan;
  plan.options = options;
  plan.arch = *arch;
  PlanInputs in = make_plan_inputs(graph, options.policy, *arch);
  in.register_cap = options.register_cap;
  in.shared_budget = options.shared_budget;
  const Storage storage(graph, in);
  plan.constants = plan_constants(graph, in.live);

  std::vector<std::vector<ValueId>> groups = explore_fusion(in, ExploreOptions{});

  // Kernel specs, plus copy kernels for outputs that are graph inputs or constants.
  std::vector<KernelSpec> specs;
  for (auto& members : groups) {
    KernelSpec spec;
    Rejection why;
    if (!analyze_kernel(in, members, &spec, &why))
      fail(StatusCode::kInternal, "planned kernel is invalid: " + why.reason);
    choose_grid_ceiling(in, spec);
    specs.push_back(std::move(spec));
  }
  std::vector<bool> copied(graph.size(), false);
  for (const GraphOutput& out : graph.outputs()) {
    OpKind op = graph.node(out.value).op;
    const bool in_memory = in_memory_before_run(graph, out.value);
    if ((in_memory || op == OpKind::kConstant) && !copied[static_cast<size_t>(out.value)]) {
      copied[static_cast<size_t>(out.value)] = true;
      specs.push_back(copy_spec(in, out.value, in.output_count[static_cast<size_t>(out.value)]));
    }
  }
  for (size_t i = 0; i < graph.size(); ++i) {
    if (in.live[i] && graph.node(static_cast<ValueId>(i)).op == OpKind::kOpaque) {
      plan.opaque_ops.push_back(static_cast<ValueId>(i));
    }
  }
  // A constant an opaque operation reads is written to the workspace for the caller: no
  // kernel computes constants, they are folded into their users.
  for (ValueId op : plan.opaque_ops) {
    for (ValueId operand : graph.node(op).operands) {
      if (graph.node(operand).op != OpKind::kConstant || copied[static_cast<size_t>(operand)]) continue;
      copied[static_cast<size_t>(operand)] = true;
      specs.push_back(copy_spec(in, operand, in.output_count[static_cast<size_t>(operand)]));
    }
  }
  // An opaque operation writes one buffer: the first output naming its result, else the first
  // output viewing it, else a workspace slot. Further outputs holding it are copies.
  for (ValueId op : plan.opaque_ops) {
    auto views = storage.view_outputs.find(op);
    const size_t outputs = in.output_count[static_cast<size_t>(op)] +
                           (views == storage.view_outputs.end() ? 0 : views->second.size());
    if (outputs > 1) specs.push_back(copy_spec(in, op, static_cast<uint32_t>(outputs - 1)));
  }

  // Launch order: topological over kernels (a kernel after the producers of what it loads),
  // ties broken by the first member so the order is deterministic. An opaque operation runs
  // between kernels, so a kernel that loads its result comes after every kernel that produces
  // what the operation reads, through chains of opaque operations too.
  std::vector<int> producer(graph.size(), -1);
  for (size_t k = 0; k < specs.size(); ++k) {
    for (ValueId v : specs[k].members) producer[static_cast<size_t>(v)] = static_cast<int>(k);
  }
  // A constant an opaque operation reads is in the workspace once its copy kernel has run:
  // a kernel loading it from there comes after that copy.
  std::vector<int> constant_copy(graph.size(), -1);
  for (size_t k = 0; k < specs.size(); ++k) {
    if (!specs[k].members.empty()) continue;
    for (ValueId v : specs[k].stored) {
      if (graph.node(v).op == OpKind::kConstant) constant_copy[static_cast<size_t>(v)] = static_cast<int>(k);
    }
  }
  // An opaque operation waits for the kernels that put its operands in memory: the producers
  // of computed operands and the copy kernels of constant ones.
  std::vector<int> in_memory_by(producer);
  for (size_t i = 0; i < graph.size(); ++i) {
    if (constant_copy[i] >= 0) in_memory_by[i] = constant_copy[i];
  }
  const std::vector<std::vector<int>> opaque_producers =
      kernels_feeding_opaque_ops(graph, plan.opaque_ops, in_memory_by, storage.root);
  std::vector<std::vector<int>> successors(specs.size());
  std::vector<int> pending(specs.size(), 0);
  for (size_t k = 0; k < specs.size(); ++k) {
    std::vector<int> preds;
    auto add_pred = [&](int p) {
      if (p >= 0 && p != static_cast<int>(k) && std::find(preds.begin(), preds.end(), p) == preds.end()) {
        preds.push_back(p);
      }
    };
    for (ValueId loaded : specs[k].loaded) {
      const ValueId v = storage.of(loaded);  // a free view waits for its root
      add_pred(producer[static_cast<size_t>(v)]);
      add_pred(constant_copy[static_cast<size_t>(v)]);
      for (int p : opaque_producers[static_cast<size_t>(v)]) add_pred(p);
    }
    for (int p : preds) successors[static_cast<size_t>(p)].push_back(static_cast<int>(k));
    pending[k] = static_cast<int>(preds.size());
  }
  std::vector<ValueId> first_member(specs.size());
  for (size_t k = 0; k < specs.size(); ++k)
    first_member[k] = specs[k].members.empty() ? -1 : specs[k].members.front();
  std::vector<int> order = topological_order(successors, pending, first_member);
  if (order.size() != specs.size()) {
    std::string detail;
    for (size_t k = 0; k < specs.size(); ++k) {
      if (pending[k] == 0) continue;
      detail += " kernel{";
      for (ValueId v : specs[k].members) detail += "%" + std::to_string(v) + " ";
      detail += "} waits on";
      for (ValueId v : specs[k].loaded) {
        if (producer[static_cast<size_t>(v)] >= 0 &&
            pending[static_cast<size_t>(producer[static_cast<size_t>(v)])] > 0) {
          detail += " %" + std::to_string(v);
        }
      }
      detail += ";";
    }
    fail(StatusCode::kInternal, "the kernels of the plan form a cycle:" + detail);
  }
  // Where each value lives in global memory: graph inputs, graph outputs, or the workspace.
  std::map<ValueId, size_t> input_index;
  for (size_t i = 0; i < graph.inputs().size(); ++i) input_index[graph.inputs()[i]] = i;
  std::map<ValueId, std::vector<size_t>> output_indices;
  for (size_t i = 0; i < graph.outputs().size(); ++i) output_indices[graph.outputs()[i].value].push_back(i);

  // Launches: independent kernels of one level share a launch where the cost model says so
  // (plan/packing.hpp). Each kernel's parameters are bounded by its loads and, per stored
  // value, the outputs holding it and a workspace slot.
  std::vector<bool> read_later(graph.size(), false);  // by a kernel or an opaque operation
  for (const KernelSpec& spec : specs) {
    for (ValueId v : spec.loaded) read_later[static_cast<size_t>(storage.of(v))] = true;
  }
  for (ValueId op : plan.opaque_ops) {
    for (ValueId v : graph.node(op).operands) read_later[static_cast<size_t>(storage.of(v))] = true;
  }
  std::vector<size_t> param_bound(specs.size());
  for (size_t k = 0; k < specs.size(); ++k) {
    size_t n = specs[k].loaded.size();
    for (ValueId v : specs[k].stored) {
      auto outs = output_indices.find(v);
      auto views = storage.view_outputs.find(v);
      n += (read_later[static_cast<size_t>(v)] ? 1 : 0) +
           (outs == output_indices.end() ? 0 : outs->second.size()) +
           (views == storage.view_outputs.end() ? 0 : views->second.size());
    }
    param_bound[k] = n;
  }
  // Each value's kernel's own estimate, before packing schedules it again as a part: what the
  // search weighed, and so what a boundary's cost reason compares.
  std::vector<double> own_seconds(graph.size(), -1.0);
  for (const KernelSpec& s : specs) {
    for (ValueId v : s.members) own_seconds[static_cast<size_t>(v)] = s.est_seconds;
  }
  const Packing packing = pack_independent_kernels(in, specs, successors, order, param_bound);
  const size_t launch_count = packing.launches.size();
  std::vector<int> launch_of(specs.size(), -1);
  for (size_t l = 0; l < launch_count; ++l) {
    for (int k : packing.launches[l]) launch_of[static_cast<size_t>(k)] = static_cast<int>(l);
  }
  std::vector<KernelSpec> launch_specs(launch_count);
  std::vector<std::vector<KernelSpec>> launch_parts(launch_count);
  std::vector<ValueId> launch_key(launch_count, std::numeric_limits<ValueId>::max());
  for (size_t l = 0; l < launch_count; ++l) {
    const std::vector<int>& kernels = packing.launches[l];
    for (int k : kernels) launch_key[l] = std::min(launch_key[l], first_member[static_cast<size_t>(k)]);
    if (kernels.size() == 1) {
      launch_specs[l] = std::move(specs[static_cast<size_t>(kernels.front())]);
      continue;
    }
    PackedLaunch packed = make_packed_launch(in, packing.parts[l]);
    launch_specs[l] = std::move(packed.summary);
    launch_parts[l] = std::move(packed.parts);
  }
  // Launch order: kernels of one level are independent, so contracting each pack keeps the
  // launches acyclic; without packs this is the kernels' order.
  std::vector<std::vector<int>> launch_successors(launch_count);
  std::vector<int> launch_pending(launch_count, 0);
  for (size_t k = 0; k < successors.size(); ++k) {
    const int from = launch_of[k];
    for (int s : successors[k]) {
      const int to = launch_of[static_cast<size_t>(s)];
      std::vector<int>& out = launch_successors[static_cast<size_t>(from)];
      if (to == from || std::find(out.begin(), out.end(), to) != out.end()) continue;
      out.push_back(to);
      ++launch_pending[static_cast<size_t>(to)];
    }
  }
  specs = std::move(launch_specs);
  order = topological_order(launch_successors, launch_pending, launch_key);
  if (order.size() != specs.size()) fail(StatusCode::kInternal, "packed launches form a cycle");
  std::vector<int> position(specs.size());
  for (size_t i = 0; i < order.size(); ++i) position[static_cast<size_t>(order[i])] = static_cast<int>(i);
  for (auto& p : producer) {
    if (p >= 0) p = position[static_cast<size_t>(launch_of[static_cast<size_t>(p)])];
  }
  for (const auto& [k, why] : packing.notes) {
    plan.packing_notes.push_back(
        "kernel " + std::to_string(position[static_cast<size_t>(launch_of[static_cast<size_t>(k)])]) +
        " is launched alone: " + why);
  }
  for (const auto& [k, why] : packing.opened) {
    plan.packing_notes.push_back(
        "kernel " + std::to_string(position[static_cast<size_t>(launch_of[static_cast<size_t>(k)])]) +
        " is a packed launch of its own: its first part joined no launch open beside it: " + why);
  }

  // Workspace: values crossing kernels that are not graph outputs, first-fit with reuse
  // once the last consumer has run.
  // A free view's reads keep its root alive.
  std::map<ValueId, int> last_use;
  for (size_t i = 0; i < order.size(); ++i) {
    for (ValueId v : specs[static_cast<size_t>(order[i])].loaded)
      last_use[storage.of(v)] = static_cast<int>(i);
  }
  // Opaque operations run between kernels, by the caller: what they read stays alive to the
  // end, and their results get workspace slots of their own.
  constexpr int kForever = std::numeric_limits<int>::max();
  for (ValueId op : plan.opaque_ops) {
    for (ValueId v : graph.node(op).operands) last_use[storage.of(v)] = kForever;
  }
  struct Block {
    size_t offset, size;
    int free_after;  // kernel position after which the block may be reused
  };
  std::vector<Block> blocks;
  std::map<ValueId, size_t> workspace_offset;
  for (ValueId op : plan.opaque_ops) {
    if (output_indices.count(op) || storage.view_outputs.count(op)) continue;
    const size_t size = workspace_slot_bytes(graph, op);
    const size_t offset = append_workspace_slot(plan, size);
    workspace_offset[op] = offset;
    plan.opaque_result_offsets[op] = offset;
    blocks.push_back({offset, size, kForever});
  }
  for (size_t i = 0; i < order.size(); ++i) {
    for (ValueId v : specs[static_cast<size_t>(order[i])].stored) {
      if (output_indices.count(v) || storage.view_outputs.count(v) || !last_use.count(v) ||
          input_index.count(v))
        continue;
      const size_t size = workspace_slot_bytes(graph, v);
      const int until = last_use[v];
      bool placed = false;
      for (Block& b : blocks) {
        if (b.free_after < static_cast<int>(i) && b.size >= size) {
          workspace_offset[v] = b.offset;
          b.free_after = until;
          placed = true;
          break;
        }
      }
      if (!placed) {
        const size_t offset = append_workspace_slot(plan, size);
        workspace_offset[v] = offset;
        blocks.push_back({offset, size, until});
      }
    }
  }

  // The buffer holding a value that is in memory: a graph input, the first output naming it,
  // the first output viewing it, or its workspace slot.
  auto home = [&](ValueId r) -> ValueLocation {
    if (input_index.count(r)) return {ParamKind::kInput, input_index[r]};
    if (auto c = constant_index(plan.constants, r)) return {ParamKind::kConstant, *c};
    if (output_indices.count(r)) return {ParamKind::kOutput, output_indices[r].front()};
    if (auto j = storage.view_home(r)) return {ParamKind::kOutput, *j};
    const auto slot = workspace_offset.find(r);
    // Stored values nobody reads later have no slot; only their writes ask, and skip it.
    return {ParamKind::kWorkspace, slot == workspace_offset.end() ? size_t{0} : slot->second};
  };
  auto require_home = [&](ValueId r) {
    if (!input_index.count(r) && !constant_index(plan.constants, r) && !output_indices.count(r) &&
        !storage.view_home(r) && !workspace_offset.count(r))
      fail(StatusCode::kInternal, "no buffer holds %" + std::to_string(r) + ", which a later step reads");
    return home(r);
  };
  auto params_of = [&](const KernelSpec& spec) {
    std::vector<KernelParam> params;
    for (ValueId v : spec.loaded) {
      const ValueLocation at = require_home(storage.of(v));
      params.push_back({at.kind, at.index, v, false});
    }
    // A stored value goes to every output holding it (itself, or a free view of it), else to
    // its workspace slot when a later step reads it. An opaque result's copy kernel writes all
    // but the buffer the caller's operation writes.
    for (ValueId v : spec.stored) {
      const bool opaque = graph.node(v).op == OpKind::kOpaque;
      const ValueLocation own = home(v);
      auto add_write = [&](size_t output, ValueId value) {
        if (opaque && own.kind == ParamKind::kOutput && own.index == output) return;
        params.push_back(
            {ParamKind::kOutput, output, value, true, ParamAliasing::kRestrict, value == v ? -1 : v});
      };
      if (output_indices.count(v)) {
        for (size_t o : output_indices[v]) add_write(o, v);
      }
      auto views = storage.view_outputs.find(v);
      if (views != storage.view_outputs.end()) {
        for (size_t o : views->second) add_write(o, graph.outputs()[o].value);
      }
      if (own.kind == ParamKind::kWorkspace && workspace_offset.count(v))
        params.push_back({ParamKind::kWorkspace, own.index, v, true});
    }
    return params;
  };
  for (size_t i = 0; i < order.size(); ++i) {
    PlannedKernel k;
    k.name = "fst_k" + std::to_string(i);
    k.spec = std::move(specs[static_cast<size_t>(order[i])]);
    std::vector<KernelSpec>& parts = launch_parts[static_cast<size_t>(order[i])];
    if (parts.empty()) {
      k.params = params_of(k.spec);
    } else {
      // A packed launch passes each buffer once: parts reading the same value share it.
      auto same = [](const KernelParam& a, const KernelParam& b) {
        return a.kind == b.kind && a.index == b.index && a.value == b.value && a.written == b.written &&
               a.source == b.source;
      };
      int64_t first_block = 0;
      for (KernelSpec& part_spec : parts) {
        KernelPart part;
        part.first_block = first_block;
        first_block += part_spec.grid_blocks;
        for (const KernelParam& p : params_of(part_spec)) {
          auto it = std::find_if(k.params.begin(), k.params.end(),
                                 [&](const KernelParam& q) { return same(p, q); });
          part.params.push_back(static_cast<size_t>(it - k.params.begin()));
          if (it == k.params.end()) k.params.push_back(p);
        }
        part.spec = std::move(part_spec);
        k.parts.push_back(std::move(part));
      }
    }
    if (k.packed()) {
      k.launch = packed_launch_kind(k);
      add_part_split_scratch(plan, k);
    } else {
      k.launch = launch_kind_of(k.spec);
      add_split_scratch(plan, k);
    }
    plan.planned_bytes =
        add_traffic(add_traffic(plan.planned_bytes, k.spec.bytes_read), k.spec.bytes_written);
    plan.est_seconds += k.spec.est_seconds;
    plan.kernels.push_back(std::move(k));
  }

  // Why each value crosses kernels through global memory: one cause, with its numbers.
  // Between the kernels themselves: a packed launch's parts.
  auto kernels_of = [&](const PlannedKernel& k) {
    std::vector<const KernelSpec*> list;
    if (!k.packed()) list.push_back(&k.spec);
    for (const KernelPart& part : k.parts) list.push_back(&part.spec);
    return list;
  };
  std::vector<const KernelSpec*> producer_spec(graph.size(), nullptr);
  for (const KernelSpec* spec : fused_kernels(plan)) {
    for (ValueId v : spec->members) producer_spec[static_cast<size_t>(v)] = spec;
  }
  const StepGraph steps(graph, plan, producer, storage);
  for (size_t c = 0; c < plan.kernels.size(); ++c) {
    for (const KernelSpec* consumer : kernels_of(plan.kernels[c])) {
      for (ValueId v : consumer->loaded) {
        int p = producer[static_cast<size_t>(v)];
        if (p < 0) continue;
        Boundary b{v, p, static_cast<int>(c), BoundaryCause::kCannotFuse, ""};
        const KernelSpec& first = *producer_spec[static_cast<size_t>(v)];
        const KernelSpec& second = *consumer;
        std::vector<ValueId> joined = first.members;
        joined.insert(joined.end(), second.members.begin(), second.members.end());
        std::sort(joined.begin(), joined.end());
        KernelSpec together;
        Rejection why;
        if (options.policy == FusionPolicy::kNone) {
          b.cause = BoundaryCause::kPolicy;
          b.reason = "policy none: one kernel per operation";
        } else if (const std::optional<int> through = steps.detour(p, static_cast<int>(c))) {
          b.cause = BoundaryCause::kCycle;
          b.reason = "cycle: kernel " + std::to_string(c) + " also depends on kernel " + std::to_string(p) +
                     " through " + steps.step_text(*through) +
                     ", so one kernel would both feed and wait for it";
        } else if (!analyze_kernel(in, joined, &together, &why)) {
          // A resource rejection's reason begins with "resources: ".
          const bool resource = why.kind == RejectionKind::kResource;
          b.cause = resource ? BoundaryCause::kResource : BoundaryCause::kCannotFuse;
          b.reason = resource ? why.reason : "cannot fuse: " + why.reason;
        } else {
          auto own = [&](const KernelSpec& s) {
            const double seconds =
                s.members.empty() ? -1.0 : own_seconds[static_cast<size_t>(s.members.front())];
            return seconds >= 0 ? seconds : s.est_seconds;
          };
          const double first_seconds = own(first), second_seconds = own(second);
          const double apart = first_seconds + second_seconds;
          const std::string numbers = seconds_text(together.est_seconds) + " fused against " +
                                      seconds_text(first_seconds) + " + " + seconds_text(second_seconds) +
                                      " apart";
          if (together.est_seconds >= apart) {
            b.cause = BoundaryCause::kCost;
            b.reason = "cost model: separate kernels estimated faster (" + numbers + ")";
          } else {
            b.cause = BoundaryCause::kSearch;
            b.reason = "search: fusing is estimated faster (" + numbers +
                       "), but the planner's search did not form the joined kernel";
          }
        }
        plan.boundaries.push_back(std::move(b));
      }
    }
  }

  // Where each opaque operation reads and writes, and the order of all steps.
  auto locate = [&](ValueId v) { return require_home(storage.of(v)); };
  for (size_t i = 0; i < graph.size(); ++i) {
    if (in.live[i] && in.view_root[i] >= 0) plan.view_roots[static_cast<ValueId>(i)] = in.view_root[i];
  }
  for (ValueId op : plan.opaque_ops) {
    OpaqueStep step{op, {}, locate(op)};
    for (ValueId operand : graph.node(op).operands) step.operands.push_back(locate(operand));
    plan.opaque_steps.push_back(std::move(step));
  }
  plan.steps = order_steps(graph, plan);

  plan.lower_bound_bytes = lower_bound_bytes(graph, in, storage);
  annotate_in_place(graph, &plan);
  plan.planning_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

uint64_t param_bytes(const Graph& graph, const KernelParam& param) {
  return param.is_scratch() ? param.scratch_bytes : value_bytes(graph, param.value);
}

std::vector<const KernelSpec*> fused_kernels(const FusionPlan& plan) {
  std::vector<const KernelSpec*> list;
  for (const PlannedKernel& k : plan.kernels) {
    if (!k.packed()) list.push_back(&k.spec);
    for (const KernelPart& part : k.parts) list.push_back(&part.spec);
  }
  return list;
}

ValueId storage_of(const FusionPlan& plan, ValueId v) {
  auto it = plan.view_roots.find(v);
  return it == plan.view_roots.end() ? v : it->second;
}

const char* launch_kind_name(LaunchKind kind) {
  switch (kind) {
    case LaunchKind::kRegular:
      return "regular";
    case LaunchKind::kCooperative:
      return "cooperative";
    case LaunchKind::kCluster:
      return "cluster";
  }
  return "?";
}

namespace {

// How much of a thread's chunk a column tile's shared-memory cache holds, and when not all
// of it, what the whole would need.
std::string column_shared_cache_text(const KernelSpec& s) {
  const ColumnTiling& c = s.column;
  std::ostringstream out;
  out.imbue(std::locale::classic());
  out << c.shared_rows << " of a thread's " << c.rows_per_thread
      << " row(s) kept in shared memory across the passes (" << s.dynamic_shared_bytes << " bytes a block)";
  if (c.shared_rows < c.rows_per_thread) {
    const uint64_t whole = s.dynamic_shared_bytes /
                           static_cast<uint64_t>(std::max<int64_t>(1, c.shared_rows)) *
                           static_cast<uint64_t>(c.rows_per_thread);
    out << ", the other " << std::lround(100 * column_rows_read_again(c))
        << "% of the chunk read again by each pass (the whole chunk needs " << whole << " bytes a block)";
  }
  return out.str();
}

}  // namespace

std::string dump_plan(const Graph& graph, const FusionPlan& plan) {
  std::ostringstream out;
  out.imbue(std::locale::classic());  // no digit grouping from a global locale
  out << "fusion plan: policy " << fusion_policy_name(plan.options.policy) << ", target sm_" << plan.arch.sm
      << " (" << plan.arch.name << ")"
      << ", " << plan.kernels.size() << " kernel(s), workspace " << plan.workspace_bytes << " bytes\n";
  out << "global bytes: planned " << plan.planned_bytes << ", lower bound " << plan.lower_bound_bytes
      << "; estimated time " << seconds_text(plan.est_seconds) << "\n";
  auto param_text = [&](const KernelParam& p) {
    std::string where = location_text({p.kind, p.index});
    if (p.is_scratch()) {
      const bool counters = p.scratch == ParamScratch::kSplitCounters;
      return std::string(counters ? "split counters, " : "split partials, ") +
             std::to_string(p.scratch_bytes) + " bytes (" + where +
             (counters ? ", zeroed before the launch)" : ")");
    }
    const Node& n = graph.node(p.value);
    return "%" + std::to_string(p.value) + " " + dtype_name(n.dtype) + dims_to_string(n.dims) + " (" + where +
           ")";
  };
  // One kernel: its schedule, estimate and members (a packed launch's part: at the launch's
  // occupancy).
  auto dump_kernel = [&](const PlannedKernel& k, const KernelSpec& s) {
    out << schedule_kind_name(s.schedule) << ", domain " << dims_to_string(s.domain);
    if (!s.reduced_axes.empty()) {
      out << " reduced over " << dims_to_string(s.reduced_axes) << " (" << s.rows << " rows x " << s.cols
          << ")";
    }
    out << ", grid " << s.grid_blocks << " x block " << s.block_threads;
    // The launcher may resize a strided grid to the compiled kernel's occupancy.
    if (s.grid_policy == GridPolicy::kStrided) {
      out << " (strided over " << s.work_units << " work unit(s)";
      if (s.grid_multiple > 1) out << " in groups of " << s.grid_multiple;
      out << ")";
    } else if (s.grid_ceiling > s.grid_blocks) {
      // The estimate is at the planned grid; the larger one is the model's pick where the
      // compiled kernel fits its blocks.
      out << " (" << grid_policy_name(s.grid_policy) << ", up to " << s.grid_ceiling
          << " blocks where the compiled kernel fits them: "
          << seconds_text(
                 estimate_kernel_at_occupancy(plan.arch, graph, launched_at_grid(graph, s, s.grid_ceiling),
                                              static_cast<int>((s.grid_ceiling + plan.arch.sm_count - 1) /
                                                               std::max(1, plan.arch.sm_count)))
                     .total_seconds)
          << ")";
    } else {
      out << " (" << grid_policy_name(s.grid_policy) << ")";
    }
    if (k.launch == LaunchKind::kCooperative) out << " (" << launch_kind_name(k.launch) << " launch)";
    if (k.launch == LaunchKind::kCluster) out << " (clusters of " << s.split.blocks << " block(s))";
    if (!s.reduced_axes.empty()) {
      out << ", " << s.threads_per_row << " thread(s) per row, vectors of " << s.vector_width << " element(s)"
          << (s.row_alignment == RowVectorAlignment::kShifted ? " from each row's first vector boundary" : "")
          << ", " << s.phases << " reduction pass(es), row cache "
          << (s.cache == RowCache::kRegisters ? "registers"
              : s.cache == RowCache::kShared
                  ? "shared memory (" + std::to_string(s.shared_cache_bytes) + " bytes)"
                  : "recompute")
          << (s.prefetch == RowPrefetch::kNextRow ? ", next row read ahead" : "");
    }
    if (s.schedule == ScheduleKind::kColumnTile) {
      const ColumnTiling& c = s.column;
      out << "\n  column tile: " << c.tiles << " tile(s) of " << c.lanes << " x " << c.vector
          << " inner element(s), " << c.rd_threads << " thread row(s) along the reduced axis, ";
      if (c.releases_groups()) {
        out << "split " << c.split << " ways across blocks (chunks of " << c.chunk << ", "
            << c.rows_per_thread << " row(s) per thread), " << c.passes << " passes, " << c.groups
            << " group(s) of the tile's blocks resident together; after each reduction pass the last "
               "block to arrive combines the partials in split order and releases the group with the totals";
      } else if (c.split > 1) {
        out << "split " << c.split << " ways across blocks (chunks of " << c.chunk
            << "), partials combined in split order by each tile's last block";
      } else {
        out << "no split";
        if (c.passes > 1) out << ", " << c.passes << " passes over each tile";
      }
      if (s.cache == RowCache::kShared) out << "; " << column_shared_cache_text(s);
      for (const OnlineSum& o : s.online_sums) {
        out << "\n  online sum: %" << o.sum << " = sum of exp(%" << o.operand << " - %" << o.max
            << ") accumulates beside its max in the max's pass (the running sum rescaled as the max grows), "
               "one pass fewer";
      }
    }
    if (s.schedule == ScheduleKind::kSplitRow) {
      out << "\n  split row: " << s.split.blocks << " block(s) per row, slices of " << s.split.slice_cols
          << " column(s), " << s.split.groups << " group(s) resident together ("
          << group_residency_name(s.split.residency)
          << "), partials combined in one fixed order by every block after a group barrier";
    }
    if (s.stages == RowStages::kRowsAfterTotals) {
      out << "\n  stages: " << row_stages_name(s.stages);
      if (s.row_walks > 2) out << " (" << s.row_walks << " walks, " << s.row_walks - 1 << " grid barriers)";
      out << ":";
      auto of_walk = [&](int walk, auto&& pick) {
        std::string list;
        for (ValueId v : s.members) {
          if (s.walk_of(v) == walk && pick(v)) list += " %" + std::to_string(v);
        }
        return list;
      };
      for (int walk = 1; walk < s.row_walks; ++walk) {
        out << (walk > 1 ? "; then" : "") << " the column totals"
            << of_walk(walk - 1, [&](ValueId v) { return s.is_column_total(v); })
            << " complete at a grid barrier (the last block releases the grid), then each block walks its "
               "rows ";
        // What this walk reads of the earlier ones.
        std::string kept;
        for (ValueId v : s.crossing_values) {
          const bool read =
              s.walk_of(v) < walk && std::any_of(s.members.begin(), s.members.end(), [&](ValueId m) {
                const auto& operands = graph.node(m).operands;
                return s.walk_of(m) == walk &&
                       std::find(operands.begin(), operands.end(), v) != operands.end();
              });
          if (read) kept += (kept.empty() ? "%" : ", %") + std::to_string(v);
        }
        if (s.crossing == BarrierCrossing::kSharedRows && !kept.empty())
          out << "again from the " << s.kept_rows << " row(s) of " << kept << " it kept in shared memory ("
              << s.dynamic_shared_bytes << " bytes a block), and computes";
        else
          out << "again, reading their inputs, and computes";
        out << of_walk(walk, [&](ValueId v) {
          return std::find(s.stored.begin(), s.stored.end(), v) != s.stored.end();
        });
        const std::string reduced = of_walk(walk, [&](ValueId v) {
          return op_family(graph.node(v).op) == OpFamily::kReduce && !s.is_column_total(v);
        });
        if (!reduced.empty()) out << ", with the row reductions" << reduced << " in passes of its own";
      }
    }
    if (s.gelu == GeluEvaluation::kBf16Table)
      out << "\n  gelu: " << gelu_evaluation_name(s.gelu) << " (" << bf16_gelu_table_bytes()
          << " bytes of shared memory per block)";
    for (ValueId v : s.gelu_to_16bit)
      out << "\n  gelu %" << v << ": f32 to the precision of its 16-bit rounding";
    out << "\n  estimated: read " << s.bytes_read << " B, write " << s.bytes_written << " B, "
        << seconds_text(s.est_seconds) << "\n";
    {
      const CostBreakdown c = k.packed()
                                  ? estimate_kernel_at_occupancy(plan.arch, graph, s, s.planned_blocks_per_sm)
                                  : estimate_kernel(plan.arch, graph, s);
      const double bytes = static_cast<double>(s.bytes_read) + static_cast<double>(s.bytes_written);
      const long percent =
          std::lround(100.0 * copy_seconds(plan.arch, bytes) / std::max(c.total_seconds, 1e-12));
      out << "  model: ~" << c.registers << " registers, " << c.occ.blocks_per_sm
          << " block(s)/SM (limited by " << occupancy_limit_name(c.occ.limit) << "), "
          << std::lround(100.0 * c.waves) << "% of a wave, vector " << s.vector_width << ", "
          << std::lround(c.bytes_in_flight / 1024.0) << " KiB in flight, "
          << (c.compute_bound() ? "compute" : "memory") << " bound, " << percent << "% of copy bandwidth\n";
    }
    if (s.members.empty()) out << "  copies %" << s.stored.front() << " to its output\n";
    for (ValueId v : s.members) {
      const Node& n = graph.node(v);
      out << "  %" << v << " = " << op_name(n.op) << "(";
      for (size_t o = 0; o < n.operands.size(); ++o) out << (o ? ", %" : "%") << n.operands[o];
      out << ") " << dtype_name(n.dtype) << dims_to_string(n.dims) << " [" << value_role_name(s.role(v))
          << ", " << op_class_name(classify(graph, v)) << "]";
      // Stitch scheme of each internal edge into this op.
      bool first = true;
      for (ValueId o : n.operands) {
        if (!s.is_member(o)) continue;
        StitchScheme scheme = StitchScheme::kLocal;
        if (s.role(o) == ValueRole::kRow && s.role(v) == ValueRole::kElement && s.threads_per_row > 1) {
          scheme = s.schedule == ScheduleKind::kBlockPerRow ? StitchScheme::kRegional
                   : s.schedule == ScheduleKind::kSplitRow
                       ? (s.split.residency == GroupResidency::kCluster ? StitchScheme::kCluster
                                                                        : StitchScheme::kGlobal)
                   : s.schedule == ScheduleKind::kColumnTile
                       ? (s.column.releases_groups() ? StitchScheme::kGlobal : StitchScheme::kRegional)
                       : StitchScheme::kWarp;
        }
        // Across a grid barrier: a column total through global memory; a value the first walk
        // kept in shared memory for the second.
        if (s.role(o) == ValueRole::kColumnTotal) scheme = StitchScheme::kGlobal;
        if (s.stages == RowStages::kRowsAfterTotals && s.walk_of(o) < s.walk_of(v) &&
            s.role(o) == ValueRole::kElement && s.crossing == BarrierCrossing::kSharedRows)
          scheme = StitchScheme::kRegional;
        out << (first ? " stitch " : ", ") << "%" << o << ":" << stitch_scheme_name(scheme);
        first = false;
      }
      out << "\n";
    }
  };
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    const PlannedKernel& k = plan.kernels[i];
    out << "\nkernel " << i << " " << k.name << ": ";
    if (!k.packed()) {
      dump_kernel(k, k.spec);
    } else {
      const KernelSpec& s = k.spec;
      double apart = 0;
      for (const KernelPart& part : k.parts) apart += part.spec.est_seconds;
      out << "packed launch of " << k.parts.size() << " independent kernels, grid " << s.grid_blocks
          << " x block " << s.block_threads << " (" << grid_policy_name(s.grid_policy) << ")"
          << (k.launch == LaunchKind::kCluster
                  ? " (clusters of " + std::to_string(s.split.blocks) + " block(s))"
              : k.launch == LaunchKind::kCooperative ? std::string(" (cooperative launch)")
                                                     : std::string())
          << ", ~" << s.registers_estimate << " registers, " << s.planned_blocks_per_sm << " block(s)/SM\n"
          << "  estimated: read " << s.bytes_read << " B, write " << s.bytes_written << " B, "
          << seconds_text(s.est_seconds) << " (its parts as " << k.parts.size()
          << " launches at this occupancy: " << seconds_text(apart) << ")\n";
      for (size_t j = 0; j < k.parts.size(); ++j) {
        const KernelPart& part = k.parts[j];
        out << "  part " << j << ", blocks " << part.first_block << " .. "
            << part.first_block + part.spec.grid_blocks - 1 << ": ";
        dump_kernel(k, part.spec);
      }
    }
    for (const KernelParam& p : k.params)
      out << "  " << (p.written ? "writes " : "reads  ") << param_text(p) << "\n";
  }
  if (!plan.packing_notes.empty()) out << "\npacking:\n";
  for (const std::string& note : plan.packing_notes) out << "  " << note << "\n";
  if (!plan.boundaries.empty()) out << "\nboundaries:\n";
  for (const Boundary& b : plan.boundaries) {
    out << "  %" << b.value << " kernel " << b.producer_kernel << " -> kernel " << b.consumer_kernel << ": "
        << b.reason << "\n";
  }
  for (ValueId v : plan.opaque_ops) {
    out << "  opaque %" << v << " \"" << graph.node(v).name << "\": run by the caller";
    auto slot = plan.opaque_result_offsets.find(v);
    if (slot != plan.opaque_result_offsets.end()) out << ", result at workspace+" << slot->second;
    out << "\n";
  }
  if (!plan.view_roots.empty()) out << "\nfree views (no kernel copies them):\n";
  for (const auto& [view, root] : plan.view_roots) {
    out << "  %" << view << " " << dtype_name(graph.node(view).dtype) << dims_to_string(graph.node(view).dims)
        << " reads the buffer of %" << root << "\n";
  }
  // The order a run follows, with where each opaque operation reads and writes.
  if (!plan.opaque_ops.empty()) {
    auto at = location_text;
    out << "\nsteps:\n";
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const PlanStep& step = plan.steps[i];
      out << "  " << i << ": ";
      if (step.kind == StepKind::kKernel) {
        out << "kernel " << plan.kernels[step.index].name << "\n";
        continue;
      }
      const OpaqueStep& o = plan.opaque_steps[step.index];
      out << "opaque %" << o.op << " \"" << graph.node(o.op).name << "\" (";
      for (size_t k = 0; k < o.operands.size(); ++k)
        out << (k ? ", %" : "%") << graph.node(o.op).operands[k] << " at " << at(o.operands[k]);
      out << ") -> " << at(o.result) << "\n";
    }
  }
  // The exact aliases runs accept (plan/in_place.hpp).
  bool any_in_place = false;
  for (size_t o = 0; o < plan.in_place_inputs.size(); ++o) {
    if (plan.in_place_inputs[o].empty()) continue;
    if (!any_in_place) out << "\nin place:\n";
    any_in_place = true;
    out << "  output " << o << " \"" << graph.outputs()[o].name << "\" may take the buffer of";
    for (size_t i : plan.in_place_inputs[o])
      out << " input " << i << " \"" << graph.node(graph.inputs()[i]).name << "\"";
    out << "\n";
  }
  return out.str();
}

}  // namespace fstitch
