// The reference evaluator reads a tensor constant's data in its storage dtype.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "ir/builder.hpp"
#include "ref/evaluator.hpp"

namespace fstitch {
namespace {

template <class T>
TensorData data_of(const std::vector<T>& values) {
  auto bytes = std::make_shared<std::vector<uint8_t>>(values.size() * sizeof(T));
  std::memcpy(bytes->data(), values.data(), bytes->size());
  return bytes;
}

TEST(ReferenceTensorConstant, FeedsElementwiseOperationsWithBroadcasting) {
  Graph g;
  const ValueId x = build_input(g, "x", DType::kF32, {2, 3});
  const ValueId c = build_tensor_constant(g, DType::kF32, {3}, data_of<float>({10, 20, 30}));
  build_output(g, "y", build_binary(g, OpKind::kAdd, x, c));
  const std::vector<float> in{1, 2, 3, 4, 5, 6};
  std::vector<float> out(6, -1);
  evaluate_reference(g, {in.data()}, {out.data()});
  EXPECT_EQ(out, (std::vector<float>{11, 22, 33, 14, 25, 36}));
}

TEST(ReferenceTensorConstant, ReadsHalfPrecisionBoolAndIntegerData) {
  Graph g;
  const ValueId h =
      build_tensor_constant(g, DType::kBF16, {2}, data_of<uint16_t>({0x3f80, 0xc000}));  // 1, -2
  const ValueId mask = build_tensor_constant(g, DType::kBool, {2}, data_of<uint8_t>({1, 0}));
  const ValueId ids = build_tensor_constant(g, DType::kI64, {2}, data_of<int64_t>({7, -9}));
  build_output(g, "sum", build_reduce(g, OpKind::kReduceSum, build_cast(g, h, DType::kF32), {0}, false));
  build_output(
      g, "masked",
      build_select(g, mask, build_cast(g, ids, DType::kF32), build_constant_f64(g, DType::kF32, 0.5)));
  build_output(g, "ids", ids);
  float sum = 0;
  std::vector<float> masked(2);
  std::vector<int64_t> out_ids(2);
  evaluate_reference(g, {}, {&sum, masked.data(), out_ids.data()});
  EXPECT_EQ(sum, -1.0f);
  EXPECT_EQ(masked, (std::vector<float>{7, 0.5f}));
  EXPECT_EQ(out_ids, (std::vector<int64_t>{7, -9}));
}

}  // namespace
}  // namespace fstitch
