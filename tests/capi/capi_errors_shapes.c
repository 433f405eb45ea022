/* Builders given shapes, axes, permutations and dims that do not fit: each must fail with
 * the exact status, a message naming the function and the value at fault, and the sticky
 * graph error. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "capi_check.h"

static const int64_t kDims23[] = {2, 3};
static const int64_t kNineOnes[] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
static const int64_t kHugeDims[] = {(int64_t)1 << 40, (int64_t)1 << 40};

static void test_binary_shapes(void) {
  fst_value x, y;
  fst_graph* g;

  g = capi_graph_with_x(&x);
  y = fst_input(g, "y", FST_F32, 1, (const int64_t[]){4});
  CHECK_BUILDER_FAIL(g, fst_binary(g, FST_BINARY_ADD, x, y), FST_ERROR_SHAPE, "fst_binary", "[4]");
  g = capi_graph_with_x(&x);
  y = fst_input(g, "y", FST_F32, 2, (const int64_t[]){3, 2});
  CHECK_BUILDER_FAIL(g, fst_binary(g, FST_BINARY_MAX, x, y), FST_ERROR_SHAPE, "fst_binary", "[3,2]");
  g = capi_graph_with_x(&x);
  y = fst_input(g, "y", FST_F32, 3, (const int64_t[]){5, 3, 1});
  CHECK_BUILDER_FAIL(g, fst_binary(g, FST_BINARY_EQ, y, x), FST_ERROR_SHAPE, "fst_binary", "[5,3,1]");

  g = capi_graph_with_x(&x);
  y = fst_input(g, "y", FST_F32, 1, (const int64_t[]){4});
  CHECK_BUILDER_FAIL(g, fst_select(g, fst_binary(g, FST_BINARY_LT, x, x), x, y), FST_ERROR_SHAPE,
                     "fst_select", "[4]");
  g = capi_graph_with_x(&x);
  y = fst_input(g, "c", FST_BOOL, 1, (const int64_t[]){2});
  CHECK_BUILDER_FAIL(g, fst_select(g, y, x, x), FST_ERROR_SHAPE, "fst_select", "[2]");
}

static void test_broadcast_shapes(void) {
  fst_value x;
  fst_graph* g;

  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_broadcast(g, x, 1, (const int64_t[]){3}), FST_ERROR_SHAPE, "fst_broadcast",
                     "[3]");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_broadcast(g, x, 2, (const int64_t[]){2, 4}), FST_ERROR_SHAPE, "fst_broadcast",
                     "[2,4]");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_broadcast(g, x, 3, (const int64_t[]){2, 1, 3}), FST_ERROR_SHAPE, "fst_broadcast",
                     "[2,1,3]");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_broadcast(g, x, 3, (const int64_t[]){-4, 2, 3}), FST_ERROR_SHAPE, "fst_broadcast",
                     "-4");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_broadcast(g, x, 3, (const int64_t[]){0, 2, 3}), CAPI_EMPTY_DIM_STATUS,
                     "fst_broadcast", "dim 0");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_broadcast(g, x, FST_MAX_RANK + 1, kNineOnes), FST_ERROR_SHAPE, "fst_broadcast",
                     "rank 9");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_broadcast(g, x, 2, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_broadcast", "dims");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_broadcast(g, x, 4, (const int64_t[]){(int64_t)1 << 40, (int64_t)1 << 40, 2, 3}),
                     FST_ERROR_SHAPE, "fst_broadcast", "1099511627776");
}

static void test_reduce_shapes(void) {
  fst_value x, s;
  fst_graph* g;

  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reduce(g, FST_REDUCE_SUM, x, 0, (const int64_t[]){0}, 0), FST_ERROR_SHAPE,
                     "fst_reduce", "naxes");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reduce(g, FST_REDUCE_SUM, x, 0, NULL, 0), FST_ERROR_SHAPE, "fst_reduce", "naxes");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reduce(g, FST_REDUCE_SUM, x, 1, NULL, 0), FST_ERROR_INVALID_ARGUMENT,
                     "fst_reduce", "axes");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reduce(g, FST_REDUCE_MAX, x, 1, (const int64_t[]){2}, 0), FST_ERROR_SHAPE,
                     "fst_reduce", "axis 2");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reduce(g, FST_REDUCE_MIN, x, 1, (const int64_t[]){-3}, 1), FST_ERROR_SHAPE,
                     "fst_reduce", "axis -3");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reduce(g, FST_REDUCE_SUM, x, 1, (const int64_t[]){INT64_MIN}, 0), FST_ERROR_SHAPE,
                     "fst_reduce", "-9223372036854775808");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reduce(g, FST_REDUCE_SUM, x, 1, (const int64_t[]){INT64_MAX}, 0), FST_ERROR_SHAPE,
                     "fst_reduce", "9223372036854775807");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reduce(g, FST_REDUCE_SUM, x, 2, (const int64_t[]){1, 1}, 0), FST_ERROR_SHAPE,
                     "fst_reduce", "repeated");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reduce(g, FST_REDUCE_PROD, x, 2, (const int64_t[]){1, -1}, 0), FST_ERROR_SHAPE,
                     "fst_reduce", "repeated");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(
      g, fst_reduce(g, FST_REDUCE_SUM, x, FST_MAX_RANK + 1, (const int64_t[]){0, 1, 0, 1, 0, 1, 0, 1, 0}, 0),
      FST_ERROR_SHAPE, "fst_reduce", "naxes 9");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reduce(g, FST_REDUCE_SUM, x, SIZE_MAX, (const int64_t[]){0}, 0), FST_ERROR_SHAPE,
                     "fst_reduce", "naxes");
  /* A scalar has no axis to reduce. */
  g = capi_new_graph();
  s = fst_input(g, "s", FST_F32, 0, NULL);
  CHECK_BUILDER_FAIL(g, fst_reduce(g, FST_REDUCE_SUM, s, 1, (const int64_t[]){0}, 0), FST_ERROR_SHAPE,
                     "fst_reduce", "axis 0");
}

static void test_reshape_shapes(void) {
  fst_value x;
  fst_graph* g;

  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reshape(g, x, 1, (const int64_t[]){4}), FST_ERROR_SHAPE, "fst_reshape", "[4]");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reshape(g, x, 0, NULL), FST_ERROR_SHAPE, "fst_reshape", "[]");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reshape(g, x, 2, (const int64_t[]){-1, -1}), FST_ERROR_SHAPE, "fst_reshape",
                     "-1");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reshape(g, x, 3, (const int64_t[]){-1, 2, -1}), FST_ERROR_SHAPE, "fst_reshape",
                     "-1");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reshape(g, x, 2, (const int64_t[]){4, -1}), FST_ERROR_SHAPE, "fst_reshape",
                     "[4,-1]");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reshape(g, x, 2, (const int64_t[]){-2, -3}), FST_ERROR_SHAPE, "fst_reshape",
                     "-2");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reshape(g, x, 2, (const int64_t[]){0, -1}), CAPI_EMPTY_DIM_STATUS, "fst_reshape",
                     "dim 0");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reshape(g, x, 2, kHugeDims), FST_ERROR_SHAPE, "fst_reshape", "1099511627776");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reshape(g, x, 3, (const int64_t[]){-1, (int64_t)1 << 40, (int64_t)1 << 40}),
                     FST_ERROR_SHAPE, "fst_reshape", "1099511627776");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reshape(g, x, FST_MAX_RANK + 1, kNineOnes), FST_ERROR_SHAPE, "fst_reshape",
                     "rank 9");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_reshape(g, x, 2, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_reshape", "dims");
}

static void test_permute_shapes(void) {
  fst_value x;
  fst_graph* g;

  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_permute(g, x, 1, (const int64_t[]){0}), FST_ERROR_SHAPE, "fst_permute", "rank 2");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_permute(g, x, 3, (const int64_t[]){0, 1, 2}), FST_ERROR_SHAPE, "fst_permute",
                     "rank 2");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_permute(g, x, 2, (const int64_t[]){0, 0}), FST_ERROR_SHAPE, "fst_permute",
                     "[0,0]");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_permute(g, x, 2, (const int64_t[]){0, 2}), FST_ERROR_SHAPE, "fst_permute",
                     "[0,2]");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_permute(g, x, 2, (const int64_t[]){-1, 0}), FST_ERROR_SHAPE, "fst_permute",
                     "[-1,0]");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_permute(g, x, 2, (const int64_t[]){1, INT64_MIN}), FST_ERROR_SHAPE, "fst_permute",
                     "-9223372036854775808");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_permute(g, x, 2, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_permute", "perm");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_permute(g, x, FST_MAX_RANK + 1, kNineOnes), FST_ERROR_SHAPE, "fst_permute",
                     "rank 9");
}

static void test_iota_shapes(void) {
  static const int kBadDTypes[] = {0, FST_BOOL + 1, -1, INT_MAX, INT_MIN};
  char detail[64];
  fst_graph* g;
  size_t i;

  for (i = 0; i < sizeof kBadDTypes / sizeof kBadDTypes[0]; ++i) {
    snprintf(detail, sizeof detail, "dtype %d", kBadDTypes[i]);
    g = capi_new_graph();
    CHECK_BUILDER_FAIL(g, fst_iota(g, (fst_dtype)kBadDTypes[i], 2, kDims23, 0), FST_ERROR_INVALID_ARGUMENT,
                       "fst_iota", detail);
  }
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_iota(g, FST_I32, 2, kDims23, 2), FST_ERROR_SHAPE, "fst_iota", "axis 2");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_iota(g, FST_I32, 2, kDims23, INT64_MIN), FST_ERROR_SHAPE, "fst_iota",
                     "-9223372036854775808");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_iota(g, FST_I32, 0, NULL, 0), FST_ERROR_SHAPE, "fst_iota", "rank");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_iota(g, FST_F32, 2, (const int64_t[]){2, -1}, 0), FST_ERROR_SHAPE, "fst_iota",
                     "-1");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_iota(g, FST_I64, 2, (const int64_t[]){3, 0}, 0), CAPI_EMPTY_DIM_STATUS,
                     "fst_iota", "dim 1");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_iota(g, FST_F32, 2, kHugeDims, 0), FST_ERROR_SHAPE, "fst_iota", "1099511627776");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_iota(g, FST_F32, FST_MAX_RANK + 1, kNineOnes, 0), FST_ERROR_SHAPE, "fst_iota",
                     "rank 9");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_iota(g, FST_F32, 1, NULL, 0), FST_ERROR_INVALID_ARGUMENT, "fst_iota", "dims");
}

static void test_opaque_errors(void) {
  static const int kBadDTypes[] = {0, FST_BOOL + 1, -1, INT_MAX, INT_MIN};
  char detail[64];
  fst_value x;
  fst_graph* g;
  size_t i;

  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_opaque(g, NULL, 1, &x, FST_F32, 2, kDims23), FST_ERROR_INVALID_ARGUMENT,
                     "fst_opaque", "name");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_opaque(g, "", 1, &x, FST_F32, 2, kDims23), FST_ERROR_INVALID_ARGUMENT,
                     "fst_opaque", "empty");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_opaque(g, "mat mul", 1, &x, FST_F32, 2, kDims23), FST_ERROR_INVALID_ARGUMENT,
                     "fst_opaque", "mat mul");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_opaque(g, "conv/2d", 1, &x, FST_F32, 2, kDims23), FST_ERROR_INVALID_ARGUMENT,
                     "fst_opaque", "conv/2d");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_opaque(g, "matmul", 1, NULL, FST_F32, 2, kDims23), FST_ERROR_INVALID_ARGUMENT,
                     "fst_opaque", "inputs");
  for (i = 0; i < sizeof kBadDTypes / sizeof kBadDTypes[0]; ++i) {
    snprintf(detail, sizeof detail, "dtype %d", kBadDTypes[i]);
    g = capi_graph_with_x(&x);
    CHECK_BUILDER_FAIL(g, fst_opaque(g, "matmul", 1, &x, (fst_dtype)kBadDTypes[i], 2, kDims23),
                       FST_ERROR_INVALID_ARGUMENT, "fst_opaque", detail);
  }
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_opaque(g, "matmul", 1, &x, FST_F32, 2, (const int64_t[]){2, -5}), FST_ERROR_SHAPE,
                     "fst_opaque", "-5");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_opaque(g, "matmul", 1, &x, FST_F32, 1, (const int64_t[]){0}),
                     CAPI_EMPTY_DIM_STATUS, "fst_opaque", "dim 0");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_opaque(g, "matmul", 1, &x, FST_F32, 2, kHugeDims), FST_ERROR_SHAPE, "fst_opaque",
                     "1099511627776");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_opaque(g, "matmul", 1, &x, FST_F32, FST_MAX_RANK + 1, kNineOnes), FST_ERROR_SHAPE,
                     "fst_opaque", "rank 9");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_opaque(g, "matmul", 1, &x, FST_F32, 2, NULL), FST_ERROR_INVALID_ARGUMENT,
                     "fst_opaque", "dims");
}

void test_builder_errors_shapes(void) {
  test_binary_shapes();
  test_broadcast_shapes();
  test_reduce_shapes();
  test_reshape_shapes();
  test_permute_shapes();
  test_iota_shapes();
  test_opaque_errors();
}
