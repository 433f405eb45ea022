/* The data-movement builders (fst_slice, fst_concat, fst_pad, fst_take, fst_split): inferred
 * shapes, every error with the sticky graph error, and a fused host run of a rotary
 * embedding with a gather, compared with the reference evaluator. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "capi_check.h"

static void movement_shapes(void) {
  static const int64_t kDims46[] = {4, 6};
  fst_graph* g = capi_new_graph();
  fst_value x, idx, parts[3], sentinel_parts[2];
  if (g == NULL) return;
  x = fst_input(g, "x", FST_F16, 2, kDims46);
  idx = fst_input(g, "idx", FST_I64, 1, (const int64_t[]){5});
  CHECK_VALUE(
      g, fst_slice(g, x, 2, (const int64_t[]){-3, 1}, (const int64_t[]){100, -1}, (const int64_t[]){2, 3}),
      FST_F16, 2, ((const int64_t[]){2, 2}));
  CHECK_VALUE(g, fst_slice(g, x, 2, (const int64_t[]){0, 2}, (const int64_t[]){4, 6}, NULL), FST_F16, 2,
              ((const int64_t[]){4, 4}));
  CHECK_VALUE(g, fst_concat(g, 3, (const fst_value[]){x, x, x}, -1), FST_F16, 2, ((const int64_t[]){4, 18}));
  CHECK_VALUE(g, fst_pad(g, x, 2, (const int64_t[]){1, 0}, (const int64_t[]){2, 3}, -1.0), FST_F16, 2,
              ((const int64_t[]){7, 9}));
  CHECK_VALUE(g, fst_take(g, x, idx, 1), FST_F16, 2, ((const int64_t[]){4, 5}));
  CHECK_VALUE(g, fst_take(g, x, fst_constant_i64(g, FST_I32, -1), 0), FST_F16, 1, ((const int64_t[]){6}));
  CHECK_OK(fst_split(g, x, 1, 3, (const int64_t[]){1, 2, 3}, parts));
  CHECK_VALUE(g, parts[0], FST_F16, 2, ((const int64_t[]){4, 1}));
  CHECK_VALUE(g, parts[1], FST_F16, 2, ((const int64_t[]){4, 2}));
  CHECK_VALUE(g, parts[2], FST_F16, 2, ((const int64_t[]){4, 3}));
  /* A failed split leaves out_values untouched and records the error on the graph. */
  sentinel_parts[0] = sentinel_parts[1] = (fst_value)77;
  CHECK_FAIL(fst_split(g, x, 0, 2, (const int64_t[]){1, 2}, sentinel_parts), FST_ERROR_SHAPE, "fst_split",
             "add up to 3");
  CHECK(sentinel_parts[0] == (fst_value)77 && sentinel_parts[1] == (fst_value)77);
  CHECK(fst_graph_status(g) == FST_ERROR_SHAPE);
  CHECK_FAIL(fst_split(g, x, 1, 1, (const int64_t[]){6}, sentinel_parts), FST_ERROR_SHAPE, "fst_split",
             "add up to 3");
  CHECK(sentinel_parts[0] == (fst_value)77);
  fst_graph_destroy(g);
}

static void movement_errors(void) {
  const int64_t zeros[2] = {0, 0}, stops[2] = {2, 3};
  fst_graph* g;
  fst_value x, parts[2];

  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_slice(g, x, 1, zeros, stops, NULL), FST_ERROR_SHAPE, "fst_slice", "rank 1");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_slice(g, x, 2, NULL, stops, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_slice",
                     "starts");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_slice(g, x, 2, zeros, stops, zeros), FST_ERROR_SHAPE, "fst_slice", "step 0");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_slice(g, x, 2, stops, stops, NULL), FST_ERROR_SHAPE, "fst_slice", "empty");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_slice(g, FST_VALUE_INVALID, 2, zeros, stops, NULL), FST_ERROR_INVALID_ARGUMENT,
                     "fst_slice", "FST_VALUE_INVALID");

  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_concat(g, 0, &x, 0), FST_ERROR_INVALID_ARGUMENT, "fst_concat", "n is 0");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_concat(g, 2, NULL, 0), FST_ERROR_INVALID_ARGUMENT, "fst_concat", "values");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_concat(g, 2, (const fst_value[]){x, capi_foreign_value}, 0),
                     FST_ERROR_INVALID_ARGUMENT, "fst_concat", "values[1]");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_concat(g, 2, (const fst_value[]){x, fst_cast(g, x, FST_F64)}, 0), FST_ERROR_DTYPE,
                     "fst_concat", "insert a cast");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_concat(g, 2, (const fst_value[]){x, x}, 2), FST_ERROR_SHAPE, "fst_concat",
                     "out of range");

  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_pad(g, x, 2, (const int64_t[]){0, -1}, zeros, 0.0), FST_ERROR_SHAPE, "fst_pad",
                     "must not be negative");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_pad(g, x, 2, zeros, NULL, 0.0), FST_ERROR_INVALID_ARGUMENT, "fst_pad", "high");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_pad(g, x, 3, zeros, zeros, 0.0), FST_ERROR_SHAPE, "fst_pad", "rank 3");

  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_take(g, x, x, 0), FST_ERROR_DTYPE, "fst_take", "i32 or i64");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_take(g, x, fst_iota(g, FST_I32, 1, (const int64_t[]){2}, 0), -3), FST_ERROR_SHAPE,
                     "fst_take", "out of range");
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_take(g, x, capi_dead_value, 0), FST_ERROR_INVALID_ARGUMENT, "fst_take",
                     "indices");

  g = capi_graph_with_x(&x);
  CHECK_FAIL(fst_split(g, x, 0, 2, (const int64_t[]){1, 1}, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_split",
             "out_values");
  fst_graph_destroy(g);
  g = capi_graph_with_x(&x);
  CHECK_FAIL(fst_split(g, x, 0, 0, (const int64_t[]){1}, parts), FST_ERROR_INVALID_ARGUMENT, "fst_split",
             "nsections");
  fst_graph_destroy(g);
  g = capi_graph_with_x(&x);
  CHECK_FAIL(fst_split(g, x, 0, 2, (const int64_t[]){2, 0}, parts), FST_ERROR_SHAPE, "fst_split",
             "at least one element");
  CHECK(fst_graph_status(g) == FST_ERROR_SHAPE);
  fst_graph_destroy(g);
  CHECK_FAIL(fst_split(NULL, x, 0, 1, (const int64_t[]){2}, parts), FST_ERROR_INVALID_ARGUMENT, "fst_split",
             "graph");
}

/* y = x * cos + cat(-x[:, 4:], x[:, :4]) * sin, and z = pad(take(x, idx, 0)): fused, run on
 * the host and compared with the reference; out-of-range indices give rows of 0. */
static void movement_fused_run(void) {
  enum { kRows = 6, kCols = 8 };
  static const int64_t kDims[] = {kRows, kCols};
  float x[kRows * kCols], c[kRows * kCols], s[kRows * kCols];
  float y[kRows * kCols], ref_y[kRows * kCols], z[5 * (kCols + 2)], ref_z[5 * (kCols + 2)];
  const int32_t idx[4] = {2, -1, 6, -7};
  const void* inputs[4];
  void* outputs[2];
  void* ref_outputs[2];
  fst_graph* g = capi_new_graph();
  fst_fusion* fusion = NULL;
  fst_value xv, cv, sv, iv, halves[2], rot, yv, zv;
  size_t i;
  int same = 1;
  if (g == NULL) return;
  for (i = 0; i < kRows * kCols; ++i) {
    x[i] = (float)sin(0.3 * (double)i);
    c[i] = (float)cos(0.1 * (double)i);
    s[i] = (float)sin(0.2 * (double)i + 1.0);
  }
  xv = fst_input(g, "x", FST_F32, 2, kDims);
  cv = fst_input(g, "cos", FST_F32, 2, kDims);
  sv = fst_input(g, "sin", FST_F32, 2, kDims);
  iv = fst_input(g, "idx", FST_I32, 1, (const int64_t[]){4});
  CHECK_OK(fst_split(g, xv, -1, 2, (const int64_t[]){kCols / 2, kCols / 2}, halves));
  rot = fst_concat(g, 2, (const fst_value[]){fst_unary(g, FST_UNARY_NEG, halves[1]), halves[0]}, -1);
  yv = fst_binary(g, FST_BINARY_ADD, fst_binary(g, FST_BINARY_MUL, xv, cv),
                  fst_binary(g, FST_BINARY_MUL, rot, sv));
  zv = fst_pad(g, fst_take(g, xv, iv, 0), 2, (const int64_t[]){1, 1}, (const int64_t[]){0, 1}, 9.0);
  CHECK_OK(fst_output(g, "y", yv));
  CHECK_OK(fst_output(g, "z", zv));
  CHECK_OK(fst_fuse(g, NULL, &fusion));
  if (fusion == NULL) {
    fst_graph_destroy(g);
    return;
  }
  inputs[0] = x;
  inputs[1] = c;
  inputs[2] = s;
  inputs[3] = idx;
  outputs[0] = y;
  outputs[1] = z;
  ref_outputs[0] = ref_y;
  ref_outputs[1] = ref_z;
  CHECK_OK(fst_fusion_run(fusion, inputs, 4, outputs, 2, NULL, NULL));
  CHECK_OK(fst_graph_evaluate_reference(g, inputs, 4, ref_outputs, 2));
  for (i = 0; i < kRows * kCols; ++i)
    same = same && fabsf(y[i] - ref_y[i]) <= 1e-6f * (1.0f + fabsf(ref_y[i]));
  for (i = 0; i < 5 * (kCols + 2); ++i) same = same && z[i] == ref_z[i];
  CHECK(same);
  /* Row 0 and column 0 are padding; take row 3 (index 6) is out of range: zeros. */
  CHECK(ref_z[0] == 9.0f && ref_z[kCols + 2] == 9.0f && ref_z[kCols + 3] == x[2 * kCols]);
  CHECK(ref_z[3 * (kCols + 2) + 1] == 0.0f && ref_z[4 * (kCols + 2) + 1] == 0.0f);
  CHECK(ref_z[2 * (kCols + 2) + 1] == x[(kRows - 1) * kCols]);
  fst_fusion_destroy(fusion);
  fst_graph_destroy(g);
}

void test_movement(void) {
  movement_shapes();
  movement_errors();
  movement_fused_run();
}
