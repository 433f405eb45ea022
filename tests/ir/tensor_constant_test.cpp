// Tensor constants in the IR: the builder's checks, the text format (every dtype, exact bit
// patterns, errors at the right place) and how graphs share the data.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ir/builder.hpp"
#include "ir/text.hpp"
#include "ir/verify.hpp"
#include "support/error.hpp"

namespace fstitch {
namespace {

TensorData bytes_of(std::vector<uint8_t> bytes) {
  return std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
}

template <class T>
TensorData data_of(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes_of(std::move(bytes));
}

StatusCode build_error(DType dtype, const Dims& dims, TensorData data, std::string* message = nullptr) {
  Graph g;
  try {
    build_tensor_constant(g, dtype, dims, std::move(data));
  } catch (const Error& e) {
    EXPECT_EQ(g.size(), 0u) << "a failing builder leaves the graph unchanged";
    if (message) *message = e.what();
    return e.code();
  }
  return StatusCode::kOk;
}

TEST(TensorConstantBuilder, BuildsAValueOfTheGivenTypeSharingTheData) {
  Graph g;
  const TensorData data = data_of<float>({1, 2, 3, 4, 5, 6});
  const ValueId c = build_tensor_constant(g, DType::kF32, {2, 3}, data);
  EXPECT_EQ(g.node(c).op, OpKind::kTensor);
  EXPECT_EQ(g.node(c).dtype, DType::kF32);
  EXPECT_EQ(g.node(c).dims, (Dims{2, 3}));
  EXPECT_EQ(g.node(c).data.get(), data.get());
  build_output(g, "c", c);
  const Graph copy = g;  // copying a graph shares the bytes
  EXPECT_EQ(copy.node(c).data.get(), data.get());
  EXPECT_NO_THROW(verify_graph(g));
}

TEST(TensorConstantBuilder, RejectsAByteCountThatDoesNotMatch) {
  std::string message;
  EXPECT_EQ(build_error(DType::kF32, {2, 3}, data_of<float>({1, 2, 3, 4, 5}), &message),
            StatusCode::kInvalidArgument);
  EXPECT_NE(message.find("needs 24 bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("got 20"), std::string::npos) << message;
  EXPECT_EQ(build_error(DType::kF16, {3}, data_of<float>({1, 2, 3})), StatusCode::kInvalidArgument);
  EXPECT_EQ(build_error(DType::kI8, {2}, bytes_of({})), StatusCode::kInvalidArgument);
}

TEST(TensorConstantBuilder, RejectsMissingDataAndBadDims) {
  EXPECT_EQ(build_error(DType::kF32, {1}, nullptr), StatusCode::kInvalidArgument);
  EXPECT_EQ(build_error(DType::kF32, {0}, bytes_of({})), StatusCode::kUnsupported);  // as for every value
  EXPECT_EQ(build_error(DType::kF32, {-1}, bytes_of({})), StatusCode::kShape);
  EXPECT_EQ(build_error(DType::kU8, Dims(kMaxRank + 1, 1), bytes_of({1})), StatusCode::kShape);
  // More than kMaxValueBytes: refused before the byte count is even compared.
  EXPECT_EQ(build_error(DType::kF64, {int64_t{1} << 31, int64_t{1} << 31}, bytes_of({})), StatusCode::kShape);
}

TEST(TensorConstantBuilder, BoolDataMustBeZeroOrOne) {
  std::string message;
  EXPECT_EQ(build_error(DType::kBool, {3}, bytes_of({0, 1, 2}), &message), StatusCode::kInvalidArgument);
  EXPECT_NE(message.find("element 2 is byte 2"), std::string::npos) << message;
  EXPECT_EQ(build_error(DType::kBool, {1}, bytes_of({0xff})), StatusCode::kInvalidArgument);
  EXPECT_EQ(build_error(DType::kBool, {2}, bytes_of({1, 0})), StatusCode::kOk);
}

TEST(TensorConstantBuilder, ScalarTensorIsAllowed) {
  EXPECT_EQ(build_error(DType::kI64, {}, data_of<int64_t>({-7})), StatusCode::kOk);
}

// ---- text format

TEST(TensorConstantText, PrintsIntegersInDecimalAndFloatsAsBitPatterns) {
  Graph g;
  build_tensor_constant(g, DType::kI32, {2, 2}, data_of<int32_t>({1, -2, 2147483647, -2147483647 - 1}));
  build_tensor_constant(g, DType::kF32, {3}, data_of<float>({1.0f, -0.0f, 0.5f}));
  build_tensor_constant(g, DType::kF16, {2}, data_of<uint16_t>({0x3c00, 0x7e01}));
  build_tensor_constant(g, DType::kBool, {2}, bytes_of({1, 0}));
  build_tensor_constant(g, DType::kF64, {}, data_of<double>({1.0}));
  EXPECT_EQ(print_graph(g),
            "fstitch.graph 1\n"
            "%0 = tensor [1, -2, 2147483647, -2147483648] : i32[2,2]\n"
            "%1 = tensor [0x3f800000, 0x80000000, 0x3f000000] : f32[3]\n"
            "%2 = tensor [0x3c00, 0x7e01] : f16[2]\n"
            "%3 = tensor [true, false] : bool[2]\n"
            "%4 = tensor [0x3ff0000000000000] : f64\n");
}

// Every dtype, with the values that are easiest to lose: extremes, NaN payloads of both
// signs, infinities, -0 and subnormals.
TEST(TensorConstantText, EveryDtypeRoundTripsBitExactly) {
  Graph g;
  build_tensor_constant(
      g, DType::kF32, {6},
      data_of<uint32_t>({0x7fc00001, 0xffc00000, 0x7f800000, 0xff800000, 0x80000000, 0x00000001}));
  build_tensor_constant(g, DType::kF16, {5}, data_of<uint16_t>({0x7c01, 0xfe00, 0x7c00, 0x8000, 0x0001}));
  build_tensor_constant(g, DType::kBF16, {5}, data_of<uint16_t>({0x7fc1, 0xff80, 0x7f80, 0x8000, 0x3f80}));
  build_tensor_constant(
      g, DType::kF64, {4},
      data_of<uint64_t>({0x7ff0000000000001, 0xfff8000000000000, 0x8000000000000000, 0x3fb999999999999a}));
  build_tensor_constant(g, DType::kI8, {3}, data_of<int8_t>({-128, 0, 127}));
  build_tensor_constant(g, DType::kU8, {3}, data_of<uint8_t>({0, 128, 255}));
  build_tensor_constant(g, DType::kI32, {2}, data_of<int32_t>({-2147483647 - 1, 2147483647}));
  build_tensor_constant(g, DType::kI64, {2}, data_of<int64_t>({INT64_MIN, INT64_MAX}));
  build_tensor_constant(g, DType::kBool, {3}, bytes_of({0, 1, 1}));
  build_output(g, "y", 0);
  const std::string text = print_graph(g);
  const Graph parsed = parse_graph(text);
  ASSERT_EQ(parsed.size(), g.size());
  for (size_t i = 0; i < g.size(); ++i) {
    const Node& a = g.node(static_cast<ValueId>(i));
    const Node& b = parsed.node(static_cast<ValueId>(i));
    SCOPED_TRACE(dtype_name(a.dtype));
    EXPECT_EQ(b.op, OpKind::kTensor);
    EXPECT_EQ(b.dtype, a.dtype);
    EXPECT_EQ(b.dims, a.dims);
    ASSERT_TRUE(b.data);
    EXPECT_EQ(*b.data, *a.data);
  }
  EXPECT_EQ(print_graph(parsed), text);
}

TEST(TensorConstantText, AcceptsDecimalFloatsAndShortBitPatterns) {
  const Graph g = parse_graph("fstitch.graph 1\n%c = tensor [0.1, -2, 1e3, 0x1] : f32[4]\n");
  std::vector<float> values(4);
  std::memcpy(values.data(), g.node(0).data->data(), 16);
  EXPECT_EQ(values[0], 0.1f);
  EXPECT_EQ(values[1], -2.0f);
  EXPECT_EQ(values[2], 1000.0f);
  uint32_t bits;
  std::memcpy(&bits, &values[3], 4);
  EXPECT_EQ(bits, 1u);
}

StatusCode parse_error(const std::string& line, std::string* message) {
  try {
    parse_graph("fstitch.graph 1\n" + line + "\n");
  } catch (const Error& e) {
    *message = e.what();
    return e.code();
  }
  return StatusCode::kOk;
}

TEST(TensorConstantText, ErrorsNameTheElementOrTheType) {
  std::string m;
  EXPECT_EQ(parse_error("%c = tensor [1, 2] : f32[3]", &m), StatusCode::kShape);
  EXPECT_NE(m.find("line 2, column 22"), std::string::npos) << m;
  EXPECT_NE(m.find("has 2 element(s)"), std::string::npos) << m;
  EXPECT_EQ(parse_error("%c = tensor [1, 300] : u8[2]", &m), StatusCode::kParse);
  EXPECT_NE(m.find("column 17"), std::string::npos) << m;
  EXPECT_NE(m.find("from 0 to 255"), std::string::npos) << m;
  EXPECT_EQ(parse_error("%c = tensor [0x123456789] : f32[1]", &m), StatusCode::kParse);  // too many digits
  EXPECT_EQ(parse_error("%c = tensor [1] : bool[1]", &m), StatusCode::kParse);
  EXPECT_EQ(parse_error("%c = tensor [nan] : f32[1]", &m), StatusCode::kParse);
  EXPECT_EQ(parse_error("%c = tensor [1.5] : i32[1]", &m), StatusCode::kParse);
  EXPECT_EQ(parse_error("%c = tensor [1 2] : i32[2]", &m), StatusCode::kParse);
  EXPECT_EQ(parse_error("%c = tensor 1 : i32", &m), StatusCode::kParse);
  EXPECT_EQ(parse_error("%c = tensor [1, ] : i32[2]", &m), StatusCode::kParse);
  EXPECT_EQ(parse_error("%c = tensor [] : i32[0]", &m), StatusCode::kUnsupported);
  // A huge type with few elements fails on the count, without allocating the type's size.
  EXPECT_EQ(parse_error("%c = tensor [1] : u8[1000000000000]", &m), StatusCode::kShape);
}

TEST(TensorConstantText, LargeConstantsPrintAndParseInLinearTime) {
  // 2^20 elements: a quadratic printer or parser would take minutes, a linear one well under
  // a second even in a debug build.
  std::vector<float> values(size_t{1} << 20);
  for (size_t k = 0; k < values.size(); ++k) values[k] = static_cast<float>(k) * 0.25f;
  Graph g;
  build_tensor_constant(g, DType::kF32, {1024, 1024}, data_of(values));
  const std::string text = print_graph(g);
  const Graph parsed = parse_graph(text);
  EXPECT_EQ(*parsed.node(0).data, *g.node(0).data);
}

}  // namespace
}  // namespace fstitch
