// fst_fusion_constant*: the tensor constants a fusion owns, for frameworks that launch its
// kernels themselves.
#include "api/fusion.hpp"
#include "api/handles.hpp"

using fstitch::fail;
using fstitch::StatusCode;
using fstitch::api::guarded;
using fstitch::api::require_not_null;

extern "C" {

FST_API fst_status fst_fusion_constant_count(const fst_fusion* fusion, size_t* out_count) {
  return guarded(__func__, [&] {
    require_not_null(fusion, "fusion");
    require_not_null(out_count, "out_count");
    *out_count = fusion->plan.constants.size();
  });
}

FST_API fst_status fst_fusion_constant(const fst_fusion* fusion, size_t index, const void** out_host_data,
                                       size_t* out_bytes, fst_value* out_value) {
  return guarded(__func__, [&] {
    require_not_null(fusion, "fusion");
    require_not_null(out_host_data, "out_host_data");
    require_not_null(out_bytes, "out_bytes");
    const std::vector<fstitch::ValueId>& constants = fusion->plan.constants;
    fstitch::api::require_index("index", index, constants.size(), "the fusion", "constant(s)");
    const fstitch::ValueId value = constants[index];
    *out_host_data = fusion->host_constants[index];
    *out_bytes = static_cast<size_t>(fstitch::value_bytes(fusion->graph, value));
    if (out_value != nullptr) {
      *out_value = fstitch::api::encode_value(fusion->graph_serial->value(), value);
    }
  });
}

}  // extern "C"
