#include "plan/row_cache.hpp"

#include "support/checked_math.hpp"

namespace fstitch {

bool cached_in_storage_type(const KernelSpec& spec, ValueId v) {
  return !spec.is_member(v);
}

DType shared_cache_dtype(const Graph& g, const KernelSpec& spec, ValueId v) {
  const DType t = g.node(v).dtype;
  if (cached_in_storage_type(spec, v)) return t;
  if (is_float(t)) return t == DType::kF64 ? DType::kF64 : DType::kF32;
  return t == DType::kI64 ? DType::kI64 : DType::kI32;
}

int64_t shared_cache_cols(const KernelSpec& spec) {
  const int64_t cols = spec.schedule == ScheduleKind::kSplitRow ? spec.split.slice_cols : spec.cols;
  return spec.row_alignment == RowVectorAlignment::kShifted ? cols + spec.vector_width - 1 : cols;
}

std::optional<size_t> shared_cache_row_bytes(int64_t cols, DType buffer_dtype) {
  const std::optional<size_t> bytes = checked_mul(static_cast<size_t>(cols), dtype_size(buffer_dtype));
  if (!bytes) return std::nullopt;
  const std::optional<size_t> padded = checked_add(*bytes, size_t{15});
  if (!padded) return std::nullopt;
  return *padded / 16 * 16;
}

}  // namespace fstitch
