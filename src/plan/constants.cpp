#include "plan/constants.hpp"

#include <algorithm>

namespace fstitch {

std::vector<ValueId> plan_constants(const Graph& graph, const std::vector<bool>& live) {
  std::vector<ValueId> constants;
  for (size_t i = 0; i < graph.size(); ++i) {
    if (live[i] && graph.node(static_cast<ValueId>(i)).op == OpKind::kTensor)
      constants.push_back(static_cast<ValueId>(i));
  }
  return constants;
}

std::optional<size_t> constant_index(const std::vector<ValueId>& constants, ValueId v) {
  // Ascending ids: a binary search keeps parameter building linear-logarithmic.
  const auto it = std::lower_bound(constants.begin(), constants.end(), v);
  if (it == constants.end() || *it != v) return std::nullopt;
  return static_cast<size_t>(it - constants.begin());
}

}  // namespace fstitch
