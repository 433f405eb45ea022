// A row kernel reads and writes 16-byte vectors only when every pointer it vectorizes is
// aligned (rows that are not whole vectors included); with pointers one element past a 16-byte boundary (a
// caller passing base + 1) it takes the scalar path, which visits the same elements in the same order: the
// results are the aligned run's, bit for bit. Run through the C API on the host backend.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/backend_run.hpp"
#include "common/canonical_graphs.hpp"
#include "common/capi_handles.hpp"
#include "common/host_context.hpp"
#include "fstitch.h"
#include "ir/numeric.hpp"
#include "ir/text.hpp"

namespace fstitch::testing {
namespace {

// A buffer of `bytes` bytes whose data starts `offset` bytes past a 16-byte boundary.
class OffsetBuffer {
 public:
  OffsetBuffer(size_t bytes, size_t offset) : storage_(bytes + 32), bytes_(bytes) {
    const auto base = reinterpret_cast<uintptr_t>(storage_.data());
    data_ = storage_.data() + ((16 - base % 16) % 16) + offset;
  }
  unsigned char* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  std::vector<unsigned char> storage_;
  size_t bytes_;
  unsigned char* data_ = nullptr;
};

// Deterministic inputs in [-2, 2), in the storage format of the dtype.
void fill(unsigned char* data, int64_t count, DType dtype, uint64_t seed) {
  uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
  for (int64_t i = 0; i < count; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double x = static_cast<double>(state >> 11) / 9007199254740992.0 * 4.0 - 2.0;
    if (dtype == DType::kF32) {
      const float f = static_cast<float>(x);
      std::memcpy(data + i * 4, &f, 4);
    } else {
      const uint16_t bits = dtype == DType::kF16 ? f64_to_f16_bits(x) : f64_to_bf16_bits(x);
      std::memcpy(data + i * 2, &bits, 2);
    }
  }
}

// The outputs of one run with every input and output `offset` bytes past a 16-byte boundary.
std::vector<std::vector<unsigned char>> run_at_offset(const Graph& g, const fst_fusion* fusion,
                                                      size_t offset) {
  std::vector<OffsetBuffer> inputs, outputs;
  std::vector<HostArray> in_arrays, out_arrays;
  uint64_t seed = 1;
  for (ValueId v : g.inputs()) {
    const Node& n = g.node(v);
    const int64_t count = element_count(n.dims);
    inputs.emplace_back(static_cast<size_t>(count) * dtype_size(n.dtype), offset);
    fill(inputs.back().data(), count, n.dtype, seed++);
  }
  for (const GraphOutput& o : g.outputs()) {
    const Node& n = g.node(o.value);
    outputs.emplace_back(static_cast<size_t>(element_count(n.dims)) * dtype_size(n.dtype), offset);
    std::memset(outputs.back().data(), 0xff, outputs.back().bytes());  // NaN: unwritten elements differ
  }
  for (const OffsetBuffer& b : inputs) in_arrays.push_back({b.data(), b.bytes()});
  for (const OffsetBuffer& b : outputs) out_arrays.push_back({b.data(), b.bytes()});
  EXPECT_EQ(run_on_backend(fusion, in_arrays, out_arrays), FST_OK) << fst_last_error_message();
  std::vector<std::vector<unsigned char>> result;
  for (const OffsetBuffer& b : outputs) result.emplace_back(b.data(), b.data() + b.bytes());
  return result;
}

TEST(RowAlignment, MisalignedPointersGiveTheAlignedResultsBitForBit) {
  struct Case {
    Graph (*build)(int64_t, int64_t, DType);
    const char* name;
    int64_t rows, cols;
    DType dtype;
    const char* device_model = nullptr;  // plans for it; the kernel must then read rows ahead
  };
  const Case cases[] = {
      {layer_norm, "layer_norm", 300, 1024, DType::kBF16},
      {softmax_scale_mask, "softmax_scale_mask", 64, 4096, DType::kF16},
      {rms_norm, "rms_norm", 400, 1000, DType::kF32},
      {bias_residual_layer_norm, "bias_residual_layer_norm", 200, 4096, DType::kBF16},
      // Elementwise, with the bias read in vectors beside the rows.
      {gelu_bias, "gelu_bias", 300, 1024, DType::kBF16},
      {gelu_bias, "gelu_bias", 33, 768, DType::kF32},
      // Rows that are not whole vectors: shifted vectors from each row's first boundary.
      {layer_norm, "layer_norm", 64, 4097, DType::kBF16},
      {softmax_scale_mask, "softmax_scale_mask", 300, 197, DType::kF16},
      {log_softmax, "log_softmax", 4, 50257, DType::kBF16},
      // Rows read ahead: the next row's vectors, assembled from scalars when misaligned.
      {layer_norm, "layer_norm", 4096, 128, DType::kF32, "a100"},
      {rms_norm, "rms_norm", 4096, 128, DType::kBF16, "a100"},
  };
  ContextHandle context = host_backend_context();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Graph g = c.build(c.rows, c.cols, c.dtype);
    const std::string text = print_graph(g);
    fst_graph* raw_graph = nullptr;
    ASSERT_EQ(fst_graph_parse(context.get(), text.c_str(), text.size(), &raw_graph), FST_OK)
        << fst_last_error_message();
    GraphHandle graph(raw_graph);
    fst_fuse_options* raw_options = nullptr;
    ASSERT_EQ(fst_fuse_options_create(&raw_options), FST_OK);
    FuseOptionsHandle options(raw_options);
    if (c.device_model) {
      ASSERT_EQ(fst_fuse_options_set_device_model(options.get(), c.device_model), FST_OK)
          << fst_last_error_message();
    }
    fst_fusion* raw_fusion = nullptr;
    ASSERT_EQ(fst_fuse(graph.get(), options.get(), &raw_fusion), FST_OK) << fst_last_error_message();
    FusionHandle fusion(raw_fusion);
    const fst_kernel* kernel = nullptr;
    const char* source = nullptr;
    ASSERT_EQ(fst_fusion_kernel(fusion.get(), 0, &kernel), FST_OK);
    ASSERT_EQ(fst_kernel_source(kernel, &source), FST_OK);
    ASSERT_NE(std::string(source).find("*reinterpret_cast<const uint"), std::string::npos)
        << "the kernel has no vector path to compare with\n"
        << source;
    if (c.device_model) {
      ASSERT_NE(std::string(source).find(" pf_row = "), std::string::npos)
          << "the kernel does not read its next row ahead\n"
          << source;
    }
    const auto aligned = run_at_offset(g, fusion.get(), 0);
    const auto misaligned = run_at_offset(g, fusion.get(), dtype_size(c.dtype));
    ASSERT_EQ(aligned.size(), misaligned.size());
    for (size_t i = 0; i < aligned.size(); ++i) {
      EXPECT_TRUE(aligned[i] == misaligned[i])
          << "output " << i << " differs between aligned and misaligned runs";
      bool written = false;
      for (unsigned char byte : aligned[i]) written = written || byte != 0xff;
      EXPECT_TRUE(written) << "output " << i << " was never written";
    }
  }
}

}  // namespace
}  // namespace fstitch::testing
