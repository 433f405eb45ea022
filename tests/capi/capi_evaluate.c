/* The reference evaluator through the C API: small graphs whose results are worked out by
 * hand below, and every way to call it wrongly. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "capi_check.h"

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Float results: y = x * b + 1, row sums of y, column maxima of x (kept dims), x
 * transposed, and the mean of x. */
static void test_float_graph(void) {
  static const float kX[6] = {1, 2, 3, 4, 5, 6};
  static const float kB[3] = {0.5f, -1, 2};
  static const float kY[6] = {1.5f, -1, 7, 3, -4, 13};
  static const float kRowSums[2] = {7.5f, 12};
  static const float kColumnMax[3] = {4, 5, 6};
  static const float kTransposed[6] = {1, 4, 2, 5, 3, 6};
  float y[6], row_sums[2], column_max[3], transposed[6], mean = 0;
  const void* inputs[2];
  void* outputs[5];
  fst_graph* g = capi_new_graph();
  fst_value x, b, v;
  size_t i;
  if (g == NULL) return;

  x = fst_input(g, "x", FST_F32, 2, (const int64_t[]){2, 3});
  b = fst_input(g, "b", FST_F32, 1, (const int64_t[]){3});
  v = fst_binary(g, FST_BINARY_ADD, fst_binary(g, FST_BINARY_MUL, x, b), fst_constant_f64(g, FST_F32, 1.0));
  CHECK_OK(fst_output(g, "y", v));
  CHECK_OK(fst_output(g, "row_sums", fst_reduce(g, FST_REDUCE_SUM, v, 1, (const int64_t[]){1}, 0)));
  CHECK_OK(fst_output(g, "column_max", fst_reduce(g, FST_REDUCE_MAX, x, 1, (const int64_t[]){0}, 1)));
  CHECK_OK(fst_output(g, "transposed", fst_permute(g, x, 2, (const int64_t[]){1, 0})));
  CHECK_OK(fst_output(g, "mean", fst_reduce(g, FST_REDUCE_MEAN, x, 2, (const int64_t[]){1, 0}, 0)));

  inputs[0] = kX;
  inputs[1] = kB;
  outputs[0] = y;
  outputs[1] = row_sums;
  outputs[2] = column_max;
  outputs[3] = transposed;
  outputs[4] = &mean;
  for (i = 0; i < 6; ++i) y[i] = transposed[i] = NAN;
  row_sums[0] = row_sums[1] = column_max[0] = column_max[1] = column_max[2] = mean = NAN;
  CHECK_OK(fst_graph_evaluate_reference(g, inputs, 2, outputs, 5));
  CHECK(memcmp(y, kY, sizeof y) == 0);
  CHECK(memcmp(row_sums, kRowSums, sizeof row_sums) == 0);
  CHECK(memcmp(column_max, kColumnMax, sizeof column_max) == 0);
  CHECK(memcmp(transposed, kTransposed, sizeof transposed) == 0);
  CHECK(mean == 3.5f);
  /* The inputs are read-only to the evaluator. */
  CHECK(kX[0] == 1 && kB[1] == -1);
  fst_graph_destroy(g);
}

/* Integer, bool, f16/bf16 and cast results, checked bit for bit. */
static void test_typed_graph(void) {
  static const int32_t kA[4] = {7, -7, 5, 9};
  static const int32_t kD[4] = {2, 2, 0, -4};
  static const float kF[4] = {2.9f, -2.9f, 1e10f, NAN};
  static const float kH[4] = {1.0f, 65504.0f, 70000.0f, 1.0f / 3.0f};
  static const uint16_t kHalves[2] = {0x3C00, 0x4000}; /* 1.0 and 2.0 in f16 */
  static const uint8_t kU[2] = {200, 10};
  static const int8_t kI8[2] = {-128, 5};
  static const int32_t kQuotients[4] = {3, -3, 0, -2}; /* truncated; x / 0 is 0 */
  static const uint8_t kLess[4] = {0, 1, 0, 0};
  static const int32_t kSelected[4] = {2, -7, 0, -4};
  static const int32_t kCasts[4] = {2, -2, INT32_MAX, 0}; /* truncate, saturate, NaN -> 0 */
  static const uint16_t kF16[4] = {0x3C00, 0x7BFF, 0x7C00, 0x3555};
  static const uint16_t kBF16[4] = {0x3F80, 0x4780, 0x4789, 0x3EAB};
  static const uint16_t kHalfSums[2] = {0x4000, 0x4400};
  static const uint8_t kU8Sums[2] = {44, 110};  /* 300 wraps */
  static const int8_t kNegated[2] = {-128, -5}; /* -(-128) wraps */
  static const int64_t kIota[6] = {0, 1, 2, 0, 1, 2};
  static const uint8_t kNotD[4] = {0, 0, 1, 0};
  int32_t quotients[4], selected[4], casts[4];
  uint8_t less[4], u8_sums[2], not_d[4];
  uint16_t f16[4], bf16[4], half_sums[2];
  int8_t negated[2];
  int64_t iota[6];
  const void* inputs[7];
  void* outputs[11];
  fst_graph* g = capi_new_graph();
  fst_value a, d, f, h, p, u, n, lt;
  if (g == NULL) return;

  a = fst_input(g, "a", FST_I32, 1, (const int64_t[]){4});
  d = fst_input(g, "d", FST_I32, 1, (const int64_t[]){4});
  f = fst_input(g, "f", FST_F32, 1, (const int64_t[]){4});
  h = fst_input(g, "h", FST_F32, 1, (const int64_t[]){4});
  p = fst_input(g, "p", FST_F16, 1, (const int64_t[]){2});
  u = fst_input(g, "u", FST_U8, 1, (const int64_t[]){2});
  n = fst_input(g, "n", FST_I8, 1, (const int64_t[]){2});
  lt = fst_binary(g, FST_BINARY_LT, a, d);
  CHECK_OK(fst_output(g, "quotients", fst_binary(g, FST_BINARY_DIV, a, d)));
  CHECK_OK(fst_output(g, "less", lt));
  CHECK_OK(fst_output(g, "selected", fst_select(g, lt, a, d)));
  CHECK_OK(fst_output(g, "casts", fst_cast(g, f, FST_I32)));
  CHECK_OK(fst_output(g, "f16", fst_cast(g, h, FST_F16)));
  CHECK_OK(fst_output(g, "bf16", fst_cast(g, h, FST_BF16)));
  CHECK_OK(fst_output(g, "half_sums", fst_binary(g, FST_BINARY_ADD, p, p)));
  CHECK_OK(fst_output(g, "u8_sums", fst_binary(g, FST_BINARY_ADD, u, fst_constant_i64(g, FST_U8, 100))));
  CHECK_OK(fst_output(g, "negated", fst_unary(g, FST_UNARY_NEG, n)));
  CHECK_OK(fst_output(g, "iota", fst_iota(g, FST_I64, 2, (const int64_t[]){2, 3}, 1)));
  CHECK_OK(fst_output(g, "not_d", fst_unary(g, FST_UNARY_LOGICAL_NOT, d)));

  inputs[0] = kA;
  inputs[1] = kD;
  inputs[2] = kF;
  inputs[3] = kH;
  inputs[4] = kHalves;
  inputs[5] = kU;
  inputs[6] = kI8;
  outputs[0] = quotients;
  outputs[1] = less;
  outputs[2] = selected;
  outputs[3] = casts;
  outputs[4] = f16;
  outputs[5] = bf16;
  outputs[6] = half_sums;
  outputs[7] = u8_sums;
  outputs[8] = negated;
  outputs[9] = iota;
  outputs[10] = not_d;
  CHECK_OK(fst_graph_evaluate_reference(g, inputs, COUNT_OF(inputs), outputs, COUNT_OF(outputs)));
  CHECK(memcmp(quotients, kQuotients, sizeof quotients) == 0);
  CHECK(memcmp(less, kLess, sizeof less) == 0);
  CHECK(memcmp(selected, kSelected, sizeof selected) == 0);
  CHECK(memcmp(casts, kCasts, sizeof casts) == 0);
  CHECK(memcmp(f16, kF16, sizeof f16) == 0);
  CHECK(memcmp(bf16, kBF16, sizeof bf16) == 0);
  CHECK(memcmp(half_sums, kHalfSums, sizeof half_sums) == 0);
  CHECK(memcmp(u8_sums, kU8Sums, sizeof u8_sums) == 0);
  CHECK(memcmp(negated, kNegated, sizeof negated) == 0);
  CHECK(memcmp(iota, kIota, sizeof iota) == 0);
  CHECK(memcmp(not_d, kNotD, sizeof not_d) == 0);
  fst_graph_destroy(g);
}

/* True if all `size` bytes of `buffer` are `byte`. */
static int all_bytes(const void* buffer, size_t size, unsigned char byte) {
  const unsigned char* p = (const unsigned char*)buffer;
  size_t i;
  for (i = 0; i < size; ++i) {
    if (p[i] != byte) return 0;
  }
  return 1;
}

static void test_bad_calls(void) {
  float x[2] = {1, 2}, w[2] = {3, 4};
  float y[2], z[2];
  const void* inputs[2];
  const void* one_null_input[2];
  void* outputs[2];
  void* one_null_output[2];
  fst_graph* g = capi_new_graph();
  fst_value vx, vw;
  if (g == NULL) return;
  vx = fst_input(g, "x", FST_F32, 1, (const int64_t[]){2});
  vw = fst_input(g, "w", FST_F32, 1, (const int64_t[]){2});
  CHECK_OK(fst_output(g, "y", fst_binary(g, FST_BINARY_SUB, vx, vw)));
  CHECK_OK(fst_output(g, "z", fst_unary(g, FST_UNARY_ABS, vw)));
  inputs[0] = x;
  inputs[1] = w;
  one_null_input[0] = x;
  one_null_input[1] = NULL;
  outputs[0] = y;
  outputs[1] = z;
  one_null_output[0] = y;
  one_null_output[1] = NULL;
  memset(y, 0x5A, sizeof y);
  memset(z, 0x5A, sizeof z);

  CHECK_FAIL(fst_graph_evaluate_reference(NULL, inputs, 2, outputs, 2), FST_ERROR_INVALID_ARGUMENT,
             "fst_graph_evaluate_reference", "graph");
  CHECK_FAIL(fst_graph_evaluate_reference(g, inputs, 1, outputs, 2), FST_ERROR_INVALID_ARGUMENT,
             "fst_graph_evaluate_reference", "ninputs");
  CHECK_FAIL(fst_graph_evaluate_reference(g, inputs, 3, outputs, 2), FST_ERROR_INVALID_ARGUMENT,
             "fst_graph_evaluate_reference", "ninputs");
  CHECK_FAIL(fst_graph_evaluate_reference(g, inputs, SIZE_MAX, outputs, 2), FST_ERROR_INVALID_ARGUMENT,
             "fst_graph_evaluate_reference", "ninputs");
  CHECK_FAIL(fst_graph_evaluate_reference(g, inputs, 2, outputs, 1), FST_ERROR_INVALID_ARGUMENT,
             "fst_graph_evaluate_reference", "noutputs");
  CHECK_FAIL(fst_graph_evaluate_reference(g, inputs, 2, outputs, 0), FST_ERROR_INVALID_ARGUMENT,
             "fst_graph_evaluate_reference", "noutputs");
  CHECK_FAIL(fst_graph_evaluate_reference(g, NULL, 2, outputs, 2), FST_ERROR_INVALID_ARGUMENT,
             "fst_graph_evaluate_reference", "inputs");
  CHECK_FAIL(fst_graph_evaluate_reference(g, one_null_input, 2, outputs, 2), FST_ERROR_INVALID_ARGUMENT,
             "fst_graph_evaluate_reference", "inputs[1]");
  CHECK_FAIL(fst_graph_evaluate_reference(g, inputs, 2, NULL, 2), FST_ERROR_INVALID_ARGUMENT,
             "fst_graph_evaluate_reference", "outputs");
  CHECK_FAIL(fst_graph_evaluate_reference(g, inputs, 2, one_null_output, 2), FST_ERROR_INVALID_ARGUMENT,
             "fst_graph_evaluate_reference", "outputs[1]");
  CHECK(all_bytes(y, sizeof y, 0x5A) && all_bytes(z, sizeof z, 0x5A));

  /* Failed calls are not builder errors: the graph still evaluates. */
  CHECK(fst_graph_status(g) == FST_OK);
  CHECK_OK(fst_graph_evaluate_reference(g, inputs, 2, outputs, 2));
  CHECK(y[0] == -2 && y[1] == -2 && z[0] == 3 && z[1] == 4);
  fst_graph_destroy(g);

  /* A graph that does not verify (no outputs) fails as verification does. */
  g = capi_new_graph();
  if (g == NULL) return;
  vx = fst_input(g, "x", FST_F32, 1, (const int64_t[]){2});
  CHECK(vx != FST_VALUE_INVALID);
  CHECK_FAIL(fst_graph_evaluate_reference(g, inputs, 1, NULL, 0), FST_ERROR_INVALID_ARGUMENT,
             "fst_graph_evaluate_reference", "output");
  fst_graph_destroy(g);
}

/* The reference evaluator cannot run opaque operations. */
static void test_opaque(void) {
  float x[4] = {1, 2, 3, 4};
  float y[4];
  const void* inputs[1];
  void* outputs[1];
  fst_graph* g = capi_new_graph();
  fst_value vx, product;
  if (g == NULL) return;
  vx = fst_input(g, "x", FST_F32, 2, (const int64_t[]){2, 2});
  product = fst_opaque(g, "matmul", 2, (const fst_value[]){vx, vx}, FST_F32, 2, (const int64_t[]){2, 2});
  CHECK_OK(fst_output(g, "y", fst_unary(g, FST_UNARY_RELU, product)));
  CHECK_OK(fst_graph_verify(g));
  inputs[0] = x;
  outputs[0] = y;
  memset(y, 0x5A, sizeof y);
  CHECK_FAIL(fst_graph_evaluate_reference(g, inputs, 1, outputs, 1), FST_ERROR_UNSUPPORTED,
             "fst_graph_evaluate_reference", "matmul");
  CHECK(all_bytes(y, sizeof y, 0x5A));
  /* Unsupported is the caller's answer, not a graph error. */
  CHECK(fst_graph_status(g) == FST_OK);
  fst_graph_destroy(g);
}

void test_evaluate(void) {
  test_float_graph();
  test_typed_graph();
  test_bad_calls();
  test_opaque();
}
