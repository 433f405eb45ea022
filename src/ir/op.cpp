#include "ir/op.hpp"

namespace fstitch {
namespace {

struct OpInfo {
  OpKind kind;
  const char* name;
  DTypeRule rule;
  OpFamily family;
};

const OpInfo kOps[] = {
#define FSTITCH_UNARY(name, text, rule) {OpKind::name, text, rule, OpFamily::kUnary},
    FSTITCH_UNARY_OPS(FSTITCH_UNARY)
#undef FSTITCH_UNARY
#define FSTITCH_BINARY(name, text, rule) {OpKind::name, text, rule, OpFamily::kBinary},
        FSTITCH_BINARY_OPS(FSTITCH_BINARY)
#undef FSTITCH_BINARY
#define FSTITCH_REDUCE(name, text, rule) {OpKind::name, text, rule, OpFamily::kReduce},
            FSTITCH_REDUCE_OPS(FSTITCH_REDUCE)
#undef FSTITCH_REDUCE
                {OpKind::kInput, "input", DTypeRule::kAny, OpFamily::kInput},
    {OpKind::kConstant, "constant", DTypeRule::kAny, OpFamily::kConstant},
    {OpKind::kSelect, "select", DTypeRule::kAny, OpFamily::kSelect},
    {OpKind::kCast, "cast", DTypeRule::kAny, OpFamily::kCast},
    {OpKind::kBroadcast, "broadcast", DTypeRule::kAny, OpFamily::kBroadcast},
    {OpKind::kReshape, "reshape", DTypeRule::kAny, OpFamily::kReshape},
    {OpKind::kPermute, "permute", DTypeRule::kAny, OpFamily::kPermute},
    {OpKind::kIota, "iota", DTypeRule::kNumeric, OpFamily::kIota},
    {OpKind::kOpaque, "opaque", DTypeRule::kAny, OpFamily::kOpaque},
    {OpKind::kSlice, "slice", DTypeRule::kAny, OpFamily::kSlice},
    {OpKind::kConcat, "concat", DTypeRule::kAny, OpFamily::kConcat},
    {OpKind::kPad, "pad", DTypeRule::kAny, OpFamily::kPad},
    {OpKind::kTake, "take", DTypeRule::kAny, OpFamily::kTake},
    {OpKind::kTensor, "tensor", DTypeRule::kAny, OpFamily::kTensor},
};

static_assert(sizeof(kOps) / sizeof(kOps[0]) == static_cast<size_t>(kOpCount), "op table incomplete");

const OpInfo& info(OpKind kind) {
  return kOps[static_cast<int>(kind)];
}

constexpr int kUnaryCount = 0
#define FSTITCH_COUNT(name, text, rule) +1
    FSTITCH_UNARY_OPS(FSTITCH_COUNT);
constexpr int kBinaryCount = 0 FSTITCH_BINARY_OPS(FSTITCH_COUNT);
constexpr int kReduceCount = 0 FSTITCH_REDUCE_OPS(FSTITCH_COUNT);
#undef FSTITCH_COUNT

}  // namespace

OpFamily op_family(OpKind kind) {
  return info(kind).family;
}
const char* op_name(OpKind kind) {
  return info(kind).name;
}
DTypeRule op_dtype_rule(OpKind kind) {
  return info(kind).rule;
}

std::optional<OpKind> parse_op_name(std::string_view name) {
  for (const OpInfo& op : kOps) {
    if (name == op.name) return op.kind;
  }
  return std::nullopt;
}

bool dtype_accepted(DTypeRule rule, DType dtype) {
  switch (rule) {
    case DTypeRule::kAny:
      return true;
    case DTypeRule::kNumeric:
      return !is_bool(dtype);
    case DTypeRule::kFloat:
      return is_float(dtype);
  }
  return false;
}

const char* dtype_rule_description(DTypeRule rule) {
  switch (rule) {
    case DTypeRule::kAny:
      return "any dtype";
    case DTypeRule::kNumeric:
      return "a numeric dtype (not bool)";
    case DTypeRule::kFloat:
      return "a floating-point dtype (f32, f16, bf16, f64)";
  }
  return "?";
}

bool op_yields_bool(OpKind kind) {
  switch (kind) {
    case OpKind::kLogicalNot:
    case OpKind::kEq:
    case OpKind::kNe:
    case OpKind::kLt:
    case OpKind::kLe:
    case OpKind::kGt:
    case OpKind::kGe:
    case OpKind::kLogicalAnd:
    case OpKind::kLogicalOr:
      return true;
    default:
      return false;
  }
}

std::optional<OpKind> unary_op_from_index(int k) {
  if (k < 0 || k >= kUnaryCount) return std::nullopt;
  return static_cast<OpKind>(k);
}

std::optional<OpKind> binary_op_from_index(int k) {
  if (k < 0 || k >= kBinaryCount) return std::nullopt;
  return static_cast<OpKind>(kUnaryCount + k);
}

std::optional<OpKind> reduce_op_from_index(int k) {
  if (k < 0 || k >= kReduceCount) return std::nullopt;
  return static_cast<OpKind>(kUnaryCount + kBinaryCount + k);
}

}  // namespace fstitch
