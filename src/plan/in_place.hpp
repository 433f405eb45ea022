// In-place updates: which graph outputs may share their buffer with a graph input, exactly
// (same address, same byte size), without changing any result. Frameworks want this for
// elementwise updates (x = x * a + b written back into x, optimizer steps).
//
// An output may take an input's buffer when its values and the input's have the same
// element size and count, and either it is that input (a copy onto itself), or:
//  - the kernel that writes it reads the input only at the element each thread stores,
//    through elementwise operations (no broadcast, permute, reduction or row value of it);
//  - no later kernel, and no opaque operation, reads the input, nor does another kernel of
//    the writer's packed launch (plan/packing.hpp), whose blocks run at the same time.
// Kernels run in order, so earlier kernels read the input before it is overwritten.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "plan/plan.hpp"

namespace fstitch {

enum class InPlaceVerdict : uint8_t {
  kHonoured,
  kDifferentElements,  // element size or element count differ
  kWrittenByCaller,    // the output is the result of an opaque operation
  kReadLater,          // a kernel after the writer reads the input
  kReadByOpaque,       // an opaque operation (run by the caller) reads the input
  kReadElsewhere,      // the writer reads the input at other elements than it stores
  kReadAlongside,      // another kernel of the writer's packed launch reads the input meanwhile
  kReadAfterBarrier,   // the writer stores the output before a grid barrier and reads its
                       // inputs again after it (RowStages::kRowsAfterTotals)
};

struct InPlaceCheck {
  InPlaceVerdict verdict = InPlaceVerdict::kHonoured;
  int writer_kernel = -1;  // position of the kernel that stores the output
  int reader_kernel = -1;  // kReadLater, kReadElsewhere, kReadAlongside, kReadAfterBarrier: the launch
                           // that reads the input
  ValueId via = -1;        // kReadElsewhere: the operation that reads it; kReadByOpaque: the opaque op
};

// Whether output `output` of the plan may share the buffer of input `input`, and why not.
InPlaceCheck check_in_place(const Graph& graph, const FusionPlan& plan, size_t output, size_t input);

// The reason of a refusal in words, naming the kernels and operations involved.
std::string describe_in_place(const Graph& graph, const FusionPlan& plan, size_t output, size_t input,
                              const InPlaceCheck& check);

// Fills plan->in_place_inputs (for each output, the inputs whose buffer it may take) and
// marks the kernel parameters that may then point to the same memory (ParamAliasing).
void annotate_in_place(const Graph& graph, FusionPlan* plan);

}  // namespace fstitch
