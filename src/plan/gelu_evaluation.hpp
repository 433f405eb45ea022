// Which evaluation of GELU a kernel's bf16 GELU members take (KernelSpec::gelu): the table
// costs shared memory and a copy per block, the polynomial about three times the
// instructions per element. The cost model scores both where the table fits.
#pragma once

#include <cstddef>

#include "plan/kernel_spec.hpp"

namespace fstitch {

// Shared memory the bf16 GELU table takes per block: ref/gelu_table.hpp's entries, padded to
// whole 16-byte vectors (the copy moves vectors).
size_t bf16_gelu_table_bytes();

// Whether v is computed as a bf16 GELU of a bf16 operand (what the table serves).
bool is_bf16_gelu(const Graph& graph, ValueId v);

// Whether the kernel computes any (members and inlined values).
bool has_bf16_gelu(const Graph& graph, const KernelSpec& spec);

// Sets spec.gelu_to_16bit: the f32 GELU members whose every live user is a cast to bf16 or
// f16 among the kernel's members, the GELU itself not stored.
void find_gelu_rounded_to_16bit(const PlanInputs& in, KernelSpec& spec);

// Sets spec.gelu_to_16bit (find_gelu_rounded_to_16bit), then spec.gelu to the evaluation the cost model scores faster, the table only where its
// shared memory fits beside the kernel's static arrays. Resizes the grid for the choice.
void choose_gelu_evaluation(const PlanInputs& in, KernelSpec& spec);

}  // namespace fstitch
