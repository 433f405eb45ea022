#include "ref/evaluator.hpp"

#include <limits>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>

#include <unistd.h>

#include "ref/elementwise.hpp"
#include "ref/layout.hpp"
#include "ref/movement.hpp"
#include "ref/reduce.hpp"
#include "ref/tensor.hpp"
#include "support/checked_math.hpp"
#include "support/error.hpp"
#include "support/quote.hpp"

namespace fstitch {
namespace {

using ref::Tensor;

constexpr size_t kNoUse = std::numeric_limits<size_t>::max();

// Element count of dims, or an internal error for dims a verified graph cannot have
// (they would make the buffers of the caller disagree with ours).
int64_t checked_element_count(const Dims& dims, ValueId id) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 1 || n > std::numeric_limits<int64_t>::max() / d) {
      ref::internal_error("value %" + std::to_string(id) + " has invalid dims " + dims_to_string(dims));
    }
    n *= d;
  }
  return n;
}

Tensor load_input(const Node& node, const void* buffer, ValueId id) {
  const int64_t n = checked_element_count(node.dims, id);
  Tensor t = ref::make_tensor(node.dtype, node.dims);
  if (is_float(node.dtype)) {
    for (int64_t k = 0; k < n; ++k) t.f[static_cast<size_t>(k)] = load_scalar(buffer, k, node.dtype).f;
  } else {
    for (int64_t k = 0; k < n; ++k) t.i[static_cast<size_t>(k)] = load_scalar(buffer, k, node.dtype).i;
  }
  return t;
}

void store_output(const Tensor& t, void* buffer) {
  const int64_t n = t.size();
  Scalar s;
  for (int64_t k = 0; k < n; ++k) {
    if (is_float(t.dtype)) {
      s.f = t.f[static_cast<size_t>(k)];
    } else {
      s.i = t.i[static_cast<size_t>(k)];
    }
    store_scalar(buffer, k, t.dtype, s);
  }
}

Tensor constant_tensor(const Node& node) {
  Tensor t = ref::make_tensor(node.dtype, node.dims);
  if (is_float(node.dtype)) {
    t.f.assign(t.f.size(), node.value.f);
  } else {
    t.i.assign(t.i.size(), node.value.i);
  }
  ref::round_to_dtype(t);  // a constant is already in its dtype; this only guards hand-made graphs
  return t;
}

[[noreturn]] void fail_opaque(const Node& node, ValueId id) {
  fail(StatusCode::kUnsupported, "the reference evaluator cannot run opaque operation " +
                                     quote_name(node.name) + " (%" + std::to_string(id) +
                                     "); it stands for an operation fstitch does not implement: evaluate the "
                                     "graph with an opaque callback (fst_graph_evaluate_reference_with_opaque)");
}

// Evaluates the graph one node at a time in vector order (a topological order), keeping
// each intermediate only until its last use.
class Evaluator {
 public:
  Evaluator(const Graph& graph, uint64_t memory_limit_bytes, const OpaqueRunner* run_opaque)
      : graph_(graph),
        values_(graph.size()),
        last_use_(graph.size(), kNoUse),
        memory_limit_(memory_limit_bytes),
        run_opaque_(run_opaque) {}

  void run(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) {
    check_buffers(inputs, outputs);
    plan_lifetimes();
    check_peak_memory();
    size_t next_input = 0;
    for (size_t n = 0; n < graph_.size(); ++n) {
      const auto id = static_cast<ValueId>(n);
      const Node& node = graph_.node(id);
      const void* input_buffer = nullptr;
      if (node.op == OpKind::kInput) {
        if (next_input >= inputs.size()) ref::internal_error("the graph has more input values than inputs");
        input_buffer = inputs[next_input++];
      }
      if (last_use_[n] == kNoUse) continue;  // feeds no output
      try {
        values_[n] = compute(node, id, input_buffer);
      } catch (const std::bad_alloc&) {
        fail(StatusCode::kOutOfMemory, "out of memory while evaluating " + describe_value(graph_, id));
      } catch (const std::length_error&) {  // more elements than a host vector can hold
        fail(StatusCode::kOutOfMemory, "out of memory while evaluating " + describe_value(graph_, id));
      }
      check_result(node, id, *values_[n]);
      release_operands(node, n);
    }
    // Written last, so an output buffer that aliases an input buffer cannot corrupt it.
    for (size_t k = 0; k < outputs.size(); ++k) {
      store_output(*values_[static_cast<size_t>(graph_.outputs()[k].value)], outputs[k]);
    }
  }

 private:
  void check_buffers(const std::vector<const void*>& inputs, const std::vector<void*>& outputs) const {
    if (inputs.size() != graph_.inputs().size()) {
      fail(StatusCode::kInvalidArgument, "the reference evaluator got " + std::to_string(inputs.size()) +
                                             " input buffer(s) for a graph with " +
                                             std::to_string(graph_.inputs().size()) + " input(s)");
    }
    if (outputs.size() != graph_.outputs().size()) {
      fail(StatusCode::kInvalidArgument, "the reference evaluator got " + std::to_string(outputs.size()) +
                                             " output buffer(s) for a graph with " +
                                             std::to_string(graph_.outputs().size()) + " output(s)");
    }
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (inputs[k] == nullptr) {
        fail(StatusCode::kInvalidArgument, "input buffer " + std::to_string(k) + " (" +
                                               quote_name(graph_.node(graph_.inputs()[k]).name) +
                                               ") is NULL");
      }
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (outputs[k] == nullptr) {
        fail(StatusCode::kInvalidArgument, "output buffer " + std::to_string(k) + " (" +
                                               quote_name(graph_.outputs()[k].name) + ") is NULL");
      }
    }
  }

  // last_use_[n]: the last node that reads value n; kNoUse for values no output depends on.
  // Outputs live to the end. Without a runner, opaque nodes fail up front, before any work.
  void plan_lifetimes() {
    for (size_t n = 0; n < graph_.size() && run_opaque_ == nullptr; ++n) {
      const Node& node = graph_.node(static_cast<ValueId>(n));
      if (node.op == OpKind::kOpaque) fail_opaque(node, static_cast<ValueId>(n));
    }
    for (const GraphOutput& out : graph_.outputs()) {
      if (!graph_.contains(out.value))
        ref::internal_error("output " + quote_name(out.name) + " names no value");
      last_use_[static_cast<size_t>(out.value)] = graph_.size();
    }
    for (size_t n = graph_.size(); n-- > 0;) {
      if (last_use_[n] == kNoUse) continue;
      for (ValueId operand : graph_.node(static_cast<ValueId>(n)).operands) {
        if (operand < 0 || static_cast<size_t>(operand) >= n) {
          ref::internal_error("value %" + std::to_string(n) + " reads %" + std::to_string(operand) +
                              ", which is not defined before it");
        }
        size_t& use = last_use_[static_cast<size_t>(operand)];
        if (use == kNoUse || use < n) use = n;
      }
    }
  }

  // Storage of value n's tensor: 8 bytes (a double or an int64) per element.
  uint64_t storage_bytes(size_t n) const {
    const auto elements = static_cast<uint64_t>(element_count(graph_.node(static_cast<ValueId>(n)).dims));
    return mul_or_fail(elements, uint64_t{sizeof(double)}, StatusCode::kOutOfMemory, [&] {
      return "the reference evaluator cannot hold " + describe_value(graph_, static_cast<ValueId>(n)) +
             ": more than 2^64 bytes at 8 bytes per element";
    });
  }

  // Walks the lifetimes of plan_lifetimes() and fails up front when the tensors alive at
  // once would not fit in memory, instead of exhausting the machine halfway through.
  void check_peak_memory() const {
    std::vector<bool> released(graph_.size(), false);
    uint64_t live = 0, peak = 0;
    ValueId at_peak = 0;
    for (size_t n = 0; n < graph_.size(); ++n) {
      if (last_use_[n] == kNoUse) continue;
      live = add_or_fail(live, storage_bytes(n), StatusCode::kOutOfMemory, [&] {
        return "the reference evaluator would need more than 2^64 bytes to evaluate " +
               describe_value(graph_, static_cast<ValueId>(n));
      });
      if (live > peak) {
        peak = live;
        at_peak = static_cast<ValueId>(n);
      }
      for (ValueId operand : graph_.node(static_cast<ValueId>(n)).operands) {
        const auto k = static_cast<size_t>(operand);
        if (last_use_[k] != n || released[k]) continue;
        released[k] = true;
        live -= storage_bytes(k);
      }
    }
    if (peak > memory_limit_) {
      fail(StatusCode::kOutOfMemory,
           "out of memory: the reference evaluator would hold " + std::to_string(peak) +
               " bytes at once (8 bytes per element) when evaluating " + describe_value(graph_, at_peak) +
               ", more than the " + std::to_string(memory_limit_) + " bytes it may use");
    }
  }

  const Tensor& operand(const Node& node, size_t k) const {
    if (k >= node.operands.size()) {
      ref::internal_error(std::string(op_name(node.op)) + " has " + std::to_string(node.operands.size()) +
                          " operand(s), fewer than it needs");
    }
    return *values_[static_cast<size_t>(node.operands[k])];
  }

  Tensor compute(const Node& node, ValueId id, const void* input_buffer) {
    switch (op_family(node.op)) {
      case OpFamily::kInput:
        return load_input(node, input_buffer, id);
      case OpFamily::kConstant:
        return constant_tensor(node);
      case OpFamily::kTensor:
        return load_input(node, node.data->data(), id);
      case OpFamily::kUnary:
        return ref::eval_unary(node.op, operand(node, 0));
      case OpFamily::kBinary:
        return ref::eval_binary(node.op, operand(node, 0), operand(node, 1));
      case OpFamily::kSelect:
        return ref::eval_select(operand(node, 0), operand(node, 1), operand(node, 2));
      case OpFamily::kCast:
        return ref::eval_cast(operand(node, 0), node.dtype);
      case OpFamily::kBroadcast:
        return ref::eval_broadcast(operand(node, 0), node.dims);
      case OpFamily::kReduce:
        return ref::eval_reduce(node.op, operand(node, 0), node.axes, node.keepdims);
      case OpFamily::kReshape:
        return ref::eval_reshape(take_or_copy(node, id), node.dims);
      case OpFamily::kPermute:
        return ref::eval_permute(operand(node, 0), node.axes);
      case OpFamily::kIota:
        return ref::eval_iota(node.dtype, node.dims, node.axis);
      case OpFamily::kSlice:
        return ref::eval_slice(operand(node, 0), node.starts, node.steps, node.dims);
      case OpFamily::kConcat: {
        std::vector<const Tensor*> xs;
        for (size_t k = 0; k < node.operands.size(); ++k) xs.push_back(&operand(node, k));
        return ref::eval_concat(xs, node.axis);
      }
      case OpFamily::kPad:
        return ref::eval_pad(operand(node, 0), node.pad_low, node.dims, node.value);
      case OpFamily::kTake:
        return ref::eval_take(operand(node, 0), operand(node, 1), node.axis);
      case OpFamily::kOpaque:
        if (run_opaque_ == nullptr) fail_opaque(node, id);
        return opaque(node, id);
    }
    ref::internal_error("value %" + std::to_string(id) + " has an unknown operation");
  }

  // Hands the operands to the runner in their storage dtypes and reads its result back.
  Tensor opaque(const Node& node, ValueId id) {
    std::vector<std::vector<unsigned char>> operand_bytes(node.operands.size());
    OpaqueInvocation call{id, {}, nullptr};
    for (size_t k = 0; k < node.operands.size(); ++k) {
      operand_bytes[k].resize(static_cast<size_t>(value_bytes(graph_, node.operands[k])));
      store_output(operand(node, k), operand_bytes[k].data());
      call.operands.push_back(operand_bytes[k].data());
    }
    std::vector<unsigned char> result(static_cast<size_t>(value_bytes(graph_, id)), 0xff);
    call.result = result.data();
    (*run_opaque_)(call);
    return load_input(node, result.data(), id);
  }

  // The single operand's storage, moved out when this node is its last reader.
  Tensor take_or_copy(const Node& node, ValueId id) {
    const Tensor& x = operand(node, 0);
    const auto source = static_cast<size_t>(node.operands[0]);
    if (last_use_[source] == static_cast<size_t>(id)) return std::move(*values_[source]);
    return x;
  }

  // Every result must match its node exactly: the caller's buffers are sized from the node.
  void check_result(const Node& node, ValueId id, const Tensor& t) const {
    const int64_t expected = checked_element_count(node.dims, id);
    if (t.dtype != node.dtype || t.dims != node.dims || t.size() != expected) {
      ref::internal_error("value %" + std::to_string(id) + " is recorded as " + dtype_name(node.dtype) +
                          dims_to_string(node.dims) + " but its operation yields " + dtype_name(t.dtype) +
                          dims_to_string(t.dims));
    }
  }

  void release_operands(const Node& node, size_t n) {
    for (ValueId operand : node.operands) {
      const auto k = static_cast<size_t>(operand);
      if (last_use_[k] == n) values_[k].reset();
    }
  }

  const Graph& graph_;
  std::vector<std::optional<Tensor>> values_;
  std::vector<size_t> last_use_;
  uint64_t memory_limit_;
  const OpaqueRunner* run_opaque_;
};

}  // namespace

void evaluate_reference(const Graph& graph, const std::vector<const void*>& inputs,
                        const std::vector<void*>& outputs, const OpaqueRunner* run_opaque) {
  evaluate_reference(graph, inputs, outputs, physical_memory_bytes(), run_opaque);
}

void evaluate_reference(const Graph& graph, const std::vector<const void*>& inputs,
                        const std::vector<void*>& outputs, uint64_t memory_limit_bytes,
                        const OpaqueRunner* run_opaque) {
  Evaluator(graph, memory_limit_bytes, run_opaque).run(inputs, outputs);
}

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return std::numeric_limits<uint64_t>::max();  // unknown: no limit
  return checked_mul(static_cast<uint64_t>(pages), static_cast<uint64_t>(page_size))
      .value_or(std::numeric_limits<uint64_t>::max());
}

}  // namespace fstitch
