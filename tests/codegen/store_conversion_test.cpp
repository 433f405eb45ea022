// Stores keep the host conversion rules bit for bit: a bf16 NaN written unchanged (moved, not
// computed on) comes out quiet with its sign and payload, an f16 NaN as the quiet NaN of its
// sign, whatever shortcut the store of an already rounded value takes. A value computed in
// f32 and stored as 16 bits (its f32 converted at the store, two vector lanes per cvt, NaN
// lanes redone) has the reference evaluator's bits, in elementwise and row kernels, and so
// does an f16 vector read as f32 by an elementwise or a row kernel (a cvt per lane, NaN
// lanes redone). Run
// through the C API on the host backend, whose cvt gives NaNs the hardware's payload-free
// bits, so a store that missed a NaN shows.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/backend_run.hpp"
#include "common/capi_handles.hpp"
#include "common/host_context.hpp"
#include "fstitch.h"
#include "ir/builder.hpp"
#include "ir/dtype.hpp"
#include "ir/text.hpp"

namespace fstitch::testing {
namespace {

// Graph g parsed through the C API and fused with the default options on the host backend.
struct HostFusion {
  ContextHandle context;
  GraphHandle graph;
  FusionHandle fusion;
};
HostFusion fuse_on_host(const Graph& g) {
  HostFusion f;
  f.context = host_backend_context();
  const std::string text = print_graph(g);
  fst_graph* raw_graph = nullptr;
  EXPECT_EQ(fst_graph_parse(f.context.get(), text.c_str(), text.size(), &raw_graph), FST_OK)
      << fst_last_error_message();
  f.graph = GraphHandle(raw_graph);
  fst_fusion* raw_fusion = nullptr;
  if (raw_graph != nullptr) {
    EXPECT_EQ(fst_fuse(raw_graph, nullptr, &raw_fusion), FST_OK) << fst_last_error_message();
  }
  f.fusion = FusionHandle(raw_fusion);
  return f;
}

// y = the transpose of x [2, 4]: a kernel that loads and stores every element unchanged.
std::vector<uint16_t> transpose_bits(DType dtype, const std::vector<uint16_t>& x) {
  Graph g;
  build_output(g, "y", build_permute(g, build_input(g, "x", dtype, {2, 4}), {1, 0}));
  const HostFusion host = fuse_on_host(g);
  const fst_fusion* fusion = host.fusion.get();
  std::vector<uint16_t> input = x, y(x.size(), 0);
  EXPECT_EQ(run_on_backend(fusion, {{input.data(), input.size() * 2}}, {{y.data(), y.size() * 2}}), FST_OK)
      << fst_last_error_message();
  std::vector<uint16_t> row_major(x.size());
  for (size_t i = 0; i < 4; ++i) {
    for (size_t j = 0; j < 2; ++j) row_major[j * 4 + i] = y[i * 2 + j];  // back to x's layout
  }
  return row_major;
}

TEST(StoreConversion, Bf16NaNsComeOutQuietWithSignAndPayload) {
  const std::vector<uint16_t> x = {0x7f81, 0xff81, 0x7fc1, 0x3f80, 0x0001, 0x7f80, 0x8000, 0xffff};
  const std::vector<uint16_t> expected = {0x7fc1, 0xffc1, 0x7fc1, 0x3f80, 0x0001, 0x7f80, 0x8000, 0xffff};
  EXPECT_EQ(transpose_bits(DType::kBF16, x), expected);
}

TEST(StoreConversion, F16NaNsComeOutAsTheQuietNaNOfTheirSign) {
  const std::vector<uint16_t> x = {0x7c01, 0xfc01, 0x7e05, 0x3c00, 0x0001, 0x7c00, 0x8000, 0x7bff};
  const std::vector<uint16_t> expected = {0x7e00, 0xfe00, 0x7e00, 0x3c00, 0x0001, 0x7c00, 0x8000, 0x7bff};
  EXPECT_EQ(transpose_bits(DType::kF16, x), expected);
}

// The bits of the first output of graph `g` (a 16-bit one; f32 inputs) for inputs `xs`,
// fused and run, and as the reference evaluator computes them.
struct OutputBits {
  std::vector<uint16_t> fused, reference;
  size_t kernels = 0;
};
OutputBits computed_bits(const Graph& g, const std::vector<std::vector<float>>& xs) {
  const HostFusion host = fuse_on_host(g);
  const fst_fusion* fusion = host.fusion.get();
  const fst_graph* graph = host.graph.get();
  OutputBits bits;
  EXPECT_EQ(fst_fusion_kernel_count(fusion, &bits.kernels), FST_OK);
  std::vector<std::vector<float>> in = xs;
  std::vector<HostArray> inputs;
  std::vector<const void*> input_ptrs;
  for (std::vector<float>& x : in) {
    inputs.push_back({x.data(), x.size() * 4});
    input_ptrs.push_back(x.data());
  }
  std::vector<std::vector<unsigned char>> fused_out, reference_out;
  for (const GraphOutput& out : g.outputs()) {
    const size_t bytes = element_count(g.node(out.value).dims) * dtype_size(g.node(out.value).dtype);
    fused_out.emplace_back(bytes, 0xA5);
    reference_out.emplace_back(bytes, 0x5A);
  }
  std::vector<HostArray> outputs;
  std::vector<void*> reference_ptrs;
  for (size_t i = 0; i < fused_out.size(); ++i) {
    outputs.push_back({fused_out[i].data(), fused_out[i].size()});
    reference_ptrs.push_back(reference_out[i].data());
  }
  EXPECT_EQ(run_on_backend(fusion, inputs, outputs), FST_OK) << fst_last_error_message();
  EXPECT_EQ(fst_graph_evaluate_reference(graph, input_ptrs.data(), input_ptrs.size(), reference_ptrs.data(),
                                         reference_ptrs.size()),
            FST_OK)
      << fst_last_error_message();
  bits.fused.resize(fused_out[0].size() / 2);
  bits.reference.resize(bits.fused.size());
  std::memcpy(bits.fused.data(), fused_out[0].data(), fused_out[0].size());
  std::memcpy(bits.reference.data(), reference_out[0].data(), reference_out[0].size());
  return bits;
}

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// Specials in some vectors, ordinary values in others: NaNs of both signs with payloads
// (one signaling), infinities, zeros, a halfway case of each 16-bit type, an f32 subnormal,
// a value that rounds up to infinity in f16, the largest finite float, and a negative NaN
// beside an ordinary value in its pair of lanes.
std::vector<float> special_values(size_t count) {
  const std::vector<float> specials = {from_bits(0x7f812345),
                                       from_bits(0xffc00001),
                                       from_bits(0x7fc0ffff),
                                       from_bits(0x7f800000),
                                       from_bits(0xff800000),
                                       0.0f,
                                       -0.0f,
                                       1.00390625f,
                                       1.00048828125f,
                                       from_bits(0x00000001),
                                       65520.0f,
                                       from_bits(0x7f7fffff),
                                       from_bits(0xff812345)};
  std::vector<float> x(count);
  for (size_t i = 0; i < count; ++i)
    x[i] = i < specials.size() ? specials[i] : 0.37f * static_cast<float>(i % 17) - 3.1f;
  return x;
}

// Equal bits, except that a NaN's payload is the kernel's to choose (the reference's computed
// NaN is the canonical one of its sign): a NaN matches a NaN of the same sign.
void expect_reference_bits(DType t, const OutputBits& bits) {
  ASSERT_EQ(bits.fused.size(), bits.reference.size());
  const uint16_t exponent = t == DType::kBF16 ? 0x7f80 : 0x7c00;
  auto is_nan = [&](uint16_t b) { return (b & exponent) == exponent && (b & ~exponent & 0x7fff) != 0; };
  for (size_t i = 0; i < bits.fused.size(); ++i) {
    const uint16_t got = bits.fused[i], want = bits.reference[i];
    const bool same = is_nan(want) ? is_nan(got) && (got & 0x8000) == (want & 0x8000) : got == want;
    EXPECT_TRUE(same) << "element " << i << ": got 0x" << std::hex << got << ", reference 0x" << want;
  }
}

TEST(StoreConversion, ComputedValuesStoredAs16BitsHaveTheReferenceBits) {
  for (DType t : {DType::kBF16, DType::kF16}) {
    SCOPED_TRACE(dtype_name(t));
    // Elementwise: [4, 8] f32 in vectors of 4, its 16-bit result stored two lanes per cvt.
    Graph e;
    build_output(e, "y", build_cast(e, build_input(e, "x", DType::kF32, {4, 8}), t));
    const OutputBits elementwise = computed_bits(e, {special_values(32)});
    expect_reference_bits(t, elementwise);
    // A row kernel: x plus its row's sum of z, small integers (sums exact in any order, the
    // specials stay in their own elements), stored as 16 bits in the row's vector lanes.
    Graph r;
    const ValueId x = build_input(r, "x", DType::kF32, {4, 64});
    const ValueId z = build_input(r, "z", DType::kF32, {4, 64});
    const ValueId sum = build_reduce(r, OpKind::kReduceSum, z, {1}, true);
    build_output(r, "y",
                 build_cast(r, build_binary(r, OpKind::kAdd, x, build_broadcast(r, sum, {4, 64})), t));
    std::vector<float> integers(256);
    for (size_t i = 0; i < integers.size(); ++i)
      integers[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
    const OutputBits row = computed_bits(r, {special_values(256), integers});
    EXPECT_EQ(row.kernels, 1u);
    expect_reference_bits(t, row);
  }
}

// x f16 [4, 8] read in vectors (as elementwise vector loads and as a bias broadcast along
// the rows), its f32 values stored: NaNs keep their sign, every other value is exact.
TEST(StoreConversion, F16VectorsReadAsF32HaveTheReferenceValues) {
  Graph g;
  const ValueId x = build_input(g, "x", DType::kF16, {4, 8});
  const ValueId bias = build_input(g, "bias", DType::kF16, {8});
  build_output(g, "y", build_cast(g, x, DType::kF32));
  build_output(
      g, "z", build_cast(g, build_binary(g, OpKind::kAdd, x, build_broadcast(g, bias, {4, 8})), DType::kF32));
  std::vector<uint16_t> xs(32), bs = {0x3c00, 0xfc01, 0x7e05, 0x0001, 0x7c00, 0x8000, 0xfbff, 0x3555};
  const std::vector<uint16_t> specials = {0x7c01, 0xfc01, 0x7e05, 0xfe00, 0x0001,
                                          0x7c00, 0x8000, 0x7bff, 0x83ff};
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = i < specials.size() ? specials[i] : static_cast<uint16_t>(0x3800 + 37 * i);
  const HostFusion host = fuse_on_host(g);
  const fst_fusion* fusion = host.fusion.get();
  const fst_graph* graph = host.graph.get();
  std::vector<uint32_t> y(32, 0xA5A5A5A5u), z(32, 0xA5A5A5A5u), ry(32), rz(32);
  ASSERT_EQ(run_on_backend(fusion, {{xs.data(), 64}, {bs.data(), 16}}, {{y.data(), 128}, {z.data(), 128}}),
            FST_OK)
      << fst_last_error_message();
  const void* inputs[] = {xs.data(), bs.data()};
  void* reference[] = {ry.data(), rz.data()};
  ASSERT_EQ(fst_graph_evaluate_reference(graph, inputs, 2, reference, 2), FST_OK) << fst_last_error_message();
  auto is_nan = [](uint32_t b) { return (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu) != 0; };
  for (size_t i = 0; i < 32; ++i) {
    for (const auto& [got, want] : {std::pair<uint32_t, uint32_t>{y[i], ry[i]}, {z[i], rz[i]}}) {
      const bool same = is_nan(want) ? is_nan(got) && (got >> 31) == (want >> 31) : got == want;
      EXPECT_TRUE(same) << "element " << i << ": got 0x" << std::hex << got << ", reference 0x" << want;
    }
  }
}

// The same f16 vectors read by a row kernel: x plus its row's sum of small integers z (exact
// in any order), as f32.
TEST(StoreConversion, F16RowVectorsReadAsF32HaveTheReferenceValues) {
  Graph g;
  const ValueId x = build_input(g, "x", DType::kF16, {4, 64});
  const ValueId z = build_input(g, "z", DType::kF32, {4, 64});
  const ValueId sum = build_reduce(g, OpKind::kReduceSum, z, {1}, true);
  build_output(
      g, "y", build_binary(g, OpKind::kAdd, build_cast(g, x, DType::kF32), build_broadcast(g, sum, {4, 64})));
  std::vector<uint16_t> xs(256);
  const std::vector<uint16_t> specials = {0x7c01, 0xfc01, 0x7e05, 0xfe00, 0x0001,
                                          0x7c00, 0x8000, 0x7bff, 0x83ff};
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = i < specials.size() ? specials[i] : static_cast<uint16_t>(0x3800 + 37 * (i % 64));
  std::vector<float> zs(256);
  for (size_t i = 0; i < zs.size(); ++i) zs[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
  const HostFusion host = fuse_on_host(g);
  const fst_fusion* fusion = host.fusion.get();
  const fst_graph* graph = host.graph.get();
  size_t kernels = 0;
  ASSERT_EQ(fst_fusion_kernel_count(fusion, &kernels), FST_OK);
  EXPECT_EQ(kernels, 1u);
  std::vector<uint32_t> y(256, 0xA5A5A5A5u), ry(256);
  ASSERT_EQ(run_on_backend(fusion, {{xs.data(), 512}, {zs.data(), 1024}}, {{y.data(), 1024}}), FST_OK)
      << fst_last_error_message();
  const void* inputs[] = {xs.data(), zs.data()};
  void* reference[] = {ry.data()};
  ASSERT_EQ(fst_graph_evaluate_reference(graph, inputs, 2, reference, 1), FST_OK) << fst_last_error_message();
  auto is_nan = [](uint32_t b) { return (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu) != 0; };
  for (size_t i = 0; i < 256; ++i) {
    const bool same = is_nan(ry[i]) ? is_nan(y[i]) && (y[i] >> 31) == (ry[i] >> 31) : y[i] == ry[i];
    EXPECT_TRUE(same) << "element " << i << ": got 0x" << std::hex << y[i] << ", reference 0x" << ry[i];
  }
}

}  // namespace
}  // namespace fstitch::testing
