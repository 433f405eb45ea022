/* Graph queries: values' dtype, rank and dims, inputs, outputs and counts, with good and
 * bad arguments. A failing query leaves its out-parameters untouched. */
#include <string.h>

#include "capi_check.h"

static void test_value_queries(fst_graph* g, fst_value x, fst_value s) {
  fst_dtype dtype = (fst_dtype)77;
  size_t rank = 77;
  int64_t dims[4] = {-7, -7, -7, -7};

  CHECK_FAIL(fst_value_dtype(NULL, x, &dtype), FST_ERROR_INVALID_ARGUMENT, "fst_value_dtype", "graph");
  CHECK_FAIL(fst_value_dtype(g, x, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_value_dtype", "out_dtype");
  CHECK_FAIL(fst_value_dtype(g, FST_VALUE_INVALID, &dtype), FST_ERROR_INVALID_ARGUMENT, "fst_value_dtype",
             "FST_VALUE_INVALID");
  CHECK_FAIL(fst_value_dtype(g, capi_foreign_value, &dtype), FST_ERROR_INVALID_ARGUMENT, "fst_value_dtype",
             "another graph");
  CHECK_FAIL(fst_value_dtype(g, capi_dead_value, &dtype), FST_ERROR_INVALID_ARGUMENT, "fst_value_dtype",
             "value");
  CHECK_FAIL(fst_value_dtype(g, UINT64_MAX, &dtype), FST_ERROR_INVALID_ARGUMENT, "fst_value_dtype", "value");
  CHECK(dtype == (fst_dtype)77);

  CHECK_FAIL(fst_value_rank(NULL, x, &rank), FST_ERROR_INVALID_ARGUMENT, "fst_value_rank", "graph");
  CHECK_FAIL(fst_value_rank(g, x, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_value_rank", "out_rank");
  CHECK_FAIL(fst_value_rank(g, FST_VALUE_INVALID, &rank), FST_ERROR_INVALID_ARGUMENT, "fst_value_rank",
             "FST_VALUE_INVALID");
  CHECK_FAIL(fst_value_rank(g, capi_foreign_value, &rank), FST_ERROR_INVALID_ARGUMENT, "fst_value_rank",
             "another graph");
  CHECK(rank == 77);

  CHECK_FAIL(fst_value_dims(NULL, x, 4, dims), FST_ERROR_INVALID_ARGUMENT, "fst_value_dims", "graph");
  CHECK_FAIL(fst_value_dims(g, x, 4, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_value_dims", "out_dims");
  CHECK_FAIL(fst_value_dims(g, x, 1, dims), FST_ERROR_INVALID_ARGUMENT, "fst_value_dims", "capacity");
  CHECK_FAIL(fst_value_dims(g, x, 0, dims), FST_ERROR_INVALID_ARGUMENT, "fst_value_dims", "capacity");
  CHECK_FAIL(fst_value_dims(g, FST_VALUE_INVALID, 4, dims), FST_ERROR_INVALID_ARGUMENT, "fst_value_dims",
             "FST_VALUE_INVALID");
  CHECK_FAIL(fst_value_dims(g, capi_foreign_value, 4, dims), FST_ERROR_INVALID_ARGUMENT, "fst_value_dims",
             "another graph");
  CHECK(dims[0] == -7 && dims[1] == -7 && dims[2] == -7 && dims[3] == -7);

  /* Exact capacity works; a scalar needs no buffer at all. */
  CHECK_OK(fst_value_dims(g, x, 2, dims));
  CHECK(dims[0] == 2 && dims[1] == 3 && dims[2] == -7);
  CHECK_OK(fst_value_dims(g, s, 0, NULL));
  CHECK_OK(fst_value_rank(g, s, &rank));
  CHECK(rank == 0);
  CHECK_OK(fst_value_dtype(g, s, &dtype));
  CHECK(dtype == FST_I64);
}

static void test_io_queries(fst_graph* g, fst_value x, fst_value s, fst_value y) {
  size_t count = 77;
  fst_value value = (fst_value)77;
  const char* name = (const char*)SENTINEL_PTR;

  CHECK_FAIL(fst_graph_input_count(NULL, &count), FST_ERROR_INVALID_ARGUMENT, "fst_graph_input_count",
             "graph");
  CHECK_FAIL(fst_graph_input_count(g, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_graph_input_count",
             "out_count");
  CHECK_FAIL(fst_graph_output_count(NULL, &count), FST_ERROR_INVALID_ARGUMENT, "fst_graph_output_count",
             "graph");
  CHECK_FAIL(fst_graph_output_count(g, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_graph_output_count",
             "out_count");
  CHECK_FAIL(fst_graph_value_count(NULL, &count), FST_ERROR_INVALID_ARGUMENT, "fst_graph_value_count",
             "graph");
  CHECK_FAIL(fst_graph_value_count(g, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_graph_value_count",
             "out_count");
  CHECK(count == 77);

  CHECK_FAIL(fst_graph_input(NULL, 0, &value, &name), FST_ERROR_INVALID_ARGUMENT, "fst_graph_input", "graph");
  CHECK_FAIL(fst_graph_input(g, 0, NULL, &name), FST_ERROR_INVALID_ARGUMENT, "fst_graph_input", "out_value");
  CHECK_FAIL(fst_graph_input(g, 2, &value, &name), FST_ERROR_INVALID_ARGUMENT, "fst_graph_input", "index 2");
  CHECK_FAIL(fst_graph_input(g, SIZE_MAX, &value, &name), FST_ERROR_INVALID_ARGUMENT, "fst_graph_input",
             "index");
  CHECK_FAIL(fst_graph_output(NULL, 0, &value, &name), FST_ERROR_INVALID_ARGUMENT, "fst_graph_output",
             "graph");
  CHECK_FAIL(fst_graph_output(g, 0, NULL, &name), FST_ERROR_INVALID_ARGUMENT, "fst_graph_output",
             "out_value");
  CHECK_FAIL(fst_graph_output(g, 3, &value, &name), FST_ERROR_INVALID_ARGUMENT, "fst_graph_output",
             "index 3");
  CHECK_FAIL(fst_graph_output(g, SIZE_MAX, &value, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_graph_output",
             "index");
  CHECK(value == (fst_value)77 && name == (const char*)SENTINEL_PTR);

  CHECK_OK(fst_graph_input_count(g, &count));
  CHECK(count == 2);
  CHECK_OK(fst_graph_input(g, 0, &value, &name));
  CHECK(value == x && name != NULL && strcmp(name, "x") == 0);
  CHECK_OK(fst_graph_input(g, 1, &value, NULL));
  CHECK(value == s);
  CHECK_OK(fst_graph_output_count(g, &count));
  CHECK(count == 3);
  CHECK_OK(fst_graph_output(g, 0, &value, &name));
  CHECK(value == y && name != NULL && strcmp(name, "y") == 0);
  CHECK_OK(fst_graph_output(g, 1, &value, &name));
  CHECK(value == y && name != NULL && strcmp(name, "y_again") == 0);
  CHECK_OK(fst_graph_output(g, 2, &value, NULL));
  CHECK(value == s);
  CHECK_OK(fst_graph_value_count(g, &count));
  CHECK(count == 3);
}

void test_queries(void) {
  fst_graph* g = capi_new_graph();
  fst_value x, s, y;
  if (g == NULL) return;
  x = fst_input(g, "x", FST_F32, 2, (const int64_t[]){2, 3});
  s = fst_input(g, "s", FST_I64, 0, NULL);
  y = fst_unary(g, FST_UNARY_TANH, x);
  CHECK_OK(fst_output(g, "y", y));
  CHECK_OK(fst_output(g, "y_again", y));
  CHECK_OK(fst_output(g, "s_out", s));
  test_value_queries(g, x, s);
  test_io_queries(g, x, s, y);
  /* Failed queries are not builder errors: the graph is still fine. */
  CHECK(fst_graph_status(g) == FST_OK);
  CHECK_OK(fst_graph_verify(g));
  fst_graph_destroy(g);
}
