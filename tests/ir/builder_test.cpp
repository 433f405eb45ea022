// Dtype and shape inference of every operation, and every error case of the builders.
#include <gtest/gtest.h>

#include <limits>

#include "ir/builder.hpp"
#include "ir/verify.hpp"
#include "support/error.hpp"

namespace fstitch {
namespace {

// Runs `body`, expecting an Error with `code` whose message contains `fragment`.
template <class Body>
void expect_error(StatusCode code, const std::string& fragment, Body&& body) {
  try {
    body();
    ADD_FAILURE() << "expected an error containing \"" << fragment << "\"";
  } catch (const Error& e) {
    EXPECT_EQ(static_cast<int>(e.code()), static_cast<int>(code)) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

const DType kAllDTypes[] = {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI8,
                            DType::kI32, DType::kI64, DType::kU8,   DType::kBool};

TEST(OpRegistry, HasAtLeastFortyOpsWithUniqueNames) {
  EXPECT_GE(kOpCount, 40);
  for (int i = 0; i < kOpCount; ++i) {
    auto kind = static_cast<OpKind>(i);
    auto parsed = parse_op_name(op_name(kind));
    ASSERT_TRUE(parsed.has_value()) << op_name(kind);
    EXPECT_EQ(*parsed, kind);
  }
  EXPECT_FALSE(parse_op_name("matmul").has_value());
}

TEST(OpRegistry, PublicEnumOrderMapsToFamilies) {
  EXPECT_EQ(*unary_op_from_index(0), OpKind::kNeg);
  EXPECT_EQ(*unary_op_from_index(20), OpKind::kLogicalNot);
  EXPECT_FALSE(unary_op_from_index(21).has_value());
  EXPECT_FALSE(unary_op_from_index(-1).has_value());
  EXPECT_EQ(*binary_op_from_index(0), OpKind::kAdd);
  EXPECT_EQ(*binary_op_from_index(14), OpKind::kLogicalOr);
  EXPECT_FALSE(binary_op_from_index(15).has_value());
  EXPECT_EQ(*reduce_op_from_index(0), OpKind::kReduceSum);
  EXPECT_EQ(*reduce_op_from_index(4), OpKind::kReduceProd);
  EXPECT_FALSE(reduce_op_from_index(5).has_value());
}

TEST(DTypes, SizesNamesAndClasses) {
  const size_t sizes[] = {4, 2, 2, 8, 1, 4, 8, 1, 1};
  const char* names[] = {"f32", "f16", "bf16", "f64", "i8", "i32", "i64", "u8", "bool"};
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(dtype_size(kAllDTypes[i]), sizes[i]);
    EXPECT_STREQ(dtype_name(kAllDTypes[i]), names[i]);
    EXPECT_EQ(*parse_dtype(names[i]), kAllDTypes[i]);
  }
  EXPECT_FALSE(parse_dtype("f8").has_value());
  EXPECT_FALSE(is_valid_dtype(0));
  EXPECT_FALSE(is_valid_dtype(10));
  EXPECT_TRUE(is_float(DType::kBF16));
  EXPECT_TRUE(is_integer(DType::kU8));
  EXPECT_FALSE(is_integer(DType::kBool));
  EXPECT_TRUE(is_signed_integer(DType::kI8));
  EXPECT_FALSE(is_signed_integer(DType::kU8));
}

TEST(Inputs, DeclareDtypeAndDims) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kBF16, {8, 4096});
  EXPECT_EQ(g.node(x).dtype, DType::kBF16);
  EXPECT_EQ(g.node(x).dims, (Dims{8, 4096}));
  ValueId s = build_input(g, "s", DType::kI64, {});
  EXPECT_TRUE(g.node(s).dims.empty());
  ValueId r8 = build_input(g, "r8", DType::kU8, {1, 2, 1, 2, 1, 2, 1, 2});
  EXPECT_EQ(g.node(r8).dims.size(), 8u);
  EXPECT_EQ(g.inputs(), (std::vector<ValueId>{x, s, r8}));
}

TEST(Inputs, Errors) {
  Graph g;
  build_input(g, "x", DType::kF32, {2});
  expect_error(StatusCode::kInvalidArgument, "already exists",
               [&] { build_input(g, "x", DType::kF32, {2}); });
  expect_error(StatusCode::kInvalidArgument, "empty", [&] { build_input(g, "", DType::kF32, {2}); });
  expect_error(StatusCode::kInvalidArgument, "printable", [&] { build_input(g, "a\"b", DType::kF32, {2}); });
  expect_error(StatusCode::kInvalidArgument, "printable", [&] { build_input(g, "a\nb", DType::kF32, {2}); });
  expect_error(StatusCode::kShape, "dim 1 = -3", [&] { build_input(g, "y", DType::kF32, {2, -3}); });
  expect_error(StatusCode::kUnsupported, "empty tensors", [&] { build_input(g, "y", DType::kF32, {0}); });
  expect_error(StatusCode::kShape, "maximum 8", [&] { build_input(g, "y", DType::kF32, Dims(9, 1)); });
  const int64_t big = int64_t{1} << 40;
  expect_error(StatusCode::kShape, "more elements than int64", [&] {
    build_input(g, "y", DType::kF32, {big, big});
  });
  EXPECT_EQ(g.size(), 1u) << "failed builders must leave the graph unchanged";
}

TEST(Constants, AreScalarsConvertedToTheirDtype) {
  Graph g;
  ValueId c = build_constant_f64(g, DType::kF16, 1.0 / 3.0);
  EXPECT_TRUE(g.node(c).dims.empty());
  EXPECT_EQ(g.node(c).value.f, f16_bits_to_f64(0x3555));
  ValueId i = build_constant_f64(g, DType::kI8, 300.7);
  EXPECT_EQ(g.node(i).value.i, 127);  // saturates
  ValueId w = build_constant_i64(g, DType::kU8, 257);
  EXPECT_EQ(g.node(w).value.i, 1);  // wraps
  ValueId b = build_constant_f64(g, DType::kBool, 0.5);
  EXPECT_EQ(g.node(b).value.i, 1);
  ValueId n = build_constant_f64(g, DType::kI32, std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(g.node(n).value.i, 0);
}

TEST(Unary, ResultTypesAndDtypeRules) {
  for (int k = 0; k < 21; ++k) {
    OpKind op = *unary_op_from_index(k);
    for (DType t : kAllDTypes) {
      Graph g;
      ValueId x = build_input(g, "x", t, {3, 5});
      if (dtype_accepted(op_dtype_rule(op), t)) {
        ValueId y = build_unary(g, op, x);
        EXPECT_EQ(g.node(y).dims, (Dims{3, 5}));
        EXPECT_EQ(g.node(y).dtype, op == OpKind::kLogicalNot ? DType::kBool : t) << op_name(op);
      } else {
        expect_error(StatusCode::kDtype, op_name(op), [&] { build_unary(g, op, x); });
      }
    }
  }
}

TEST(Unary, DtypeRulesAreThoseDocumented) {
  EXPECT_EQ(op_dtype_rule(OpKind::kExp), DTypeRule::kFloat);
  EXPECT_EQ(op_dtype_rule(OpKind::kRound), DTypeRule::kFloat);
  EXPECT_EQ(op_dtype_rule(OpKind::kNeg), DTypeRule::kNumeric);
  EXPECT_EQ(op_dtype_rule(OpKind::kSign), DTypeRule::kNumeric);
  EXPECT_EQ(op_dtype_rule(OpKind::kLogicalNot), DTypeRule::kAny);
}

TEST(Binary, BroadcastsNumpyStyleWithExplicitNodes) {
  Graph g;
  ValueId a = build_input(g, "a", DType::kF32, {4, 1, 6});
  ValueId b = build_input(g, "b", DType::kF32, {5, 1});
  ValueId c = build_binary(g, OpKind::kAdd, a, b);
  EXPECT_EQ(g.node(c).dims, (Dims{4, 5, 6}));
  const Node& add = g.node(c);
  ASSERT_EQ(add.operands.size(), 2u);
  EXPECT_EQ(g.node(add.operands[0]).op, OpKind::kBroadcast);
  EXPECT_EQ(g.node(add.operands[1]).op, OpKind::kBroadcast);
  EXPECT_EQ(g.node(add.operands[1]).dims, (Dims{4, 5, 6}));

  ValueId s = build_constant_f64(g, DType::kF32, 2.0);
  ValueId m = build_binary(g, OpKind::kMul, c, s);
  EXPECT_EQ(g.node(g.node(m).operands[0]).op, OpKind::kAdd) << "same shape: no broadcast node";
  EXPECT_EQ(g.node(g.node(m).operands[1]).op, OpKind::kBroadcast);
}

TEST(Binary, ComparisonsAndLogicalYieldBool) {
  const OpKind bool_ops[] = {OpKind::kEq, OpKind::kNe, OpKind::kLt,         OpKind::kLe,
                             OpKind::kGt, OpKind::kGe, OpKind::kLogicalAnd, OpKind::kLogicalOr};
  for (OpKind op : bool_ops) {
    Graph g;
    ValueId a = build_input(g, "a", DType::kI32, {7});
    ValueId b = build_input(g, "b", DType::kI32, {7});
    EXPECT_EQ(g.node(build_binary(g, op, a, b)).dtype, DType::kBool) << op_name(op);
  }
  Graph g;
  ValueId a = build_input(g, "a", DType::kF16, {7});
  EXPECT_EQ(g.node(build_binary(g, OpKind::kMax, a, a)).dtype, DType::kF16);
}

TEST(Binary, Errors) {
  Graph g;
  ValueId f = build_input(g, "f", DType::kF32, {4, 3});
  ValueId h = build_input(g, "h", DType::kF16, {4, 3});
  ValueId w = build_input(g, "w", DType::kF32, {4, 2});
  ValueId i = build_input(g, "i", DType::kI32, {4, 3});
  ValueId b = build_input(g, "b", DType::kBool, {4, 3});
  size_t before = g.size();
  expect_error(StatusCode::kDtype, "insert a cast", [&] { build_binary(g, OpKind::kAdd, f, h); });
  expect_error(StatusCode::kShape, "do not broadcast", [&] { build_binary(g, OpKind::kAdd, f, w); });
  expect_error(StatusCode::kDtype, "floating-point", [&] { build_binary(g, OpKind::kPow, i, i); });
  expect_error(StatusCode::kDtype, "not bool", [&] { build_binary(g, OpKind::kAdd, b, b); });
  expect_error(StatusCode::kInvalidArgument, "does not exist", [&] { build_binary(g, OpKind::kAdd, f, 99); });
  EXPECT_EQ(g.size(), before) << "a failed binary must not leave broadcast nodes behind";
}

TEST(Select, BroadcastsAllThree) {
  Graph g;
  ValueId c = build_input(g, "c", DType::kBool, {3, 1});
  ValueId a = build_input(g, "a", DType::kBF16, {1, 5});
  ValueId b = build_constant_f64(g, DType::kBF16, 0.0);
  ValueId s = build_select(g, c, a, b);
  EXPECT_EQ(g.node(s).dtype, DType::kBF16);
  EXPECT_EQ(g.node(s).dims, (Dims{3, 5}));
  expect_error(StatusCode::kDtype, "bool condition", [&] { build_select(g, a, a, a); });
  ValueId i = build_input(g, "i", DType::kI32, {3, 5});
  expect_error(StatusCode::kDtype, "one dtype", [&] { build_select(g, c, a, i); });
  ValueId wide = build_input(g, "wide", DType::kBF16, {4, 5});
  expect_error(StatusCode::kShape, "do not broadcast", [&] { build_select(g, c, a, wide); });
}

TEST(Cast, ChangesDtypeKeepsDims) {
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      Graph g;
      ValueId x = build_input(g, "x", from, {2, 3});
      ValueId y = build_cast(g, x, to);
      EXPECT_EQ(g.node(y).dtype, to);
      EXPECT_EQ(g.node(y).dims, (Dims{2, 3}));
    }
  }
}

TEST(Broadcast, RulesAndErrors) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {3, 1});
  ValueId y = build_broadcast(g, x, {2, 3, 4});
  EXPECT_EQ(g.node(y).dims, (Dims{2, 3, 4}));
  EXPECT_EQ(build_broadcast(g, x, {3, 1}), x) << "no-op broadcast adds no node";
  expect_error(StatusCode::kShape, "cannot broadcast", [&] { build_broadcast(g, x, {4, 4}); });
  expect_error(StatusCode::kShape, "cannot broadcast", [&] { build_broadcast(g, x, {3}); });
  expect_error(StatusCode::kShape, "dim 0 = -1", [&] { build_broadcast(g, x, {-1, 3, 4}); });
}

TEST(Reduce, AxesKeepdimsAndNegativeAxes) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {2, 3, 4, 5});
  ValueId a = build_reduce(g, OpKind::kReduceSum, x, {1, 3}, false);
  EXPECT_EQ(g.node(a).dims, (Dims{2, 4}));
  ValueId b = build_reduce(g, OpKind::kReduceMax, x, {-1, 0}, true);
  EXPECT_EQ(g.node(b).dims, (Dims{1, 3, 4, 1}));
  EXPECT_EQ(g.node(b).axes, (std::vector<int64_t>{0, 3}));
  ValueId all = build_reduce(g, OpKind::kReduceMean, x, {0, 1, 2, 3}, false);
  EXPECT_TRUE(g.node(all).dims.empty());
}

TEST(Reduce, DtypeRules) {
  Graph g;
  ValueId i = build_input(g, "i", DType::kI32, {4});
  ValueId b = build_input(g, "b", DType::kBool, {4});
  EXPECT_EQ(g.node(build_reduce(g, OpKind::kReduceSum, i, {0}, false)).dtype, DType::kI32);
  EXPECT_EQ(g.node(build_reduce(g, OpKind::kReduceMax, b, {0}, false)).dtype, DType::kBool);
  expect_error(StatusCode::kDtype, "floating-point",
               [&] { build_reduce(g, OpKind::kReduceMean, i, {0}, false); });
  expect_error(StatusCode::kDtype, "not bool", [&] { build_reduce(g, OpKind::kReduceSum, b, {0}, false); });
  expect_error(StatusCode::kDtype, "not bool", [&] { build_reduce(g, OpKind::kReduceProd, b, {0}, false); });
}

TEST(Reduce, Errors) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {2, 3});
  ValueId s = build_input(g, "s", DType::kF32, {});
  expect_error(StatusCode::kShape, "out of range",
               [&] { build_reduce(g, OpKind::kReduceSum, x, {2}, false); });
  expect_error(StatusCode::kShape, "out of range",
               [&] { build_reduce(g, OpKind::kReduceSum, x, {-3}, false); });
  expect_error(StatusCode::kShape, "repeated", [&] {
    build_reduce(g, OpKind::kReduceSum, x, {1, -1}, false);
  });
  expect_error(StatusCode::kShape, "at least one axis",
               [&] { build_reduce(g, OpKind::kReduceSum, x, {}, false); });
  expect_error(StatusCode::kShape, "out of range",
               [&] { build_reduce(g, OpKind::kReduceSum, s, {0}, false); });
}

TEST(Reshape, InfersMinusOneAndChecksCounts) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kI8, {4, 6});
  EXPECT_EQ(g.node(build_reshape(g, x, {2, -1, 3})).dims, (Dims{2, 4, 3}));
  EXPECT_EQ(g.node(build_reshape(g, x, {24})).dims, (Dims{24}));
  expect_error(StatusCode::kShape, "cannot reshape", [&] { build_reshape(g, x, {5, 5}); });
  expect_error(StatusCode::kShape, "more than one -1", [&] { build_reshape(g, x, {-1, -1}); });
  expect_error(StatusCode::kShape, "not divisible", [&] { build_reshape(g, x, {5, -1}); });
  expect_error(StatusCode::kShape, "dim 0 = -2", [&] { build_reshape(g, x, {-2, -12}); });
}

TEST(Permute, ReordersDims) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF64, {2, 3, 4});
  EXPECT_EQ(g.node(build_permute(g, x, {2, 0, 1})).dims, (Dims{4, 2, 3}));
  expect_error(StatusCode::kShape, "has rank 3", [&] { build_permute(g, x, {1, 0}); });
  expect_error(StatusCode::kShape, "not a permutation", [&] { build_permute(g, x, {0, 0, 1}); });
  expect_error(StatusCode::kShape, "not a permutation", [&] { build_permute(g, x, {0, 1, 3}); });
  expect_error(StatusCode::kShape, "not a permutation", [&] { build_permute(g, x, {0, -1, 2}); });
}

TEST(Iota, ShapeAxisAndDtype) {
  Graph g;
  ValueId i = build_iota(g, DType::kI32, {4, 5}, 1);
  EXPECT_EQ(g.node(i).dims, (Dims{4, 5}));
  EXPECT_EQ(g.node(i).axis, 1);
  expect_error(StatusCode::kShape, "out of range", [&] { build_iota(g, DType::kI32, {4, 5}, 2); });
  expect_error(StatusCode::kShape, "out of range", [&] { build_iota(g, DType::kI32, {4, 5}, -1); });
  expect_error(StatusCode::kDtype, "not bool", [&] { build_iota(g, DType::kBool, {4}, 0); });
  expect_error(StatusCode::kShape, "rank at least 1", [&] { build_iota(g, DType::kF32, {}, 0); });
}

TEST(Opaque, DeclaredTypeAndNameRules) {
  Graph g;
  ValueId a = build_input(g, "a", DType::kBF16, {8, 16});
  ValueId b = build_input(g, "b", DType::kBF16, {16, 4});
  ValueId m = build_opaque(g, "matmul", {a, b}, DType::kF32, {8, 4});
  EXPECT_EQ(g.node(m).dtype, DType::kF32);
  EXPECT_EQ(g.node(m).operands, (std::vector<ValueId>{a, b}));
  build_opaque(g, "random.normal-2", {}, DType::kF32, {3});
  expect_error(StatusCode::kInvalidArgument, "only letters",
               [&] { build_opaque(g, "mat mul", {a}, DType::kF32, {1}); });
  expect_error(StatusCode::kInvalidArgument, "empty", [&] { build_opaque(g, "", {a}, DType::kF32, {1}); });
  expect_error(StatusCode::kShape, "dim 0", [&] { build_opaque(g, "x", {a}, DType::kF32, {-4}); });
}

TEST(Outputs, NamesAreUniqueAndValuesMayRepeat) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {2});
  build_output(g, "x_again", x);
  build_output(g, "y", x);
  EXPECT_EQ(g.outputs().size(), 2u);
  expect_error(StatusCode::kInvalidArgument, "already exists", [&] { build_output(g, "y", x); });
  expect_error(StatusCode::kInvalidArgument, "empty", [&] { build_output(g, "", x); });
  expect_error(StatusCode::kInvalidArgument, "does not exist", [&] { build_output(g, "z", 7); });
}

TEST(Verifier, AcceptsBuiltGraphsAndRejectsBrokenOnes) {
  Graph g;
  ValueId x = build_input(g, "x", DType::kF32, {2, 3});
  ValueId s = build_reduce(g, OpKind::kReduceSum, x, {1}, true);
  ValueId y = build_binary(g, OpKind::kSub, x, s);
  expect_error(StatusCode::kInvalidArgument, "no outputs", [&] { verify_graph(g); });
  build_output(g, "y", y);
  EXPECT_NO_THROW(verify_graph(g));

  Graph broken = g;
  // A node whose recorded type disagrees with its operation.
  Node bad = g.node(s);
  bad.dims = {2, 3};
  Graph mismatch;
  ValueId mx = build_input(mismatch, "x", DType::kF32, {2, 3});
  mismatch.append(bad);
  mismatch.add_output("o", mx);
  expect_error(StatusCode::kInternal, "yields f32[2,1]", [&] { verify_graph(mismatch); });

  // A node using a value defined after it.
  Graph forward;
  Node neg;
  neg.op = OpKind::kNeg;
  neg.operands = {1};
  neg.dtype = DType::kF32;
  neg.dims = {2};
  forward.append(neg);
  build_input(forward, "x", DType::kF32, {2});
  forward.add_output("o", 0);
  expect_error(StatusCode::kInternal, "not defined before", [&] { verify_graph(forward); });

  // Duplicate output names smuggled past the builder.
  broken.add_output("y", y);
  expect_error(StatusCode::kInvalidArgument, "two outputs", [&] { verify_graph(broken); });
}

TEST(Shapes, Helpers) {
  EXPECT_EQ(dims_to_string({}), "[]");
  EXPECT_EQ(dims_to_string({8, 16}), "[8,16]");
  EXPECT_EQ(row_major_strides({2, 3, 4}), (Dims{12, 4, 1}));
  EXPECT_EQ(element_count({}), 1);
  EXPECT_EQ(broadcast_dims({3, 1}, {4}), (Dims{3, 4}));
  EXPECT_EQ(broadcast_dims({}, {2, 2}), (Dims{2, 2}));
}

}  // namespace
}  // namespace fstitch
