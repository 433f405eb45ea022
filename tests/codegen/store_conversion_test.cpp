// Stores keep the host conversion rules bit for bit: a bf16 NaN written unchanged (moved, not
// computed on) comes out quiet with its sign and payload, an f16 NaN as the quiet NaN of its
// sign, whatever shortcut the store of an already rounded value takes. Run through the C API
// on the host backend.
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
#include "ir/text.hpp"

namespace fstitch::testing {
namespace {

// y = the transpose of x [2, 4]: a kernel that loads and stores every element unchanged.
std::vector<uint16_t> transpose_bits(DType dtype, const std::vector<uint16_t>& x) {
  Graph g;
  build_output(g, "y", build_permute(g, build_input(g, "x", dtype, {2, 4}), {1, 0}));
  const std::string text = print_graph(g);
  ContextHandle context = host_backend_context();
  fst_graph* raw_graph = nullptr;
  EXPECT_EQ(fst_graph_parse(context.get(), text.c_str(), text.size(), &raw_graph), FST_OK)
      << fst_last_error_message();
  GraphHandle graph(raw_graph);
  fst_fusion* raw_fusion = nullptr;
  EXPECT_EQ(fst_fuse(graph.get(), nullptr, &raw_fusion), FST_OK) << fst_last_error_message();
  FusionHandle fusion(raw_fusion);
  std::vector<uint16_t> input = x, y(x.size(), 0);
  EXPECT_EQ(run_on_backend(fusion.get(), {{input.data(), input.size() * 2}}, {{y.data(), y.size() * 2}}),
            FST_OK)
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

}  // namespace
}  // namespace fstitch::testing
