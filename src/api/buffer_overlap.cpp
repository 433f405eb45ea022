#include "api/buffer_overlap.hpp"

#include <algorithm>
#include <string>

#include "plan/in_place.hpp"
#include "support/error.hpp"

namespace fstitch::api {
namespace {

// One past the buffer's last byte; a range that would run past the top of the address space
// ends there (values hold at most 2^62 bytes, but a caller's pointer can be anything).
uintptr_t end_of(const BufferUse& use) {
  uintptr_t end;
  return __builtin_add_overflow(use.address, use.bytes, &end) ? UINTPTR_MAX : end;
}

std::string quoted(const std::string& name) {
  return "\"" + name + "\"";
}

std::string name_of(const Graph& graph, const BufferUse& use, BufferNaming naming) {
  const std::string index = std::to_string(use.index);
  std::string name;
  switch (use.kind) {
    case ParamKind::kInput:
      name = graph.node(graph.inputs()[use.index]).name;
      if (naming == BufferNaming::kRunArrays) return "inputs[" + index + "] (" + quoted(name) + ")";
      return "args[" + std::to_string(use.position) + "] (input " + index + " " + quoted(name) + ")";
    case ParamKind::kOutput:
      name = graph.outputs()[use.index].name;
      if (naming == BufferNaming::kRunArrays) return "outputs[" + index + "] (" + quoted(name) + ")";
      return "args[" + std::to_string(use.position) + "] (output " + index + " " + quoted(name) + ")";
    case ParamKind::kConstant:
      return "args[" + std::to_string(use.position) + "] (constant " + index + ")";
    case ParamKind::kWorkspace:
      if (naming == BufferNaming::kRunArrays) return "workspace";
      return "args[" + std::to_string(use.position) + "] (workspace+" + index + ")";
  }
  return "a buffer";
}

bool may_take(const FusionPlan& plan, const BufferUse& written, const BufferUse& read) {
  if (written.kind != ParamKind::kOutput || read.kind != ParamKind::kInput) return false;
  const std::vector<size_t>& allowed = plan.in_place_inputs[written.index];
  return std::binary_search(allowed.begin(), allowed.end(), read.index);
}

[[noreturn]] void refuse(const Graph& graph, const FusionPlan& plan, const BufferUse& written,
                         const BufferUse& other, BufferNaming naming) {
  std::string message = name_of(graph, written, naming) + " overlaps " + name_of(graph, other, naming);
  if (written.kind == ParamKind::kWorkspace || other.kind == ParamKind::kWorkspace) {
    message += ": the workspace must not share memory with any other buffer";
  } else if (other.written) {
    message += ": outputs must not share memory with each other";
  } else if (written.address != other.address || written.bytes != other.bytes) {
    message += " in part: an output may share an input's buffer only exactly (same address, same size)";
  } else if (written.kind == ParamKind::kOutput && other.kind == ParamKind::kInput) {
    const InPlaceCheck check = check_in_place(graph, plan, written.index, other.index);
    message += ", and the plan cannot update that input in place: " +
               describe_in_place(graph, plan, written.index, other.index, check);
  } else {
    message += ": only an output may share the buffer of an input";
  }
  fail(StatusCode::kInvalidArgument, message);
}

}  // namespace

void check_buffer_overlaps(const Graph& graph, const FusionPlan& plan, std::vector<BufferUse> uses,
                           BufferNaming naming) {
  std::vector<BufferUse> written, read;
  for (const BufferUse& use : uses) {
    if (use.bytes == 0) continue;  // an empty range overlaps nothing
    if (use.address + use.bytes < use.address) {
      fail(StatusCode::kInvalidArgument, name_of(graph, use, naming) + " with " + std::to_string(use.bytes) +
                                             " bytes wraps around the address space");
    }
    (use.written ? written : read).push_back(use);
  }
  auto by_address = [](const BufferUse& a, const BufferUse& b) { return a.address < b.address; };
  std::sort(written.begin(), written.end(), by_address);
  // Sorted by address, disjoint ranges overlap nothing but their neighbours.
  for (size_t i = 1; i < written.size(); ++i) {
    if (written[i].address < end_of(written[i - 1])) refuse(graph, plan, written[i], written[i - 1], naming);
  }
  // The written ranges are disjoint, so their ends ascend too: find the first one that ends
  // after a read range begins, and check those that begin before it ends.
  for (const BufferUse& r : read) {
    auto w = std::upper_bound(written.begin(), written.end(), r.address,
                              [](uintptr_t address, const BufferUse& u) { return address < end_of(u); });
    for (; w != written.end() && w->address < end_of(r); ++w) {
      const bool exact = w->address == r.address && w->bytes == r.bytes;
      if (!exact || !may_take(plan, *w, r)) refuse(graph, plan, *w, r, naming);
    }
  }
}

std::vector<BufferUse> run_buffer_uses(const Graph& graph, const FusionPlan& plan, const void* const* inputs,
                                       void* const* outputs, const void* workspace) {
  std::vector<BufferUse> uses;
  uses.reserve(graph.inputs().size() + graph.outputs().size() + 1);
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    uses.push_back({reinterpret_cast<uintptr_t>(inputs[i]), value_bytes(graph, graph.inputs()[i]),
                    ParamKind::kInput, i, i, false});
  }
  for (size_t o = 0; o < graph.outputs().size(); ++o) {
    uses.push_back({reinterpret_cast<uintptr_t>(outputs[o]), value_bytes(graph, graph.outputs()[o].value),
                    ParamKind::kOutput, o, o, true});
  }
  if (workspace != nullptr) {
    uses.push_back(
        {reinterpret_cast<uintptr_t>(workspace), plan.workspace_bytes, ParamKind::kWorkspace, 0, 0, true});
  }
  return uses;
}

std::vector<BufferUse> kernel_buffer_uses(const Graph& graph, const PlannedKernel& kernel,
                                          void* const* args) {
  std::vector<BufferUse> uses;
  uses.reserve(kernel.params.size());
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    const KernelParam& p = kernel.params[i];
    uses.push_back({reinterpret_cast<uintptr_t>(args[i]), fstitch::param_bytes(graph, p), p.kind, p.index, i,
                    p.written});
  }
  return uses;
}

}  // namespace fstitch::api
