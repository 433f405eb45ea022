// fst_fusion_step*, fst_fusion_opaque*, fst_opaque_call_* and the glue that runs the
// caller's opaque callback.
#include <cstring>

#include "api/fusion.hpp"
#include "api/handles.hpp"
#include "api/opaque_call.hpp"
#include "support/quote.hpp"

using fstitch::fail;
using fstitch::StatusCode;
using fstitch::api::guarded;
using fstitch::api::require_not_null;

namespace fstitch::api {

void invoke_opaque(const OpaqueCallback& callback, const fst_opaque_call& call) {
  // Read as an int: a callback may return any int, and loading an out-of-range value through
  // the enum type would be undefined.
  const fst_status status = callback.function(&call, callback.user_data);
  const int code = enum_code(status);
  if (code == FST_OK) return;
  const std::string what = "opaque operation " + quote_name(call.graph->node(call.op).name) + " (%" +
                           std::to_string(call.op) + ")";
  if (code <= FST_OK || code > FST_ERROR_INTERNAL) {
    fail(StatusCode::kInvalidArgument,
         "the callback of " + what + " returned " + std::to_string(code) + ", which is no fst_status");
  }
  std::string message =
      what + " failed: the callback returned " + fst_status_string(static_cast<fst_status>(code));
  if (!call.failure.empty()) message += ": " + printable_text(call.failure, call.failure.size());
  fail(static_cast<StatusCode>(code), message);
}

void require_callback_for(const Graph& graph, const std::vector<ValueId>& opaque_ops,
                          const OpaqueCallback& callback) {
  if (callback.function != nullptr || opaque_ops.empty()) return;
  fail(StatusCode::kInvalidArgument, "callback is NULL, but the graph has opaque operation " +
                                         quote_name(graph.node(opaque_ops.front()).name) + " (%" +
                                         std::to_string(opaque_ops.front()) + ")");
}

}  // namespace fstitch::api

namespace {

const fstitch::OpaqueStep& opaque_step(const fst_fusion* fusion, size_t index) {
  const auto& steps = fusion->plan.opaque_steps;
  fstitch::api::require_index("index", index, steps.size(), "the fusion", "opaque operation(s)");
  return steps[index];
}

// The dtype, rank and dims of `value`; dims point into the graph (NULL for rank 0).
void describe(const fstitch::Graph& graph, fstitch::ValueId value, fst_dtype* out_dtype, size_t* out_rank,
              const int64_t** out_dims) {
  const fstitch::Node& n = graph.node(value);
  *out_dtype = static_cast<fst_dtype>(n.dtype);
  *out_rank = n.dims.size();
  *out_dims = n.dims.empty() ? nullptr : n.dims.data();
}

void require_type_outputs(fst_dtype* out_dtype, size_t* out_rank, const int64_t** out_dims) {
  require_not_null(out_dtype, "out_dtype");
  require_not_null(out_rank, "out_rank");
  require_not_null(out_dims, "out_dims");
}

void require_location_outputs(fst_param_kind* out_kind, size_t* out_location, fst_dtype* out_dtype,
                              size_t* out_rank, const int64_t** out_dims) {
  require_not_null(out_kind, "out_kind");
  require_not_null(out_location, "out_location");
  require_type_outputs(out_dtype, out_rank, out_dims);
}

}  // namespace

extern "C" {

FST_API fst_status fst_fusion_step_count(const fst_fusion* fusion, size_t* out_count) {
  return guarded(__func__, [&] {
    require_not_null(fusion, "fusion");
    require_not_null(out_count, "out_count");
    *out_count = fusion->plan.steps.size();
  });
}

FST_API fst_status fst_fusion_step(const fst_fusion* fusion, size_t index, fst_step_kind* out_kind,
                                   size_t* out_index) {
  return guarded(__func__, [&] {
    require_not_null(fusion, "fusion");
    require_not_null(out_kind, "out_kind");
    require_not_null(out_index, "out_index");
    const auto& steps = fusion->plan.steps;
    fstitch::api::require_index("index", index, steps.size(), "the fusion", "step(s)");
    *out_kind = steps[index].kind == fstitch::StepKind::kKernel ? FST_STEP_KERNEL : FST_STEP_OPAQUE;
    *out_index = steps[index].index;
  });
}

FST_API fst_status fst_fusion_opaque_count(const fst_fusion* fusion, size_t* out_count) {
  return guarded(__func__, [&] {
    require_not_null(fusion, "fusion");
    require_not_null(out_count, "out_count");
    *out_count = fusion->plan.opaque_steps.size();
  });
}

FST_API fst_status fst_fusion_opaque(const fst_fusion* fusion, size_t index, const char** out_name,
                                     size_t* out_operand_count, fst_value* out_value) {
  return guarded(__func__, [&] {
    require_not_null(fusion, "fusion");
    require_not_null(out_name, "out_name");
    require_not_null(out_operand_count, "out_operand_count");
    const fstitch::OpaqueStep& step = opaque_step(fusion, index);
    *out_name = fusion->graph.node(step.op).name.c_str();
    *out_operand_count = step.operands.size();
    if (out_value != nullptr) *out_value = fstitch::api::encode_value(fusion->graph_serial->value(), step.op);
  });
}

FST_API fst_status fst_fusion_opaque_operand(const fst_fusion* fusion, size_t index, size_t operand,
                                             fst_param_kind* out_kind, size_t* out_location,
                                             fst_dtype* out_dtype, size_t* out_rank,
                                             const int64_t** out_dims) {
  return guarded(__func__, [&] {
    require_not_null(fusion, "fusion");
    require_location_outputs(out_kind, out_location, out_dtype, out_rank, out_dims);
    const fstitch::OpaqueStep& step = opaque_step(fusion, index);
    fstitch::api::require_index("operand", operand, step.operands.size(),
                                "opaque operation " + std::to_string(index), "operand(s)");
    *out_kind = static_cast<fst_param_kind>(step.operands[operand].kind);
    *out_location = step.operands[operand].index;
    describe(fusion->graph, fusion->graph.node(step.op).operands[operand], out_dtype, out_rank, out_dims);
  });
}

FST_API fst_status fst_fusion_opaque_result(const fst_fusion* fusion, size_t index, fst_param_kind* out_kind,
                                            size_t* out_location, fst_dtype* out_dtype, size_t* out_rank,
                                            const int64_t** out_dims) {
  return guarded(__func__, [&] {
    require_not_null(fusion, "fusion");
    require_location_outputs(out_kind, out_location, out_dtype, out_rank, out_dims);
    const fstitch::OpaqueStep& step = opaque_step(fusion, index);
    *out_kind = static_cast<fst_param_kind>(step.result.kind);
    *out_location = step.result.index;
    describe(fusion->graph, step.op, out_dtype, out_rank, out_dims);
  });
}

FST_API fst_status fst_opaque_call_name(const fst_opaque_call* call, const char** out_name) {
  return guarded(__func__, [&] {
    require_not_null(call, "call");
    require_not_null(out_name, "out_name");
    *out_name = call->graph->node(call->op).name.c_str();
  });
}

FST_API fst_status fst_opaque_call_value(const fst_opaque_call* call, fst_value* out_value) {
  return guarded(__func__, [&] {
    require_not_null(call, "call");
    require_not_null(out_value, "out_value");
    *out_value = fstitch::api::encode_value(call->graph_serial, call->op);
  });
}

FST_API fst_status fst_opaque_call_operand_count(const fst_opaque_call* call, size_t* out_count) {
  return guarded(__func__, [&] {
    require_not_null(call, "call");
    require_not_null(out_count, "out_count");
    *out_count = call->operands.size();
  });
}

FST_API fst_status fst_opaque_call_operand(const fst_opaque_call* call, size_t index, const void** out_data,
                                           fst_dtype* out_dtype, size_t* out_rank, const int64_t** out_dims) {
  return guarded(__func__, [&] {
    require_not_null(call, "call");
    require_not_null(out_data, "out_data");
    require_type_outputs(out_dtype, out_rank, out_dims);
    fstitch::api::require_index("index", index, call->operands.size(), "the operation", "operand(s)");
    *out_data = call->operands[index];
    describe(*call->graph, call->graph->node(call->op).operands[index], out_dtype, out_rank, out_dims);
  });
}

FST_API fst_status fst_opaque_call_result(const fst_opaque_call* call, void** out_data, fst_dtype* out_dtype,
                                          size_t* out_rank, const int64_t** out_dims) {
  return guarded(__func__, [&] {
    require_not_null(call, "call");
    require_not_null(out_data, "out_data");
    require_type_outputs(out_dtype, out_rank, out_dims);
    *out_data = call->result;
    describe(*call->graph, call->op, out_dtype, out_rank, out_dims);
  });
}

FST_API fst_status fst_opaque_call_stream(const fst_opaque_call* call, void** out_stream) {
  return guarded(__func__, [&] {
    require_not_null(call, "call");
    require_not_null(out_stream, "out_stream");
    *out_stream = call->stream;
  });
}

FST_API fst_status fst_opaque_call_fail(const fst_opaque_call* call, const char* message) {
  return guarded(__func__, [&] {
    require_not_null(call, "call");
    require_not_null(message, "message");
    constexpr size_t kMaxFailureBytes = 4096;
    call->failure.assign(message, strnlen(message, kMaxFailureBytes));
  });
}

}  // extern "C"
