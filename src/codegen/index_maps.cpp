#include "codegen/index_maps.hpp"

namespace fstitch {

std::string index_literal(int64_t v) {
  return std::to_string(v) + "LL";
}

std::string broadcast_index(const Dims& vd, const Dims& od, const std::string& idx) {
  const Dims vs = row_major_strides(vd), os = row_major_strides(od);
  const size_t offset = vd.size() - od.size();
  std::string sum;
  for (size_t i = offset; i < vd.size(); ++i) {
    const size_t j = i - offset;
    if (od[j] == 1) continue;
    std::string coord = "(" + idx + ")";
    if (vs[i] != 1) coord = "(" + coord + " / " + index_literal(vs[i]) + ")";
    if (i != 0) coord = "(" + coord + " % " + index_literal(vd[i]) + ")";
    if (os[j] != 1) coord += " * " + index_literal(os[j]);
    sum += (sum.empty() ? "" : " + ") + coord;
  }
  return sum.empty() ? "0LL" : "(" + sum + ")";
}

std::string permute_index(const Dims& vd, const Dims& od, const std::vector<int64_t>& perm,
                          const std::string& idx) {
  const Dims vs = row_major_strides(vd), os = row_major_strides(od);
  std::string sum;
  for (size_t i = 0; i < vd.size(); ++i) {
    if (vd[i] == 1) continue;
    std::string coord = "(" + idx + ")";
    if (vs[i] != 1) coord = "(" + coord + " / " + index_literal(vs[i]) + ")";
    if (i != 0) coord = "(" + coord + " % " + index_literal(vd[i]) + ")";
    const int64_t stride = os[static_cast<size_t>(perm[i])];
    if (stride != 1) coord += " * " + index_literal(stride);
    sum += (sum.empty() ? "" : " + ") + coord;
  }
  return sum.empty() ? "0LL" : "(" + sum + ")";
}

std::string coordinate(const Dims& dims, size_t axis, const std::string& idx) {
  if (dims[axis] == 1) return "0LL";
  const Dims strides = row_major_strides(dims);
  std::string coord = "(" + idx + ")";
  if (strides[axis] != 1) coord = "(" + coord + " / " + index_literal(strides[axis]) + ")";
  return "(" + coord + " % " + index_literal(dims[axis]) + ")";
}

std::string flat_index(const Dims& dims, const std::vector<std::string>& coords) {
  const Dims strides = row_major_strides(dims);
  std::string sum;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    std::string term = coords[i];
    if (strides[i] != 1) term = "(" + term + ") * " + index_literal(strides[i]);
    sum += (sum.empty() ? "" : " + ") + term;
  }
  return sum.empty() ? "0LL" : "(" + sum + ")";
}

std::string slice_index(const Dims& vd, const Dims& od, const std::vector<int64_t>& starts,
                        const std::vector<int64_t>& steps, const std::string& idx) {
  std::vector<std::string> coords;
  for (size_t i = 0; i < vd.size(); ++i) {
    std::string c = coordinate(vd, i, idx);
    if (steps[i] != 1 && vd[i] != 1) c = "(" + c + " * " + index_literal(steps[i]) + ")";
    if (starts[i] != 0) c = "(" + c + " + " + index_literal(starts[i]) + ")";
    coords.push_back(c);
  }
  return flat_index(od, coords);
}

}  // namespace fstitch
