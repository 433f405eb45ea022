// How a shared-memory row cache (RowCache::kShared) holds its values: a value loaded from
// global memory keeps its storage bits (a bf16 row takes 2 bytes per element, and a re-read
// converts exactly as the load did, so results are bit-identical); a computed value stays in
// its compute type (rounding it to a narrower type would change it).
#pragma once

#include <cstddef>
#include <optional>

#include "ir/graph.hpp"
#include "plan/kernel_spec.hpp"

namespace fstitch {

// Whether cached value v is kept in the storage type of its dtype: it is read from global
// memory by the kernel (not a member), so its bits are exactly the stored ones.
bool cached_in_storage_type(const KernelSpec& spec, ValueId v);

// The dtype of the elements of the shared buffer holding cached value v: its own dtype when
// cached_in_storage_type, else the dtype of its compute type (f32, f64, i32 or i64). Values
// share a buffer only when these agree; the buffer's C type is that dtype's storage type.
DType shared_cache_dtype(const Graph& g, const KernelSpec& spec, ValueId v);

// Elements one row buffer of the shared row cache holds: the row (a split row's slice), and
// with shifted vectors V - 1 more, since a row's element c sits at c + (its offset mod V).
int64_t shared_cache_cols(const KernelSpec& spec);

// Bytes one row buffer of `buffer_dtype` takes, rounded up to 16 (each buffer starts at a
// 16-byte boundary, so rows move in 16-byte vectors); nullopt when the size overflows.
std::optional<size_t> shared_cache_row_bytes(int64_t cols, DType buffer_dtype);

}  // namespace fstitch
