// Shape and dtype inference of the data-movement operations (slice, concat, pad, take): every
// result element is one operand element, or a pad value. Called by infer_type.
#pragma once

#include "ir/builder.hpp"

namespace fstitch {

ValueType infer_slice_type(const Graph& g, const Node& n);
ValueType infer_concat_type(const Graph& g, const Node& n);
ValueType infer_pad_type(const Graph& g, const Node& n);
ValueType infer_take_type(const Graph& g, const Node& n);

}  // namespace fstitch
