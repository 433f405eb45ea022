// GELU of bf16 values by table lookup (KernelSpec::gelu == GeluEvaluation::kBf16Table): the
// reference's values (ref/gelu_table.hpp) as a constant array, copied into shared memory at
// the start of each block, and fst_gelu_bf16, which reads it or applies the rules that hold
// outside it. About a third of the f32 evaluation's instructions; the shared copy costs
// bf16_gelu_table_bytes() (plan/gelu_evaluation.hpp) per block.
#pragma once

#include <cstddef>
#include <string>

namespace fstitch {

// The shared-memory array a kernel copies the table into.
inline constexpr const char* kBf16GeluShared = "fst_gelu_lut";

// The table and fst_gelu_bf16(x, lut), behind an include guard so that every kernel text
// that uses them can carry them and a module joining several defines them once.
std::string bf16_gelu_definitions();

// The entries of the shared array (unsigned short, kBf16GeluShared) a kernel using the table
// declares, and the statements that fill it at the kernel's start: the copy and a barrier.
int bf16_gelu_table_entries();
std::string bf16_gelu_table_copy(const std::string& indent);

}  // namespace fstitch
