#include "codegen/vector_access.hpp"

#include "codegen/cuda_types.hpp"

namespace fstitch {

std::string vector_type(int bytes) {
  switch (bytes) {
    case 16:
      return "uint4";
    case 8:
      return "uint2";
    default:
      return "unsigned";
  }
}

std::string vector_word(const std::string& var, int bytes, int w) {
  if (bytes == 4) return var;
  static const char* const kMembers[] = {".x", ".y", ".z", ".w"};
  return var + kMembers[w];
}

std::string vector_element_bits(const std::string& var, int size, int bytes, int j) {
  if (size == 8) {
    return "(((unsigned long long)" + vector_word(var, bytes, 2 * j + 1) + " << 32) | " +
           vector_word(var, bytes, 2 * j) + ")";
  }
  const int w = (j * size) / 4, shift = ((j * size) % 4) * 8;
  std::string e = vector_word(var, bytes, w);
  if (shift) e = "(" + e + " >> " + std::to_string(shift) + ")";
  if (size == 2) return "(" + e + " & 0xffffu)";
  if (size == 1) return "(" + e + " & 0xffu)";
  return e;
}

std::vector<std::string> pack_vector_words(const std::string& var, DType t, int count,
                                           const std::vector<std::string>& bits) {
  const int size = static_cast<int>(dtype_size(t));
  const int bytes = count * size;
  std::vector<std::string> out;
  for (int w = 0; w < bytes / 4; ++w) {
    std::string expr;
    for (int j = 0; j < count; ++j) {
      const std::string& b = bits[static_cast<size_t>(j)];
      if (size == 8) {
        if (j * 2 == w) expr = "(unsigned)" + b;
        if (j * 2 + 1 == w) expr = "(unsigned)(" + b + " >> 32)";
      } else if ((j * size) / 4 == w) {
        const int shift = ((j * size) % 4) * 8;
        const std::string part = "((unsigned)" + b + (shift ? " << " + std::to_string(shift) : "") + ")";
        expr += (expr.empty() ? "" : " | ") + part;
      }
    }
    out.push_back(vector_word(var, bytes, w) + " = " + expr + ";");
  }
  return out;
}

std::vector<std::string> bits_of_scalar_loads(DType t, int count, const std::string& pointer,
                                              const std::string& index) {
  std::vector<std::string> bits;
  for (int j = 0; j < count; ++j) {
    const std::string element = pointer + "[" + index + " + " + std::to_string(j) + "]";
    bits.push_back("(" + bits_from_storage(t, element) + ")");
  }
  return bits;
}

}  // namespace fstitch
