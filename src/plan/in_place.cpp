#include "plan/in_place.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace fstitch {
namespace {

bool same_elements(const Node& a, const Node& b) {
  return dtype_size(a.dtype) == dtype_size(b.dtype) && element_count(a.dims) == element_count(b.dims);
}

// Operations whose operands are read at the flat index of their result.
bool keeps_flat_index(OpKind op) {
  switch (op_family(op)) {
    case OpFamily::kUnary:
    case OpFamily::kBinary:
    case OpFamily::kSelect:
    case OpFamily::kCast:
    case OpFamily::kReshape:
      return true;
    default:
      return false;
  }
}

// The first operation of `spec` that reads `input` (directly or through values computed
// from it) at another element than the thread's own, or -1 when every read of it is at the
// element the thread stores. Graph order is topological, so one pass over the kernel's
// values in id order sees every operand before its users.
ValueId read_elsewhere(const Graph& graph, const KernelSpec& spec, ValueId input,
                       const std::map<ValueId, ValueId>& views) {
  if (element_count(graph.node(input).dims) != element_count(spec.domain)) return input;
  std::vector<ValueId> values = spec.members;
  values.insert(values.end(), spec.inlined.begin(), spec.inlined.end());
  std::sort(values.begin(), values.end());
  std::set<ValueId> derived{input};
  for (const auto& [view, root] : views) {
    if (root == input) derived.insert(view);  // a free view of the input reads its buffer
  }
  for (ValueId v : values) {
    const Node& node = graph.node(v);
    const bool uses = std::any_of(node.operands.begin(), node.operands.end(),
                                  [&](ValueId o) { return derived.count(o) != 0; });
    if (!uses) continue;
    // Inlined values are recomputed at whatever index their users ask for; a member that
    // is not an element value (a reduction, a row value) is shared by a row's threads.
    if (!spec.is_member(v) || spec.role(v) != ValueRole::kElement || !keeps_flat_index(node.op)) return v;
    derived.insert(v);
  }
  return -1;
}

// What check_in_place needs about the plan, gathered once.
struct PlanAccess {
  std::vector<int> writer;              // per output: position of the kernel storing it, -1 none
  std::vector<int> last_reader;         // per input: last kernel position reading it, -1 none
  std::vector<ValueId> opaque_user;     // per input: an opaque operation reading it, -1 none
  std::vector<std::set<size_t>> loads;  // per kernel: the inputs it reads
  // Packed launches: per output, the part of its writer that stores it; per kernel and input,
  // the parts reading it (plan/packing.hpp).
  std::vector<int> output_part;
  std::vector<std::map<size_t, std::vector<int>>> input_parts;

  PlanAccess(const Graph& graph, const FusionPlan& plan)
      : writer(graph.outputs().size(), -1),
        last_reader(graph.inputs().size(), -1),
        opaque_user(graph.inputs().size(), -1),
        loads(plan.kernels.size()),
        output_part(graph.outputs().size(), -1),
        input_parts(plan.kernels.size()) {
    for (size_t k = 0; k < plan.kernels.size(); ++k) {
      const PlannedKernel& kernel = plan.kernels[k];
      for (size_t j = 0; j < kernel.parts.size(); ++j) {
        for (size_t i : kernel.parts[j].params) {
          const KernelParam& param = kernel.params[i];
          if (param.kind == ParamKind::kOutput && param.written) output_part[param.index] = static_cast<int>(j);
          if (param.kind == ParamKind::kInput) input_parts[k][param.index].push_back(static_cast<int>(j));
        }
      }
      for (const KernelParam& p : plan.kernels[k].params) {
        if (p.kind == ParamKind::kOutput && p.written) writer[p.index] = static_cast<int>(k);
        if (p.kind == ParamKind::kInput) {
          last_reader[p.index] = static_cast<int>(k);
          loads[k].insert(p.index);
        }
      }
    }
    std::map<ValueId, size_t> input_index;
    for (size_t i = 0; i < graph.inputs().size(); ++i) input_index[graph.inputs()[i]] = i;
    for (ValueId op : plan.opaque_ops) {
      for (ValueId o : graph.node(op).operands) {
        auto it = input_index.find(storage_of(plan, o));  // a free view reads its root's buffer
        if (it != input_index.end()) opaque_user[it->second] = op;
      }
    }
  }
};

InPlaceCheck check_with(const Graph& graph, const FusionPlan& plan, const PlanAccess& access, size_t output,
                        size_t input) {
  InPlaceCheck check;
  const ValueId out_value = graph.outputs()[output].value;
  const ValueId in_value = graph.inputs()[input];
  check.writer_kernel = access.writer[output];
  if (!same_elements(graph.node(out_value), graph.node(in_value))) {
    check.verdict = InPlaceVerdict::kDifferentElements;
    return check;
  }
  if (out_value == in_value) return check;  // the copy writes back the bytes it reads
  if (access.opaque_user[input] >= 0) {
    check.verdict = InPlaceVerdict::kReadByOpaque;
    check.via = access.opaque_user[input];
    return check;
  }
  if (check.writer_kernel < 0) {
    check.verdict = InPlaceVerdict::kWrittenByCaller;
    return check;
  }
  if (access.last_reader[input] > check.writer_kernel) {
    check.verdict = InPlaceVerdict::kReadLater;
    check.reader_kernel = access.last_reader[input];
    return check;
  }
  const size_t k = static_cast<size_t>(check.writer_kernel);
  if (!access.loads[k].count(input)) return check;
  const PlannedKernel& kernel = plan.kernels[k];
  const KernelSpec* writer = &kernel.spec;
  if (kernel.packed()) {
    // The parts of a packed launch run at the same time: only the part storing the output
    // may read the input, and then only at its own elements.
    const int storing = access.output_part[output];
    const auto readers = access.input_parts[k].find(input);
    if (readers == access.input_parts[k].end()) return check;
    bool read_by_storing = false;
    for (int part : readers->second) {
      read_by_storing = read_by_storing || part == storing;
      if (part == storing) continue;
      check.verdict = InPlaceVerdict::kReadAlongside;
      check.reader_kernel = check.writer_kernel;
      return check;
    }
    if (storing < 0 || !read_by_storing) return check;
    writer = &kernel.parts[static_cast<size_t>(storing)].spec;
  }
  const KernelSpec& spec = *writer;
  // The store must be at the thread's element too: an element value of the kernel's grid.
  ValueId elsewhere = -1;
  // An output that is a free view is stored as its root.
  const ValueId stored = storage_of(plan, out_value);
  if (spec.is_member(stored) && spec.role(stored) != ValueRole::kElement) elsewhere = out_value;
  if (elsewhere < 0 && element_count(spec.domain) != element_count(graph.node(out_value).dims))
    elsewhere = out_value;
  // A kernel whose rows wait at grid barriers reads its inputs in each walk (a later one may
  // read its rows again, or read an input where a value after a barrier needs it): a value a
  // walk before the last stores would overwrite what a later one reads.
  if (elsewhere < 0 && spec.stages == RowStages::kRowsAfterTotals && spec.is_member(stored) &&
      spec.walk_of(stored) + 1 < spec.row_walks) {
    check.verdict = InPlaceVerdict::kReadAfterBarrier;
    check.reader_kernel = check.writer_kernel;
    return check;
  }
  if (elsewhere < 0) elsewhere = read_elsewhere(graph, spec, in_value, plan.view_roots);
  if (elsewhere >= 0) {
    check.verdict = InPlaceVerdict::kReadElsewhere;
    check.reader_kernel = check.writer_kernel;
    check.via = elsewhere;
  }
  return check;
}

std::string quoted(const std::string& name) {
  return "\"" + name + "\"";
}

}  // namespace

InPlaceCheck check_in_place(const Graph& graph, const FusionPlan& plan, size_t output, size_t input) {
  return check_with(graph, plan, PlanAccess(graph, plan), output, input);
}

std::string describe_in_place(const Graph& graph, const FusionPlan& plan, size_t output, size_t input,
                              const InPlaceCheck& check) {
  const GraphOutput& out = graph.outputs()[output];
  const ValueId in_value = graph.inputs()[input];
  const std::string in_name = quoted(graph.node(in_value).name);
  auto kernel = [&](int k) { return "kernel " + plan.kernels[static_cast<size_t>(k)].name; };
  switch (check.verdict) {
    case InPlaceVerdict::kHonoured:
      return "output " + quoted(out.name) + " may update input " + in_name + " in place";
    case InPlaceVerdict::kDifferentElements:
      return "output " + quoted(out.name) + " " + describe_value(graph, out.value) + " and input " + in_name +
             " " + describe_value(graph, in_value) + " differ in element size or count";
    case InPlaceVerdict::kWrittenByCaller:
      return "output " + quoted(out.name) + " is the result of an opaque operation";
    case InPlaceVerdict::kReadLater:
      return kernel(check.reader_kernel) + " reads input " + in_name + " after " +
             kernel(check.writer_kernel) + " has written output " + quoted(out.name);
    case InPlaceVerdict::kReadByOpaque:
      return "opaque operation " + quoted(graph.node(check.via).name) + " reads input " + in_name;
    case InPlaceVerdict::kReadAlongside:
      return kernel(check.reader_kernel) + " packs a kernel that reads input " + in_name +
             " beside the one that writes output " + quoted(out.name) +
             ", and their blocks run at the same time";
    case InPlaceVerdict::kReadAfterBarrier:
      return kernel(check.writer_kernel) + " writes output " + quoted(out.name) +
             " before a grid barrier and reads input " + in_name + " again after it";
    case InPlaceVerdict::kReadElsewhere:
      return kernel(check.reader_kernel) + " reads input " + in_name +
             " at other elements than the thread writes (through %" + std::to_string(check.via) + " = " +
             op_name(graph.node(check.via).op) + ")";
  }
  return "";
}

void annotate_in_place(const Graph& graph, FusionPlan* plan) {
  const PlanAccess access(graph, *plan);
  plan->in_place_inputs.assign(graph.outputs().size(), {});
  for (size_t o = 0; o < graph.outputs().size(); ++o) {
    for (size_t i = 0; i < graph.inputs().size(); ++i) {
      if (check_with(graph, *plan, access, o, i).verdict == InPlaceVerdict::kHonoured)
        plan->in_place_inputs[o].push_back(i);
    }
  }
  // Within a kernel, an output parameter and an input parameter it may take the buffer of
  // can point to the same memory: neither may be declared __restrict__.
  for (PlannedKernel& k : plan->kernels) {
    std::set<size_t> inputs_read;
    for (const KernelParam& p : k.params) {
      if (p.kind == ParamKind::kInput) inputs_read.insert(p.index);
    }
    std::set<size_t> shared_inputs;
    for (KernelParam& p : k.params) {
      if (p.kind != ParamKind::kOutput || !p.written) continue;
      for (size_t i : plan->in_place_inputs[p.index]) {
        if (!inputs_read.count(i)) continue;
        shared_inputs.insert(i);
        p.aliasing = ParamAliasing::kMayAlias;
      }
    }
    for (KernelParam& p : k.params) {
      if (p.kind == ParamKind::kInput && shared_inputs.count(p.index)) p.aliasing = ParamAliasing::kMayAlias;
    }
  }
}

}  // namespace fstitch
