// The operation registry: every operation kind, its family, its text name and which
// dtypes it accepts. Shape and dtype inference live in infer.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "ir/dtype.hpp"

namespace fstitch {

// X-macro lists keep the enum, the names and the public enums in one place.
// Columns: enumerator, text name, accepted dtypes.
#define FSTITCH_UNARY_OPS(X)                      \
  X(kNeg, "neg", DTypeRule::kNumeric)             \
  X(kAbs, "abs", DTypeRule::kNumeric)             \
  X(kExp, "exp", DTypeRule::kFloat)               \
  X(kLog, "log", DTypeRule::kFloat)               \
  X(kSqrt, "sqrt", DTypeRule::kFloat)             \
  X(kRsqrt, "rsqrt", DTypeRule::kFloat)           \
  X(kReciprocal, "reciprocal", DTypeRule::kFloat) \
  X(kTanh, "tanh", DTypeRule::kFloat)             \
  X(kSigmoid, "sigmoid", DTypeRule::kFloat)       \
  X(kRelu, "relu", DTypeRule::kNumeric)           \
  X(kGelu, "gelu", DTypeRule::kFloat)             \
  X(kGeluTanh, "gelu_tanh", DTypeRule::kFloat)    \
  X(kSilu, "silu", DTypeRule::kFloat)             \
  X(kErf, "erf", DTypeRule::kFloat)               \
  X(kSin, "sin", DTypeRule::kFloat)               \
  X(kCos, "cos", DTypeRule::kFloat)               \
  X(kFloor, "floor", DTypeRule::kFloat)           \
  X(kCeil, "ceil", DTypeRule::kFloat)             \
  X(kRound, "round", DTypeRule::kFloat)           \
  X(kSign, "sign", DTypeRule::kNumeric)           \
  X(kLogicalNot, "logical_not", DTypeRule::kAny)

#define FSTITCH_BINARY_OPS(X)                    \
  X(kAdd, "add", DTypeRule::kNumeric)            \
  X(kSub, "sub", DTypeRule::kNumeric)            \
  X(kMul, "mul", DTypeRule::kNumeric)            \
  X(kDiv, "div", DTypeRule::kNumeric)            \
  X(kPow, "pow", DTypeRule::kFloat)              \
  X(kMax, "max", DTypeRule::kAny)                \
  X(kMin, "min", DTypeRule::kAny)                \
  X(kEq, "eq", DTypeRule::kAny)                  \
  X(kNe, "ne", DTypeRule::kAny)                  \
  X(kLt, "lt", DTypeRule::kAny)                  \
  X(kLe, "le", DTypeRule::kAny)                  \
  X(kGt, "gt", DTypeRule::kAny)                  \
  X(kGe, "ge", DTypeRule::kAny)                  \
  X(kLogicalAnd, "logical_and", DTypeRule::kAny) \
  X(kLogicalOr, "logical_or", DTypeRule::kAny)

#define FSTITCH_REDUCE_OPS(X)                      \
  X(kReduceSum, "reduce_sum", DTypeRule::kNumeric) \
  X(kReduceMean, "reduce_mean", DTypeRule::kFloat) \
  X(kReduceMax, "reduce_max", DTypeRule::kAny)     \
  X(kReduceMin, "reduce_min", DTypeRule::kAny)     \
  X(kReduceProd, "reduce_prod", DTypeRule::kNumeric)

#define FSTITCH_OTHER_OPS(X)                  \
  X(kInput, "input", DTypeRule::kAny)         \
  X(kConstant, "constant", DTypeRule::kAny)   \
  X(kSelect, "select", DTypeRule::kAny)       \
  X(kCast, "cast", DTypeRule::kAny)           \
  X(kBroadcast, "broadcast", DTypeRule::kAny) \
  X(kReshape, "reshape", DTypeRule::kAny)     \
  X(kPermute, "permute", DTypeRule::kAny)     \
  X(kIota, "iota", DTypeRule::kNumeric)       \
  X(kOpaque, "opaque", DTypeRule::kAny)       \
  X(kSlice, "slice", DTypeRule::kAny)         \
  X(kConcat, "concat", DTypeRule::kAny)       \
  X(kPad, "pad", DTypeRule::kAny)             \
  X(kTake, "take", DTypeRule::kAny)           \
  X(kTensor, "tensor", DTypeRule::kAny)

// Which operand dtypes an operation accepts.
enum class DTypeRule : uint8_t {
  kAny,      // every dtype
  kNumeric,  // every dtype but bool
  kFloat,    // f32, f16, bf16, f64
};

enum class OpKind : uint8_t {
#define FSTITCH_ENUM(name, text, rule) name,
  FSTITCH_UNARY_OPS(FSTITCH_ENUM) FSTITCH_BINARY_OPS(FSTITCH_ENUM) FSTITCH_REDUCE_OPS(FSTITCH_ENUM)
      FSTITCH_OTHER_OPS(FSTITCH_ENUM)
#undef FSTITCH_ENUM
          kCount
};

enum class OpFamily : uint8_t {
  kUnary,
  kBinary,
  kReduce,
  kInput,
  kConstant,
  kSelect,
  kCast,
  kBroadcast,
  kReshape,
  kPermute,
  kIota,
  kOpaque,
  kSlice,  // data movement: every element comes from one operand element (or a pad value)
  kConcat,
  kPad,
  kTake,
  kTensor  // a constant tensor from host data (Node::data)
};

constexpr int kOpCount = static_cast<int>(OpKind::kCount);

OpFamily op_family(OpKind kind);
const char* op_name(OpKind kind);
DTypeRule op_dtype_rule(OpKind kind);
std::optional<OpKind> parse_op_name(std::string_view name);
bool dtype_accepted(DTypeRule rule, DType dtype);
const char* dtype_rule_description(DTypeRule rule);

// Ops whose result is bool whatever the operand dtype.
bool op_yields_bool(OpKind kind);

// The k-th member of a family in public-enum order (public value = k + 1); nullopt if
// out of range. Used by the C boundary to map fst_unary_op / fst_binary_op / fst_reduce_op.
std::optional<OpKind> unary_op_from_index(int k);
std::optional<OpKind> binary_op_from_index(int k);
std::optional<OpKind> reduce_op_from_index(int k);

}  // namespace fstitch
