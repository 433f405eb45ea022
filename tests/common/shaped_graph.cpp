#include "common/shaped_graph.hpp"

namespace fstitch::testing {

std::string dims_text(const Dims& dims) {
  std::string text;
  for (size_t i = 0; i < dims.size(); ++i) text += (i == 0 ? "" : "x") + std::to_string(dims[i]);
  return text;
}

}  // namespace fstitch::testing
