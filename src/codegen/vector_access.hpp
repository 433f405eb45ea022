// CUDA C text for vector memory accesses: a vector of V consecutive elements of one dtype
// held as 32-bit words (`unsigned`, `uint2` or `uint4`), the bits of each element in and out
// of the words, and the same words assembled from (or split into) scalar accesses where a
// pointer is not aligned to the vector.
#pragma once

#include <string>
#include <vector>

#include "ir/dtype.hpp"

namespace fstitch {

// "unsigned", "uint2" or "uint4" for a vector of 4, 8 or 16 bytes.
std::string vector_type(int bytes);

// Word w of a vector variable: the variable itself for 4 bytes, else var.x, var.y...
std::string vector_word(const std::string& var, int bytes, int w);

// The raw bits of element j (of `size` bytes) of a vector variable of `bytes` bytes.
std::string vector_element_bits(const std::string& var, int size, int bytes, int j);

// Statements `var.x = ...;` filling the words of a vector of `count` elements of dtype t from
// per-element bit expressions (bits[j], unsigned or unsigned long long).
std::vector<std::string> pack_vector_words(const std::string& var, DType t, int count,
                                           const std::vector<std::string>& bits);

// The bits of element j read with a scalar load of pointer[index + j]: the words of a
// vector filled without a vector load, for a pointer not aligned to the vector.
std::vector<std::string> bits_of_scalar_loads(DType t, int count, const std::string& pointer,
                                              const std::string& index);

}  // namespace fstitch
