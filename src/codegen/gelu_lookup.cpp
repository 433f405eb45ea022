#include "codegen/gelu_lookup.hpp"

#include <cstdio>

#include "plan/gelu_evaluation.hpp"
#include "ref/gelu_table.hpp"

namespace fstitch {
namespace {

size_t padded_entries() {
  return bf16_gelu_table_bytes() / 2;
}

std::string hex4(unsigned v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04x", v);
  return buf;
}

std::string u32(unsigned v) {
  return std::to_string(v) + "u";
}

}  // namespace

std::string bf16_gelu_definitions() {
  const ref::Bf16GeluTable& t = ref::bf16_gelu_table();
  const std::string n = std::to_string(padded_entries());
  std::string s = "#ifndef FST_GELU_BF16_TABLE\n#define FST_GELU_BF16_TABLE\n";
  s += "// GELU of every bf16 value whose result is neither x / 2, x nor -0, as the reference\n"
       "// evaluator gives it (ref/gelu_table.hpp): positive magnitudes from " +
       hex4(t.first_magnitude) + " on, then negative ones.\n";
  s += "alignas(16) static __device__ const unsigned short fst_gelu_bf16_values[" + n + "] = {";
  for (size_t i = 0; i < padded_entries(); ++i) {
    if (i % 16 == 0) s += "\n ";
    s += " " + hex4(i < t.entries.size() ? t.entries[i] : 0u) + ",";
  }
  s += "\n};\n";
  const std::string first = u32(t.first_magnitude);
  s += "// GELU of x, which holds a bf16 value, rounded to bf16, with the table copied to lut.\n"
       "// Below the table GELU(x) rounds as x / 2 does; past it, to x on the positive side (+inf\n"
       "// too) and to -0 on the negative. A NaN is made quiet, as the conversions do, and -inf\n"
       "// gives NaN (its bits made quiet). Selects, not branches: a warp's lanes take different\n"
       "// rules.\n"
       "static __device__ __forceinline__ float fst_gelu_bf16(float x, const unsigned short* lut) {\n"
       "  const unsigned u = __float_as_uint(x);\n"
       "  const bool negative = (int)u < 0;\n"
       "  const unsigned mag = (u >> 16) & 0x7fffu;\n"
       "  const unsigned i = mag - " +
       first +
       ";  // wraps below the table\n"
       "  const bool in_table = i < (negative ? " +
       u32(t.negative) + " : " + u32(t.positive) +
       ");\n"
       "  const unsigned entry = lut[(in_table ? i : 0u) + (negative ? " +
       u32(t.positive) +
       " : 0u)];\n"
       "#ifdef __CUDACC_RTC__\n"
       "  unsigned short h;\n"
       "  asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(x * 0.5f));\n"
       "  const unsigned half = (unsigned)h << 16;\n"
       "#else\n"
       "  const unsigned half = (unsigned)fst_f32_to_bf16(x * 0.5f) << 16;  // x * 0.5f is exact\n"
       "#endif\n"
       "  // Quiet a NaN, and -inf: its magnitude bits, plus one when negative, pass +inf's.\n"
       "  const bool quiet = (u & 0x7fffffffu) + (u >> 31) > 0x7f800000u;\n"
       "  const unsigned beyond = quiet ? (u | 0x00400000u) : (negative ? 0x80000000u : u);\n"
       "  const unsigned outside = mag < " +
       first +
       " ? half : beyond;\n"
       "  return __uint_as_float(in_table ? entry << 16 : outside);\n"
       "}\n#endif\n";
  return s;
}

int bf16_gelu_table_entries() {
  return static_cast<int>(padded_entries());
}

std::string bf16_gelu_table_copy(const std::string& indent) {
  const std::string vectors = std::to_string(padded_entries() / 8);
  return indent + "for (int k = threadIdx.x; k < " + vectors + "; k += blockDim.x)\n" + indent +
         "  reinterpret_cast<uint4*>(" + kBf16GeluShared +
         ")[k] = reinterpret_cast<const uint4*>(fst_gelu_bf16_values)[k];\n" + indent + "__syncthreads();\n";
}

}  // namespace fstitch
