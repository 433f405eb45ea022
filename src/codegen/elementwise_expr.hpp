// The CUDA C expression of one unary or binary operation, shared by every schedule.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.hpp"

namespace fstitch {

// The expression of an elementwise op in the compute type of its operands (`operand_type`),
// given the operand expressions `a`; not yet rounded to the result dtype.
std::string elementwise_expr(const Node& n, DType operand_type, const std::vector<std::string>& a);

}  // namespace fstitch
