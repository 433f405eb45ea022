// The aliasing contract of fst_fusion_run and fst_kernel_launch, checked on every call:
// buffers that are written (outputs, the workspace) overlap no other buffer, except an
// output that takes the buffer of an input exactly (same address, same byte size) where the
// plan can update that input in place (plan->in_place_inputs). Inputs may overlap each
// other. O(n log n) in the number of buffers: device pointers are addresses in one space
// (unified addressing), so the same check serves both backends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/graph.hpp"
#include "plan/plan.hpp"

namespace fstitch::api {

// How a buffer is named in messages: as an element of fst_fusion_run's arrays
// ("outputs[1] (\"y\")") or as an argument of fst_kernel_launch ("args[2] (output 1 \"y\")").
enum class BufferNaming : uint8_t { kRunArrays, kKernelArgs };

struct BufferUse {
  uintptr_t address = 0;
  size_t bytes = 0;
  ParamKind kind = ParamKind::kInput;
  size_t index = 0;     // input or output index (0 for the workspace)
  size_t position = 0;  // kKernelArgs: the argument's position
  bool written = false;
};

// Throws invalid argument naming the first pair of buffers that overlap against the contract.
void check_buffer_overlaps(const Graph& graph, const FusionPlan& plan, std::vector<BufferUse> uses,
                           BufferNaming naming);

// The buffers of fst_fusion_run (the workspace when one is given).
std::vector<BufferUse> run_buffer_uses(const Graph& graph, const FusionPlan& plan, const void* const* inputs,
                                       void* const* outputs, const void* workspace);

// The arguments of fst_kernel_launch for `kernel`.
std::vector<BufferUse> kernel_buffer_uses(const Graph& graph, const PlannedKernel& kernel, void* const* args);

}  // namespace fstitch::api
