/* Builders given bad names, enum values, operands and dtypes: each must fail with the exact
 * status, a message naming the function and the value at fault, and the sticky graph error. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "capi_check.h"

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Enum values that no public enum defines, beside each enum's own 0 / one-past-the-end. */
static const int kForeignEnumValues[] = {-1, 1000, INT_MAX, INT_MIN};

static const int64_t kDims23[] = {2, 3};

/* A builder called with a NULL graph fails without a graph to record on. */
#define CHECK_NULL_GRAPH(call, function)                                                                    \
  do {                                                                                                      \
    fst_value capi_v_ = (call);                                                                             \
    CHECK(capi_v_ == FST_VALUE_INVALID);                                                                    \
    capi_expect_failure(fst_last_error_status(), FST_ERROR_INVALID_ARGUMENT, (function), "graph", __FILE__, \
                        __LINE__, #call);                                                                   \
  } while (0)

static void test_null_graph(void) {
  fst_value x = capi_foreign_value;
  CHECK_NULL_GRAPH(fst_input(NULL, "x", FST_F32, 1, kDims23), "fst_input");
  CHECK_NULL_GRAPH(fst_constant_f64(NULL, FST_F32, 1.0), "fst_constant_f64");
  CHECK_NULL_GRAPH(fst_constant_i64(NULL, FST_I32, 1), "fst_constant_i64");
  CHECK_NULL_GRAPH(fst_unary(NULL, FST_UNARY_EXP, x), "fst_unary");
  CHECK_NULL_GRAPH(fst_binary(NULL, FST_BINARY_ADD, x, x), "fst_binary");
  CHECK_NULL_GRAPH(fst_select(NULL, x, x, x), "fst_select");
  CHECK_NULL_GRAPH(fst_cast(NULL, x, FST_I32), "fst_cast");
  CHECK_NULL_GRAPH(fst_broadcast(NULL, x, 2, kDims23), "fst_broadcast");
  CHECK_NULL_GRAPH(fst_reduce(NULL, FST_REDUCE_SUM, x, 1, (const int64_t[]){0}, 0), "fst_reduce");
  CHECK_NULL_GRAPH(fst_reshape(NULL, x, 1, (const int64_t[]){6}), "fst_reshape");
  CHECK_NULL_GRAPH(fst_permute(NULL, x, 2, (const int64_t[]){1, 0}), "fst_permute");
  CHECK_NULL_GRAPH(fst_iota(NULL, FST_I32, 2, kDims23, 0), "fst_iota");
  CHECK_NULL_GRAPH(fst_opaque(NULL, "matmul", 1, &x, FST_F32, 2, kDims23), "fst_opaque");
  CHECK_FAIL(fst_output(NULL, "y", x), FST_ERROR_INVALID_ARGUMENT, "fst_output", "graph");
}

static void test_input_errors(void) {
  fst_value x;
  fst_graph* g;
  char detail[64];
  size_t i;

  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_input(g, NULL, FST_F32, 0, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_input",
                     "name");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_input(g, "", FST_F32, 0, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_input", "empty");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_input(g, "new\nline", FST_F32, 0, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_input",
                     "name");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_input(g, "quote\"d", FST_F32, 0, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_input",
                     "name");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_input(g, "x", FST_I32, 1, kDims23), FST_ERROR_INVALID_ARGUMENT, "fst_input",
                     "\"x\"");

  for (i = 0; i < COUNT_OF(kForeignEnumValues) + 2; ++i) {
    int bad = i == 0 ? 0 : i == 1 ? FST_BOOL + 1 : kForeignEnumValues[i - 2];
    snprintf(detail, sizeof detail, "dtype %d", bad);
    g = capi_new_graph();
    CHECK_BUILDER_FAIL(g, fst_input(g, "x", (fst_dtype)bad, 1, kDims23), FST_ERROR_INVALID_ARGUMENT,
                       "fst_input", detail);
  }

  g = capi_new_graph();
  CHECK_BUILDER_FAIL(
      g, fst_input(g, "x", FST_F32, FST_MAX_RANK + 1, (const int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}),
      FST_ERROR_SHAPE, "fst_input", "rank 9");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_input(g, "x", FST_F32, SIZE_MAX, kDims23), FST_ERROR_SHAPE, "fst_input", "rank");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_input(g, "x", FST_F32, 2, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_input", "dims");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_input(g, "x", FST_F32, 2, (const int64_t[]){2, -3}), FST_ERROR_SHAPE, "fst_input",
                     "-3");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_input(g, "x", FST_F32, 2, (const int64_t[]){INT64_MIN, 2}), FST_ERROR_SHAPE,
                     "fst_input", "-9223372036854775808");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_input(g, "x", FST_F32, 2, (const int64_t[]){4, 0}), CAPI_EMPTY_DIM_STATUS,
                     "fst_input", "dim 1");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_input(g, "x", FST_F32, 2, (const int64_t[]){(int64_t)1 << 40, (int64_t)1 << 40}),
                     FST_ERROR_SHAPE, "fst_input", "1099511627776");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_input(g, "x", FST_F32, 3, (const int64_t[]){3, INT64_MAX / 2, 1}),
                     FST_ERROR_SHAPE, "fst_input", "4611686018427387903");
}

static void test_constant_errors(void) {
  fst_graph* g;
  char detail[64];
  size_t i;
  for (i = 0; i < COUNT_OF(kForeignEnumValues) + 2; ++i) {
    int bad = i == 0 ? 0 : i == 1 ? FST_BOOL + 1 : kForeignEnumValues[i - 2];
    snprintf(detail, sizeof detail, "dtype %d", bad);
    g = capi_new_graph();
    CHECK_BUILDER_FAIL(g, fst_constant_f64(g, (fst_dtype)bad, 1.0), FST_ERROR_INVALID_ARGUMENT,
                       "fst_constant_f64", detail);
    g = capi_new_graph();
    CHECK_BUILDER_FAIL(g, fst_constant_i64(g, (fst_dtype)bad, 1), FST_ERROR_INVALID_ARGUMENT,
                       "fst_constant_i64", detail);
  }
}

/* Operands that are not values of this graph. */
static void test_bad_operands(void) {
  fst_value x;
  fst_graph* g;

  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_unary(g, FST_UNARY_EXP, FST_VALUE_INVALID), FST_ERROR_INVALID_ARGUMENT,
                     "fst_unary", "FST_VALUE_INVALID");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_unary(g, FST_UNARY_EXP, capi_foreign_value), FST_ERROR_INVALID_ARGUMENT,
                     "fst_unary", "another graph");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_unary(g, FST_UNARY_EXP, capi_dead_value), FST_ERROR_INVALID_ARGUMENT, "fst_unary",
                     "x");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_unary(g, FST_UNARY_EXP, UINT64_MAX), FST_ERROR_INVALID_ARGUMENT, "fst_unary",
                     "x");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_unary(g, FST_UNARY_EXP, x + 1000), FST_ERROR_INVALID_ARGUMENT, "fst_unary", "x");

  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_binary(g, FST_BINARY_ADD, FST_VALUE_INVALID, x), FST_ERROR_INVALID_ARGUMENT,
                     "fst_binary", "a is FST_VALUE_INVALID");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_binary(g, FST_BINARY_ADD, x, FST_VALUE_INVALID), FST_ERROR_INVALID_ARGUMENT,
                     "fst_binary", "b is FST_VALUE_INVALID");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_binary(g, FST_BINARY_ADD, x, capi_foreign_value), FST_ERROR_INVALID_ARGUMENT,
                     "fst_binary", "another graph");

  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_select(g, FST_VALUE_INVALID, x, x), FST_ERROR_INVALID_ARGUMENT, "fst_select",
                     "cond");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_select(g, fst_constant_i64(g, FST_BOOL, 1), x, capi_foreign_value),
                     FST_ERROR_INVALID_ARGUMENT, "fst_select", "another graph");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_cast(g, FST_VALUE_INVALID, FST_I32), FST_ERROR_INVALID_ARGUMENT, "fst_cast",
                     "FST_VALUE_INVALID");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_cast(g, capi_dead_value, FST_I32), FST_ERROR_INVALID_ARGUMENT, "fst_cast", "x");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_broadcast(g, FST_VALUE_INVALID, 2, kDims23), FST_ERROR_INVALID_ARGUMENT,
                     "fst_broadcast", "FST_VALUE_INVALID");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reduce(g, FST_REDUCE_SUM, capi_foreign_value, 1, (const int64_t[]){0}, 0),
                     FST_ERROR_INVALID_ARGUMENT, "fst_reduce", "another graph");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reshape(g, FST_VALUE_INVALID, 1, (const int64_t[]){6}),
                     FST_ERROR_INVALID_ARGUMENT, "fst_reshape", "FST_VALUE_INVALID");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_permute(g, capi_foreign_value, 2, (const int64_t[]){1, 0}),
                     FST_ERROR_INVALID_ARGUMENT, "fst_permute", "another graph");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(
      g, fst_opaque(g, "matmul", 2, (const fst_value[]){x, FST_VALUE_INVALID}, FST_F32, 2, kDims23),
      FST_ERROR_INVALID_ARGUMENT, "fst_opaque", "inputs[1]");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_opaque(g, "matmul", 1, &capi_foreign_value, FST_F32, 2, kDims23),
                     FST_ERROR_INVALID_ARGUMENT, "fst_opaque", "inputs[0]");
}

/* Unknown unary / binary / reduce operation values, and unknown cast targets. */
static void test_unknown_ops(void) {
  fst_value x;
  fst_graph* g;
  char detail[64];
  size_t i;
  for (i = 0; i < COUNT_OF(kForeignEnumValues) + 2; ++i) {
    int base = i < 2 ? 0 : kForeignEnumValues[i - 2];
    int unary = i == 0 ? 0 : i == 1 ? FST_UNARY_LOGICAL_NOT + 1 : base;
    int binary = i == 0 ? 0 : i == 1 ? FST_BINARY_LOGICAL_OR + 1 : base;
    int reduce = i == 0 ? 0 : i == 1 ? FST_REDUCE_PROD + 1 : base;
    int dtype = i == 0 ? 0 : i == 1 ? FST_BOOL + 1 : base;

    snprintf(detail, sizeof detail, "op %d", unary);
    g = capi_graph_with_x(&x);
    CHECK_BUILDER_FAIL(g, fst_unary(g, (fst_unary_op)unary, x), FST_ERROR_INVALID_ARGUMENT, "fst_unary",
                       detail);
    snprintf(detail, sizeof detail, "op %d", binary);
    g = capi_graph_with_x(&x);
    CHECK_BUILDER_FAIL(g, fst_binary(g, (fst_binary_op)binary, x, x), FST_ERROR_INVALID_ARGUMENT,
                       "fst_binary", detail);
    snprintf(detail, sizeof detail, "op %d", reduce);
    g = capi_graph_with_x(&x);
    CHECK_BUILDER_FAIL(g, fst_reduce(g, (fst_reduce_op)reduce, x, 1, (const int64_t[]){0}, 0),
                       FST_ERROR_INVALID_ARGUMENT, "fst_reduce", detail);
    snprintf(detail, sizeof detail, "dtype %d", dtype);
    g = capi_graph_with_x(&x);
    CHECK_BUILDER_FAIL(g, fst_cast(g, x, (fst_dtype)dtype), FST_ERROR_INVALID_ARGUMENT, "fst_cast", detail);
  }
}

/* Operand dtypes that an operation does not accept. */
static void test_dtype_errors(void) {
  static const int kFloatOnlyUnary[] = {
      FST_UNARY_EXP,        FST_UNARY_LOG,   FST_UNARY_SQRT,    FST_UNARY_RSQRT,
      FST_UNARY_RECIPROCAL, FST_UNARY_TANH,  FST_UNARY_SIGMOID, FST_UNARY_GELU,
      FST_UNARY_GELU_TANH,  FST_UNARY_SILU,  FST_UNARY_ERF,     FST_UNARY_SIN,
      FST_UNARY_COS,        FST_UNARY_FLOOR, FST_UNARY_CEIL,    FST_UNARY_ROUND};
  static const int kNotBoolUnary[] = {FST_UNARY_NEG, FST_UNARY_ABS, FST_UNARY_RELU, FST_UNARY_SIGN};
  static const int kNotBoolBinary[] = {FST_BINARY_ADD, FST_BINARY_SUB, FST_BINARY_MUL, FST_BINARY_DIV,
                                       FST_BINARY_POW};
  fst_value x, i32, flag;
  fst_graph* g;
  size_t i;

  for (i = 0; i < COUNT_OF(kFloatOnlyUnary); ++i) {
    g = capi_new_graph();
    i32 = fst_input(g, "i", FST_I32, 1, (const int64_t[]){4});
    CHECK_BUILDER_FAIL(g, fst_unary(g, (fst_unary_op)kFloatOnlyUnary[i], i32), FST_ERROR_DTYPE, "fst_unary",
                       "i32");
  }
  for (i = 0; i < COUNT_OF(kNotBoolUnary); ++i) {
    g = capi_new_graph();
    flag = fst_input(g, "flag", FST_BOOL, 1, (const int64_t[]){4});
    CHECK_BUILDER_FAIL(g, fst_unary(g, (fst_unary_op)kNotBoolUnary[i], flag), FST_ERROR_DTYPE, "fst_unary",
                       "bool");
  }
  for (i = 0; i < COUNT_OF(kNotBoolBinary); ++i) {
    g = capi_new_graph();
    flag = fst_input(g, "flag", FST_BOOL, 1, (const int64_t[]){4});
    CHECK_BUILDER_FAIL(g, fst_binary(g, (fst_binary_op)kNotBoolBinary[i], flag, flag), FST_ERROR_DTYPE,
                       "fst_binary", "bool");
  }
  g = capi_new_graph();
  i32 = fst_input(g, "i", FST_I32, 1, (const int64_t[]){4});
  CHECK_BUILDER_FAIL(g, fst_binary(g, FST_BINARY_POW, i32, i32), FST_ERROR_DTYPE, "fst_binary", "i32");

  /* Operands of different dtypes, even when one is a scalar constant. */
  g = capi_graph_with_x(&x);
  i32 = fst_input(g, "i", FST_I32, 1, (const int64_t[]){3});
  CHECK_BUILDER_FAIL(g, fst_binary(g, FST_BINARY_ADD, x, i32), FST_ERROR_DTYPE, "fst_binary", "i32");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_binary(g, FST_BINARY_MUL, x, fst_constant_f64(g, FST_F64, 2.0)), FST_ERROR_DTYPE,
                     "fst_binary", "f64");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_binary(g, FST_BINARY_LOGICAL_AND, x, fst_constant_i64(g, FST_BOOL, 1)),
                     FST_ERROR_DTYPE, "fst_binary", "bool");

  /* select: the condition must be bool, the branches of one dtype. */
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_select(g, x, x, x), FST_ERROR_DTYPE, "fst_select", "bool");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_select(g, fst_constant_i64(g, FST_U8, 1), x, x), FST_ERROR_DTYPE, "fst_select",
                     "u8");
  g = capi_graph_with_x(&x);
  flag = fst_binary(g, FST_BINARY_LT, x, x);
  CHECK_BUILDER_FAIL(g, fst_select(g, flag, x, fst_constant_i64(g, FST_I32, 0)), FST_ERROR_DTYPE,
                     "fst_select", "i32");

  /* Reductions. */
  g = capi_new_graph();
  i32 = fst_input(g, "i", FST_I32, 1, (const int64_t[]){4});
  CHECK_BUILDER_FAIL(g, fst_reduce(g, FST_REDUCE_MEAN, i32, 1, (const int64_t[]){0}, 0), FST_ERROR_DTYPE,
                     "fst_reduce", "i32");
  g = capi_new_graph();
  flag = fst_input(g, "flag", FST_BOOL, 1, (const int64_t[]){4});
  CHECK_BUILDER_FAIL(g, fst_reduce(g, FST_REDUCE_SUM, flag, 1, (const int64_t[]){0}, 0), FST_ERROR_DTYPE,
                     "fst_reduce", "bool");
  g = capi_new_graph();
  flag = fst_input(g, "flag", FST_BOOL, 1, (const int64_t[]){4});
  CHECK_BUILDER_FAIL(g, fst_reduce(g, FST_REDUCE_PROD, flag, 1, (const int64_t[]){0}, 1), FST_ERROR_DTYPE,
                     "fst_reduce", "bool");

  /* iota has no bool form. */
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_iota(g, FST_BOOL, 2, kDims23, 0), FST_ERROR_DTYPE, "fst_iota", "bool");
}

/* fst_output reports its failure as a status and records it like a builder. */
static fst_value output_as_builder(fst_graph* g, const char* name, fst_value value) {
  fst_status status = fst_output(g, name, value);
  CHECK(status == fst_last_error_status() || status == FST_OK);
  return status == FST_OK ? value : FST_VALUE_INVALID;
}

static void test_output_errors(void) {
  fst_value x;
  fst_graph* g;

  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, output_as_builder(g, NULL, x), FST_ERROR_INVALID_ARGUMENT, "fst_output", "name");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, output_as_builder(g, "", x), FST_ERROR_INVALID_ARGUMENT, "fst_output", "empty");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, output_as_builder(g, "back\\slash", x), FST_ERROR_INVALID_ARGUMENT, "fst_output",
                     "name");
  g = capi_graph_with_x(&x);
  CHECK_OK(fst_output(g, "y", x));
  CHECK_BUILDER_FAIL(g, output_as_builder(g, "y", fst_unary(g, FST_UNARY_EXP, x)), FST_ERROR_INVALID_ARGUMENT,
                     "fst_output", "\"y\"");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, output_as_builder(g, "y", FST_VALUE_INVALID), FST_ERROR_INVALID_ARGUMENT,
                     "fst_output", "FST_VALUE_INVALID");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, output_as_builder(g, "y", capi_foreign_value), FST_ERROR_INVALID_ARGUMENT,
                     "fst_output", "another graph");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, output_as_builder(g, "y", capi_dead_value), FST_ERROR_INVALID_ARGUMENT, "fst_output",
                     "value");
}

/* A second error does not replace the first, whatever its kind. */
static void test_first_error_wins(void) {
  fst_value x;
  fst_graph* g = capi_graph_with_x(&x);
  if (g == NULL) return;
  CHECK(fst_unary(g, FST_UNARY_EXP, fst_cast(g, x, FST_I32)) == FST_VALUE_INVALID);
  CHECK(fst_graph_status(g) == FST_ERROR_DTYPE);
  CHECK(fst_reshape(g, x, 1, (const int64_t[]){7}) == FST_VALUE_INVALID);
  CHECK(fst_input(g, NULL, FST_F32, 0, NULL) == FST_VALUE_INVALID);
  CHECK(fst_graph_status(g) == FST_ERROR_DTYPE);
  CHECK(capi_contains(fst_graph_error_message(g), "fst_unary"));
  CHECK(!capi_contains(fst_graph_error_message(g), "fst_reshape"));
  CHECK_FAIL(fst_graph_verify(g), FST_ERROR_DTYPE, "fst_graph_verify", "fst_unary");
  fst_graph_destroy(g);
}

void test_builder_errors_operands(void) {
  test_null_graph();
  test_input_errors();
  test_constant_errors();
  test_bad_operands();
  test_unknown_ops();
  test_dtype_errors();
  test_output_errors();
  test_first_error_wins();
}
