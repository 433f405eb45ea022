// The C boundary's internal helpers, on paths the public API cannot reach on demand:
// every kind of exception becomes a status and a message, and fst_value encoding tells
// graphs and values apart.
#include <gtest/gtest.h>

#include <memory>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/handles.hpp"

namespace fstitch::api {
namespace {

TEST(Guarded, SuccessReturnsOkAndKeepsTheLastError) {
  set_last_error(FST_ERROR_SHAPE, "earlier failure");
  EXPECT_EQ(guarded("fst_example", [] {}), FST_OK);
  EXPECT_EQ(fst_last_error_status(), FST_ERROR_SHAPE);
  EXPECT_STREQ(fst_last_error_message(), "earlier failure");
}

TEST(Guarded, ErrorKeepsItsCodeAndIsPrefixedWithTheFunction) {
  EXPECT_EQ(guarded("fst_example", [] { fail(StatusCode::kDtype, "x is i32"); }), FST_ERROR_DTYPE);
  EXPECT_EQ(fst_last_error_status(), FST_ERROR_DTYPE);
  EXPECT_STREQ(fst_last_error_message(), "fst_example: x is i32");
}

TEST(Guarded, BadAllocBecomesOutOfMemory) {
  EXPECT_EQ(guarded("fst_example", [] { throw std::bad_alloc(); }), FST_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(fst_last_error_status(), FST_ERROR_OUT_OF_MEMORY);
  EXPECT_STREQ(fst_last_error_message(), "fst_example: out of memory");
}

TEST(Guarded, OtherStandardExceptionsBecomeInternalWithTheirText) {
  EXPECT_EQ(guarded("fst_example", [] { throw std::logic_error("broken invariant"); }), FST_ERROR_INTERNAL);
  EXPECT_EQ(fst_last_error_status(), FST_ERROR_INTERNAL);
  EXPECT_STREQ(fst_last_error_message(), "fst_example: internal error: broken invariant");
}

TEST(Guarded, AnythingElseBecomesInternal) {
  EXPECT_EQ(guarded("fst_example", [] { throw 42; }), FST_ERROR_INTERNAL);
  EXPECT_STREQ(fst_last_error_message(), "fst_example: internal error: unknown exception");
}

TEST(RequireNotNull, NamesTheArgument) {
  EXPECT_EQ(guarded("fst_example", [] { require_not_null(nullptr, "out_value"); }),
            FST_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(fst_last_error_message(), "fst_example: out_value is NULL");
  int object = 0;
  EXPECT_EQ(guarded("fst_example", [&] { require_not_null(&object, "out_value"); }), FST_OK);
}

TEST(GraphSerial, NeverZeroAndNeverRepeatedAmongLiveGraphs) {
  std::vector<std::shared_ptr<const GraphSerial>> live;
  std::set<uint32_t> seen;
  for (int i = 0; i < 1000; ++i) {
    live.push_back(GraphSerial::acquire());
    EXPECT_NE(live.back()->value(), 0u);
    EXPECT_TRUE(seen.insert(live.back()->value()).second);
  }
}

// After 2^32 creations the counter wraps; the serial of a graph still alive is skipped, so
// a value of one graph is never accepted by another.
TEST(GraphSerial, WrappedCounterSkipsSerialsStillHeld) {
  const std::shared_ptr<const GraphSerial> old_graph = GraphSerial::acquire();
  const std::shared_ptr<const GraphSerial> old_fusion_only = GraphSerial::acquire();
  const uint32_t released = GraphSerial::acquire()->value();  // freed at once
  set_next_graph_serial_for_testing(old_graph->value());
  const std::shared_ptr<const GraphSerial> fresh = GraphSerial::acquire();
  EXPECT_NE(fresh->value(), old_graph->value());
  EXPECT_NE(fresh->value(), old_fusion_only->value());
  EXPECT_EQ(fresh->value(), released);  // a serial no one holds is reused

  set_next_graph_serial_for_testing(UINT32_MAX);
  const std::shared_ptr<const GraphSerial> last = GraphSerial::acquire();
  const std::shared_ptr<const GraphSerial> after_wrap = GraphSerial::acquire();
  EXPECT_EQ(last->value(), UINT32_MAX);
  EXPECT_NE(after_wrap->value(), 0u);
}

TEST(GraphSerial, ValuesOfALiveGraphAreRefusedByAGraphWithTheWrappedSerial) {
  fst_graph first, second;
  first.serial = GraphSerial::acquire();
  set_next_graph_serial_for_testing(first.serial->value());
  second.serial = GraphSerial::acquire();
  for (fst_graph* g : {&first, &second}) {
    Node n;
    n.op = OpKind::kInput;
    n.dtype = DType::kF32;
    n.dims = {2};
    n.name = "x";
    g->graph.append(n);
  }
  EXPECT_THROW(decode_value(&second, encode_value(&first, 0), "operand"), Error);
  EXPECT_EQ(decode_value(&first, encode_value(&first, 0), "operand"), 0u);
}

// A graph handle with `values` inputs, built directly on the internal graph.
void add_inputs(fst_graph& g, int values) {
  for (int i = 0; i < values; ++i) {
    Node n;
    n.op = OpKind::kInput;
    n.dtype = DType::kF32;
    n.dims = {2};
    n.name = "in" + std::to_string(i);
    g.graph.append(n);
  }
}

TEST(ValueEncoding, RoundTripsAndIsNeverInvalid) {
  fst_graph g;
  g.serial = GraphSerial::acquire();
  add_inputs(g, 3);
  for (ValueId id = 0; id < 3; ++id) {
    fst_value v = encode_value(&g, id);
    EXPECT_NE(v, FST_VALUE_INVALID);
    EXPECT_EQ(decode_value(&g, v, "x"), id);
  }
}

// The message decode_value throws for `v`, or "" if it accepts it.
std::string decode_error(const fst_graph& g, fst_value v) {
  try {
    decode_value(&g, v, "operand");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
    return e.what();
  }
  return "";
}

TEST(ValueEncoding, RejectsInvalidForeignAndMissingValues) {
  fst_graph g, other;
  g.serial = GraphSerial::acquire();
  other.serial = GraphSerial::acquire();
  add_inputs(g, 2);
  add_inputs(other, 5);

  EXPECT_NE(decode_error(g, FST_VALUE_INVALID).find("operand is FST_VALUE_INVALID"), std::string::npos);
  EXPECT_NE(decode_error(g, encode_value(&other, 0)).find("another graph"), std::string::npos);
  // A value index this graph does not have, under this graph's own serial.
  EXPECT_NE(decode_error(g, encode_value(&g, 4)).find("does not exist"), std::string::npos);
  EXPECT_NE(decode_error(g, encode_value(&g, 2)), "");
  EXPECT_NE(decode_error(g, UINT64_MAX), "");
  EXPECT_NE(decode_error(g, static_cast<fst_value>(g.serial->value()) << 32),
            "");  // index part 0 means no value
  EXPECT_EQ(decode_error(g, encode_value(&g, 1)), "");
}

TEST(RequireGraphOk, ReportsTheStickyErrorWithItsStatus) {
  fst_graph g;
  g.serial = GraphSerial::acquire();
  EXPECT_EQ(guarded("fst_example", [&] { require_graph_ok(&g); }), FST_OK);
  g.error = FST_ERROR_SHAPE;
  g.error_message = "fst_reshape: bad dims";
  EXPECT_EQ(guarded("fst_example", [&] { require_graph_ok(&g); }), FST_ERROR_SHAPE);
  EXPECT_NE(std::string(fst_last_error_message()).find("fst_reshape: bad dims"), std::string::npos);
}

}  // namespace
}  // namespace fstitch::api
