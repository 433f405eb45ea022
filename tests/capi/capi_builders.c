/* Graph lifetime and the builders' success paths: every kind of operation, with the dtype
 * and shape each one must infer. */
#include <stdio.h>
#include <string.h>

#include "capi_check.h"

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

void capi_check_value(const fst_graph* g, fst_value value, fst_dtype dtype, size_t rank, const int64_t* dims,
                      const char* file, int line) {
  fst_dtype got_dtype = (fst_dtype)0;
  size_t got_rank = 99;
  int64_t got_dims[FST_MAX_RANK + 1];
  size_t i;
  int dims_ok = 1;
  capi_record(value != FST_VALUE_INVALID, file, line, "value is valid");
  capi_record(fst_value_dtype(g, value, &got_dtype) == FST_OK && got_dtype == dtype, file, line,
              "fst_value_dtype gives the expected dtype");
  capi_record(fst_value_rank(g, value, &got_rank) == FST_OK && got_rank == rank, file, line,
              "fst_value_rank gives the expected rank");
  for (i = 0; i < COUNT_OF(got_dims); ++i) got_dims[i] = -12345;
  capi_record(fst_value_dims(g, value, COUNT_OF(got_dims), got_dims) == FST_OK, file, line,
              "fst_value_dims succeeds");
  for (i = 0; i < rank && i < FST_MAX_RANK; ++i) dims_ok = dims_ok && got_dims[i] == dims[i];
  for (; i < COUNT_OF(got_dims); ++i) dims_ok = dims_ok && got_dims[i] == -12345;
  capi_record(dims_ok, file, line,
              "fst_value_dims gives the expected dims and writes nothing beyond the rank");
}

/* Adds an output named "<prefix><index>" for `value`. */
static void add_output(fst_graph* g, const char* prefix, int index, fst_value value) {
  char name[64];
  snprintf(name, sizeof name, "%s%d", prefix, index);
  CHECK_OK(fst_output(g, name, value));
}

fst_graph* capi_build_all_ops(void) {
  static const int64_t kDims23[] = {2, 3};
  static const int64_t kDims2[] = {2};
  static const int64_t kDims3[] = {3};
  static const int64_t kDims11[] = {1, 1};
  static const int64_t kDims21[] = {2, 1};
  static const fst_dtype kAllDTypes[] = {FST_F32, FST_F16, FST_BF16, FST_F64, FST_I8,
                                         FST_I32, FST_I64, FST_U8,   FST_BOOL};
  fst_graph* g = capi_new_graph();
  fst_value x, b, scalar, v, cond, perm;
  int op;
  size_t i;
  if (g == NULL) return NULL;

  x = fst_input(g, "x", FST_F32, 2, kDims23);
  b = fst_input(g, "b", FST_F32, 1, kDims3);
  scalar = fst_input(g, "scalar", FST_F64, 0, NULL);
  CHECK_VALUE(g, x, FST_F32, 2, kDims23);
  CHECK_VALUE(g, b, FST_F32, 1, kDims3);
  CHECK_VALUE(g, scalar, FST_F64, 0, NULL);

  for (op = FST_UNARY_NEG; op <= FST_UNARY_LOGICAL_NOT; ++op) {
    v = fst_unary(g, (fst_unary_op)op, x);
    CHECK_VALUE(g, v, op == FST_UNARY_LOGICAL_NOT ? FST_BOOL : FST_F32, 2, kDims23);
    add_output(g, "unary_", op, v);
  }
  for (op = FST_BINARY_ADD; op <= FST_BINARY_LOGICAL_OR; ++op) {
    v = fst_binary(g, (fst_binary_op)op, x, b);
    CHECK_VALUE(g, v, op >= FST_BINARY_EQ ? FST_BOOL : FST_F32, 2, kDims23);
    add_output(g, "binary_", op, v);
  }
  for (op = FST_REDUCE_SUM; op <= FST_REDUCE_PROD; ++op) {
    v = fst_reduce(g, (fst_reduce_op)op, x, 1, (const int64_t[]){1}, 0);
    CHECK_VALUE(g, v, FST_F32, 1, kDims2);
    add_output(g, "reduce_", op, v);
    v = fst_reduce(g, (fst_reduce_op)op, x, 2, (const int64_t[]){-1, 0}, 1);
    CHECK_VALUE(g, v, FST_F32, 2, kDims11);
    add_output(g, "reduce_keep_", op, v);
  }
  v = fst_reduce(g, FST_REDUCE_SUM, x, 2, (const int64_t[]){0, 1}, 0);
  CHECK_VALUE(g, v, FST_F32, 0, NULL);
  add_output(g, "reduce_all_", 0, v);
  v = fst_reduce(g, FST_REDUCE_MAX, x, 1, (const int64_t[]){-1}, 1);
  CHECK_VALUE(g, v, FST_F32, 2, kDims21);
  add_output(g, "reduce_last_", 0, v);

  cond = fst_binary(g, FST_BINARY_GT, x, b);
  v = fst_select(g, cond, x, fst_constant_f64(g, FST_F32, 0.5));
  CHECK_VALUE(g, v, FST_F32, 2, kDims23);
  add_output(g, "select_", 0, v);

  for (i = 0; i < COUNT_OF(kAllDTypes); ++i) {
    v = fst_cast(g, x, kAllDTypes[i]);
    CHECK_VALUE(g, v, kAllDTypes[i], 2, kDims23);
    add_output(g, "cast_", (int)kAllDTypes[i], v);
    v = fst_constant_f64(g, kAllDTypes[i], -2.75);
    CHECK_VALUE(g, v, kAllDTypes[i], 0, NULL);
    add_output(g, "const_f64_", (int)kAllDTypes[i], v);
    v = fst_constant_i64(g, kAllDTypes[i], 300);
    CHECK_VALUE(g, v, kAllDTypes[i], 0, NULL);
    add_output(g, "const_i64_", (int)kAllDTypes[i], v);
  }
  v = fst_constant_f64(g, FST_F64, 0.1);
  CHECK_VALUE(g, v, FST_F64, 0, NULL);
  add_output(g, "const_tenth", 0, v);
  v = fst_constant_i64(g, FST_I64, INT64_MIN);
  CHECK_VALUE(g, v, FST_I64, 0, NULL);
  add_output(g, "const_i64_min", 0, v);

  v = fst_broadcast(g, b, 3, (const int64_t[]){4, 2, 3});
  CHECK_VALUE(g, v, FST_F32, 3, ((const int64_t[]){4, 2, 3}));
  add_output(g, "broadcast_", 0, v);
  v = fst_broadcast(g, scalar, 2, (const int64_t[]){2, 2});
  CHECK_VALUE(g, v, FST_F64, 2, ((const int64_t[]){2, 2}));
  add_output(g, "broadcast_", 1, v);

  v = fst_reshape(g, x, 3, (const int64_t[]){3, -1, 1});
  CHECK_VALUE(g, v, FST_F32, 3, ((const int64_t[]){3, 2, 1}));
  add_output(g, "reshape_", 0, v);
  v = fst_reshape(g, x, 1, (const int64_t[]){6});
  CHECK_VALUE(g, v, FST_F32, 1, ((const int64_t[]){6}));
  add_output(g, "reshape_", 1, v);

  perm = fst_permute(g, x, 2, (const int64_t[]){1, 0});
  CHECK_VALUE(g, perm, FST_F32, 2, ((const int64_t[]){3, 2}));
  add_output(g, "permute_", 0, perm);

  v = fst_iota(g, FST_I32, 2, kDims23, 1);
  CHECK_VALUE(g, v, FST_I32, 2, kDims23);
  add_output(g, "iota_", 0, v);
  v = fst_iota(g, FST_F16, 1, (const int64_t[]){5}, 0);
  CHECK_VALUE(g, v, FST_F16, 1, ((const int64_t[]){5}));
  add_output(g, "iota_", 1, v);

  v = fst_opaque(g, "matmul", 2, (const fst_value[]){x, perm}, FST_F32, 2, (const int64_t[]){2, 2});
  CHECK_VALUE(g, v, FST_F32, 2, ((const int64_t[]){2, 2}));
  add_output(g, "opaque_", 0, fst_unary(g, FST_UNARY_EXP, v));
  v = fst_opaque(g, "rng.uniform_v-2", 0, NULL, FST_BF16, 0, NULL);
  CHECK_VALUE(g, v, FST_BF16, 0, NULL);
  add_output(g, "opaque_", 1, v);

  /* One value may be several outputs; an input may be an output. */
  CHECK_OK(fst_output(g, "x_again", x));
  CHECK_OK(fst_output(g, "x_once_more", x));
  CHECK_OK(fst_output(g, "scalar_out", scalar));

  CHECK(fst_graph_status(g) == FST_OK);
  CHECK_OK(fst_graph_verify(g));
  return g;
}

static void test_graph_create(void) {
  fst_graph* g = (fst_graph*)SENTINEL_PTR;
  CHECK_FAIL(fst_graph_create(NULL, &g), FST_ERROR_INVALID_ARGUMENT, "fst_graph_create", "context");
  CHECK(g == (fst_graph*)SENTINEL_PTR);
  CHECK_FAIL(fst_graph_create(capi_context, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_graph_create",
             "out_graph");
  fst_graph_destroy(NULL);

  CHECK_FAIL(fst_graph_status(NULL), FST_ERROR_INVALID_ARGUMENT, "fst_graph_status", "graph");
  CHECK(fst_graph_error_message(NULL) != NULL && strcmp(fst_graph_error_message(NULL), "") == 0);
  CHECK_FAIL(fst_graph_verify(NULL), FST_ERROR_INVALID_ARGUMENT, "fst_graph_verify", "graph");

  /* A new graph is clean but does not verify: it has no outputs. */
  g = capi_new_graph();
  CHECK(fst_graph_status(g) == FST_OK);
  CHECK(fst_graph_error_message(g) != NULL && strcmp(fst_graph_error_message(g), "") == 0);
  CHECK(capi_value_count(g) == 0);
  CHECK_FAIL(fst_graph_verify(g), FST_ERROR_INVALID_ARGUMENT, "fst_graph_verify", "output");
  /* A failed verification is not a builder error: the graph stays usable. */
  CHECK(fst_graph_status(g) == FST_OK);
  CHECK_OK(fst_output(g, "c", fst_constant_f64(g, FST_F32, 1.0)));
  CHECK_OK(fst_graph_verify(g));
  fst_graph_destroy(g);
}

/* Graphs hold their own reference to the context, so it may go first. */
static void test_context_outlives(void) {
  fst_context* context = NULL;
  fst_graph* first = NULL;
  fst_graph* second = NULL;
  fst_value x;
  float in[2] = {1.5f, -4.0f};
  float out[2] = {0.0f, 0.0f};
  const void* inputs[1];
  void* outputs[1];
  inputs[0] = in;
  outputs[0] = out;

  CHECK_OK(fst_context_create(NULL, &context));
  CHECK_OK(fst_graph_create(context, &first));
  CHECK_OK(fst_graph_create(context, &second));
  fst_context_destroy(context);
  if (first == NULL || second == NULL) {
    fst_graph_destroy(first);
    fst_graph_destroy(second);
    return;
  }
  x = fst_input(first, "x", FST_F32, 1, (const int64_t[]){2});
  CHECK_OK(
      fst_output(first, "y", fst_binary(first, FST_BINARY_MUL, x, fst_constant_f64(first, FST_F32, 2.0))));
  CHECK_OK(fst_graph_verify(first));
  fst_graph_destroy(second);
  CHECK_OK(fst_graph_evaluate_reference(first, inputs, 1, outputs, 1));
  CHECK(out[0] == 3.0f && out[1] == -8.0f);
  fst_graph_destroy(first);
}

static void test_special_shapes(void) {
  static const int64_t kRank8[FST_MAX_RANK] = {1, 2, 1, 2, 1, 2, 1, 2};
  fst_graph* g = capi_new_graph();
  fst_value x, y, v;
  size_t before;
  if (g == NULL) return;
  /* The maximum rank, and dims whose bytes are exactly at the limit of 2^62 (capi_sizes.c
   * has the values beyond it). */
  v = fst_input(g, "rank8", FST_U8, FST_MAX_RANK, kRank8);
  CHECK_VALUE(g, v, FST_U8, FST_MAX_RANK, kRank8);
  v = fst_input(g, "huge", FST_I8, 2, (const int64_t[]){(int64_t)1 << 62, 1});
  CHECK_VALUE(g, v, FST_I8, 2, ((const int64_t[]){(int64_t)1 << 62, 1}));
  CHECK(fst_graph_status(g) == FST_OK);
  fst_graph_destroy(g);

  /* Broadcasting adds explicit broadcast values; equal shapes need none. */
  g = capi_new_graph();
  if (g == NULL) return;
  x = fst_input(g, "x", FST_I32, 2, (const int64_t[]){2, 3});
  y = fst_input(g, "y", FST_I32, 2, (const int64_t[]){2, 1});
  before = capi_value_count(g);
  v = fst_binary(g, FST_BINARY_ADD, x, x);
  CHECK(capi_value_count(g) == before + 1);
  before = capi_value_count(g);
  v = fst_binary(g, FST_BINARY_SUB, v, y);
  CHECK(capi_value_count(g) >= before + 2);
  CHECK_VALUE(g, v, FST_I32, 2, ((const int64_t[]){2, 3}));
  v = fst_binary(g, FST_BINARY_MUL, fst_constant_i64(g, FST_I32, 3), y);
  CHECK_VALUE(g, v, FST_I32, 2, ((const int64_t[]){2, 1}));
  v = fst_select(g, fst_constant_i64(g, FST_BOOL, 1), y,
                 fst_input(g, "row", FST_I32, 1, (const int64_t[]){4}));
  CHECK_VALUE(g, v, FST_I32, 2, ((const int64_t[]){2, 4}));
  CHECK_OK(fst_output(g, "v", v));
  CHECK(fst_graph_status(g) == FST_OK);
  fst_graph_destroy(g);
}

void test_graph_lifetime(void) {
  test_graph_create();
  test_context_outlives();
}

void test_builders_ok(void) {
  fst_graph* g = capi_build_all_ops();
  fst_graph_destroy(g);
  test_special_shapes();
}
