// Shared pieces of the JIT tests: kernel texts written to the generated-code contract,
// a scratch directory, and file helpers.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "jit/compile.hpp"

namespace fstitch::jit::testing {

// A small module with every field set, for the cache tests (it is stored, never loaded).
inline CompiledModule sample_module() {
  CompiledModule module;
  module.ptx = ".version 9.0\n.target sm_90\n.visible .entry k()\n{\n ret;\n}\n";
  module.cubin = {0x7f, 'E', 'L', 'F', 2, 1, 0, 0, 0, 0xff, 0x10};
  module.log =
      "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
      "ptxas info    : Function properties for k\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 4 registers, used 0 barriers\n";
  return module;
}

// What the code generator's prelude provides under NVRTC.
inline const char* const kPrelude =
    "#define FST_SHARED(T, n, c) __shared__ T n[c];\n"
    "#define FST_HOST_ENTRY(x)\n";

// Three kernels of the shapes the code generator emits: a float4 elementwise loop, a
// warp-per-row reduction with shuffles, and a block-per-row reduction through shared memory.
inline std::string three_kernel_source() {
  return std::string(kPrelude) + R"(
extern "C" __global__ void __launch_bounds__(256) fst_scale_f4(const float4* __restrict__ x,
                                                              float4* __restrict__ y, long long n4, float alpha) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x) {
    const float4 v = x[i];
    y[i] = make_float4(v.x * alpha, v.y * alpha, v.z * alpha, v.w * alpha);
  }
}
FST_HOST_ENTRY(fst_scale_f4)

static __device__ __forceinline__ float fst_warp_sum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

extern "C" __global__ void __launch_bounds__(32) fst_row_sum_warp(const float* __restrict__ x,
                                                                 float* __restrict__ y, int cols) {
  const float* row = x + (long long)blockIdx.x * cols;
  float acc = 0.0f;
  for (int c = threadIdx.x; c < cols; c += 32) acc += row[c];
  acc = fst_warp_sum(acc);
  if (threadIdx.x == 0) y[blockIdx.x] = acc;
}
FST_HOST_ENTRY(fst_row_sum_warp)

extern "C" __global__ void __launch_bounds__(256) fst_row_max_block(const float* __restrict__ x,
                                                                   float* __restrict__ y, int cols) {
  FST_SHARED(float, fst_smem0, 8);
  const float* row = x + (long long)blockIdx.x * cols;
  float m = __int_as_float(0xff800000);  // -inf
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
  for (int offset = 16; offset > 0; offset >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
  if (threadIdx.x % 32 == 0) fst_smem0[threadIdx.x / 32] = m;
  __syncthreads();
  if (threadIdx.x < 32) {
    m = threadIdx.x < blockDim.x / 32 ? fst_smem0[threadIdx.x] : __int_as_float(0xff800000);
    for (int offset = 4; offset > 0; offset >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
    if (threadIdx.x == 0) y[blockIdx.x] = m;
  }
}
FST_HOST_ENTRY(fst_row_max_block)
)";
}

inline const std::vector<std::string> kThreeKernelNames = {"fst_scale_f4", "fst_row_sum_warp",
                                                           "fst_row_max_block"};

// A one-kernel text whose kernel is called `name` and multiplies by `factor`.
inline std::string single_kernel_source(const std::string& name, int factor) {
  return std::string(kPrelude) + "extern \"C\" __global__ void " + name +
         "(const float* __restrict__ x, float* __restrict__ y, int n) {\n"
         "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) y[i] = x[i] * " +
         std::to_string(factor) + ".0f;\n}\nFST_HOST_ENTRY(" + name + ")\n";
}

// A fresh directory under the system's temporary directory, removed with its contents.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "fstitch-jit-test-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed for " << pattern;
    path_ = pattern;
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ignored);
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::vector<std::string> directory_entries(const std::string& directory) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace fstitch::jit::testing
