// The C boundary's internal helpers, on paths the public API cannot reach on demand:
// every kind of exception becomes a status and a message, and fst_value encoding tells
// graphs and values apart.
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>
#include <string>

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

TEST(GraphSerial, NeverZeroAndNeverRepeatedInARun) {
  uint32_t previous = next_graph_serial();
  EXPECT_NE(previous, 0u);
  for (int i = 0; i < 1000; ++i) {
    uint32_t serial = next_graph_serial();
    EXPECT_NE(serial, 0u);
    EXPECT_NE(serial, previous);
    previous = serial;
  }
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
  g.serial = next_graph_serial();
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
  g.serial = next_graph_serial();
  other.serial = next_graph_serial();
  add_inputs(g, 2);
  add_inputs(other, 5);

  EXPECT_NE(decode_error(g, FST_VALUE_INVALID).find("operand is FST_VALUE_INVALID"), std::string::npos);
  EXPECT_NE(decode_error(g, encode_value(&other, 0)).find("another graph"), std::string::npos);
  // A value index this graph does not have, under this graph's own serial.
  EXPECT_NE(decode_error(g, encode_value(&g, 4)).find("does not exist"), std::string::npos);
  EXPECT_NE(decode_error(g, encode_value(&g, 2)), "");
  EXPECT_NE(decode_error(g, UINT64_MAX), "");
  EXPECT_NE(decode_error(g, static_cast<fst_value>(g.serial) << 32), "");  // index part 0 means no value
  EXPECT_EQ(decode_error(g, encode_value(&g, 1)), "");
}

TEST(RequireGraphOk, ReportsTheStickyErrorWithItsStatus) {
  fst_graph g;
  EXPECT_EQ(guarded("fst_example", [&] { require_graph_ok(&g); }), FST_OK);
  g.error = FST_ERROR_SHAPE;
  g.error_message = "fst_reshape: bad dims";
  EXPECT_EQ(guarded("fst_example", [&] { require_graph_ok(&g); }), FST_ERROR_SHAPE);
  EXPECT_NE(std::string(fst_last_error_message()).find("fst_reshape: bad dims"), std::string::npos);
}

}  // namespace
}  // namespace fstitch::api
