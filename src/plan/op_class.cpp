#include "plan/op_class.hpp"

namespace fstitch {

bool result_has_canonical_nan(OpKind kind) {
  return kind == OpKind::kAdd || kind == OpKind::kSub || kind == OpKind::kMul;
}

double op_compute_weight(OpKind kind) {
  switch (kind) {
    case OpKind::kExp:
    case OpKind::kLog:
    case OpKind::kTanh:
    case OpKind::kSigmoid:
    case OpKind::kSilu:
    case OpKind::kErf:
    case OpKind::kSin:
    case OpKind::kCos:
    case OpKind::kSqrt:
    case OpKind::kRsqrt:
      return 8;
    case OpKind::kGelu:
    case OpKind::kGeluTanh:
    case OpKind::kPow:
      return 16;
    case OpKind::kDiv:
    case OpKind::kReciprocal:
      return 4;
    default:
      return 1;
  }
}

OpClass classify(const Graph& graph, ValueId id) {
  const Node& n = graph.node(id);
  switch (op_family(n.op)) {
    case OpFamily::kInput:
    case OpFamily::kConstant:
    case OpFamily::kTensor:
    case OpFamily::kIota:
      return OpClass::kSource;
    case OpFamily::kOpaque:
      return OpClass::kOpaque;
    case OpFamily::kBroadcast:
      return OpClass::kBroadcast;
    case OpFamily::kReshape:
    case OpFamily::kPermute:
    case OpFamily::kSlice:
    case OpFamily::kConcat:
    case OpFamily::kPad:
    case OpFamily::kTake:
      return OpClass::kLayout;
    case OpFamily::kReduce: {
      const size_t rank = graph.node(n.operands[0]).dims.size();
      // Innermost axes reduced (a contiguous suffix) make a row reduction.
      for (size_t i = 0; i < n.axes.size(); ++i) {
        if (n.axes[n.axes.size() - 1 - i] != static_cast<int64_t>(rank - 1 - i))
          return OpClass::kColumnReduction;
      }
      return OpClass::kRowReduction;
    }
    default:
      return op_compute_weight(n.op) > 4 ? OpClass::kExpensiveElementwise : OpClass::kLightElementwise;
  }
}

const char* op_class_name(OpClass c) {
  switch (c) {
    case OpClass::kSource:
      return "source";
    case OpClass::kLightElementwise:
      return "light elementwise";
    case OpClass::kExpensiveElementwise:
      return "expensive elementwise";
    case OpClass::kBroadcast:
      return "broadcast";
    case OpClass::kLayout:
      return "layout";
    case OpClass::kRowReduction:
      return "row reduction";
    case OpClass::kColumnReduction:
      return "column reduction";
    case OpClass::kOpaque:
      return "opaque";
  }
  return "?";
}

}  // namespace fstitch
