/* Sizes computed from shapes: a value of more than 2^62 bytes is a shape error from every
 * builder and from the parser, whatever its element count; huge but valid graphs fuse with
 * exact byte numbers (and are not run); totals that no memory could hold are out-of-memory
 * errors at fuse time; the reference evaluator refuses a graph it cannot hold. */
#include <stdint.h>
#include <string.h>

#include "capi_check.h"

#define TWO_TO(n) ((int64_t)1 << (n))

static const char kLimitMessage[] = "more than the limit of 2^62 bytes for one value";

/* iota f64[2^31, 2^31] -> exp -> reduce_sum: 2^65 bytes, which wraps to 0 in 64 bits. */
static const char kHugeIotaText[] =
    "fstitch.graph 1\n"
    "%0 = iota axis=0 : f64[2147483648,2147483648]\n"
    "%1 = exp %0 : f64[2147483648,2147483648]\n"
    "%2 = reduce_sum %1 axes=[1] keepdims=false : f64[2147483648]\n"
    "output \"y\" = %2\n";

/* f64[2^61 + 32]: 2^64 + 256 bytes, which wraps to 256. */
static const char kHugeInputText[] =
    "fstitch.graph 1\n"
    "%0 = input \"x\" : f64[2305843009213693984]\n"
    "%1 = exp %0 : f64[2305843009213693984]\n"
    "%2 = reduce_sum %1 axes=[0] keepdims=false : f64[]\n"
    "output \"y\" = %2\n";

static void test_parse_too_large(void) {
  fst_graph* parsed = (fst_graph*)SENTINEL_PTR;
  CHECK_FAIL(fst_graph_parse(capi_context, kHugeIotaText, strlen(kHugeIotaText), &parsed), FST_ERROR_SHAPE,
             "fst_graph_parse", "line 2, column 6: iota result f64[2147483648,2147483648]");
  CHECK(capi_contains(fst_last_error_message(), kLimitMessage));
  CHECK_FAIL(fst_graph_parse(capi_context, kHugeInputText, strlen(kHugeInputText), &parsed), FST_ERROR_SHAPE,
             "fst_graph_parse", "line 2, column 6: input \"x\" f64[2305843009213693984]");
  CHECK(capi_contains(fst_last_error_message(), kLimitMessage));
  CHECK(parsed == (fst_graph*)SENTINEL_PTR);
}

static void test_builders_too_large(void) {
  const int64_t square[] = {TWO_TO(31), TWO_TO(31)};
  const int64_t input_dims[] = {TWO_TO(61) + 32};
  const int64_t just_over[] = {TWO_TO(60) + 1};
  const int64_t at_limit[] = {TWO_TO(62)};
  fst_graph* g;
  fst_value x;

  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_iota(g, FST_F64, 2, square, 0), FST_ERROR_SHAPE, "fst_iota", kLimitMessage);
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_input(g, "x", FST_F64, 1, input_dims), FST_ERROR_SHAPE, "fst_input",
                     kLimitMessage);
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_input(g, "x", FST_F32, 1, just_over), FST_ERROR_SHAPE, "fst_input",
                     "f32[1152921504606846977]");
  /* INT64_MAX elements can be counted, but not of one byte each. */
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_input(g, "x", FST_I8, 2, (const int64_t[]){INT64_MAX, 1}), FST_ERROR_SHAPE,
                     "fst_input", kLimitMessage);

  /* Exactly 2^62 bytes is allowed; a cast that widens it is not. */
  g = capi_new_graph();
  x = fst_input(g, "x", FST_U8, 1, at_limit);
  CHECK(x != FST_VALUE_INVALID);
  CHECK_BUILDER_FAIL(g, fst_cast(g, x, FST_F32), FST_ERROR_SHAPE, "fst_cast", kLimitMessage);
  g = capi_new_graph();
  x = fst_input(g, "x", FST_F32, 1, (const int64_t[]){1});
  CHECK_BUILDER_FAIL(g, fst_broadcast(g, x, 2, square), FST_ERROR_SHAPE, "fst_broadcast", kLimitMessage);
  g = capi_graph_with_x(&x);
  CHECK_BUILDER_FAIL(g, fst_opaque(g, "matmul", 1, &x, FST_I64, 2, square), FST_ERROR_SHAPE, "fst_opaque",
                     kLimitMessage);
}

/* f32[2^40] -> exp: 4 TiB in and out. Fuses into one kernel at the lower bound, nothing
 * wraps; it is never run. */
static void test_huge_valid_graph(void) {
  const int64_t dims[] = {TWO_TO(40)};
  const uint64_t value_bytes = (uint64_t)4 << 40;
  fst_graph* g = capi_new_graph();
  fst_fusion* fusion = NULL;
  const fst_kernel* kernel = NULL;
  const char* source = NULL;
  size_t workspace = 1, count = 0;
  uint64_t planned = 0, lower = 0, read = 0, written = 0;
  float input = 1.0f, output = 0.0f;
  const void* inputs[1];
  void* outputs[1];
  fst_value x;

  inputs[0] = &input;
  outputs[0] = &output;
  x = fst_input(g, "x", FST_F32, 1, dims);
  CHECK_OK(fst_output(g, "y", fst_unary(g, FST_UNARY_EXP, x)));
  CHECK_OK(fst_fuse(g, NULL, &fusion));
  if (fusion != NULL) {
    CHECK_OK(fst_fusion_kernel_count(fusion, &count));
    CHECK(count == 1);
    CHECK_OK(fst_fusion_workspace_size(fusion, &workspace));
    CHECK(workspace == 0);
    CHECK_OK(fst_fusion_planned_bytes(fusion, &planned, &lower));
    CHECK(planned == 2 * value_bytes);
    CHECK(lower == 2 * value_bytes);
    CHECK_OK(fst_fusion_kernel(fusion, 0, &kernel));
    CHECK_OK(fst_kernel_estimated_bytes(kernel, &read, &written));
    CHECK(read == value_bytes && written == value_bytes);
    CHECK_OK(fst_kernel_source(kernel, &source));
    CHECK(source != NULL && capi_contains(source, "const long long n = 1099511627776LL;"));
    fst_fusion_destroy(fusion);
  }
  /* The reference evaluator cannot hold 2 x 8 TiB of doubles: out of memory, nothing written. */
  CHECK_FAIL(fst_graph_evaluate_reference(g, inputs, 1, outputs, 1), FST_ERROR_OUT_OF_MEMORY,
             "fst_graph_evaluate_reference", "the reference evaluator would hold 17592186044416 bytes");
  CHECK(output == 0.0f);
  fst_graph_destroy(g);
}

/* Four opaque results of 2^62 bytes each keep workspace slots of their own (2^64 bytes in
 * all); four inputs of 2^62 bytes make the plan move more than 2^64 bytes. */
static void test_totals_too_large(void) {
  const int64_t big[] = {TWO_TO(62)};
  const char* names[] = {"y0", "y1", "y2", "y3"};
  const int64_t axis = 0;
  fst_fusion* fusion = (fst_fusion*)SENTINEL_PTR;
  fst_graph* g = capi_new_graph();
  fst_value x = fst_input(g, "x", FST_U8, 1, (const int64_t[]){1});
  int i;
  for (i = 0; i < 4; ++i) {
    fst_value result = fst_opaque(g, "fill", 1, &x, FST_U8, 1, big);
    CHECK_OK(fst_output(g, names[i], fst_reduce(g, FST_REDUCE_MAX, result, 1, &axis, 0)));
  }
  CHECK_FAIL(fst_fuse(g, NULL, &fusion), FST_ERROR_OUT_OF_MEMORY, "fst_fuse",
             "the workspace would need more than 2^62 bytes");
  CHECK(fusion == (fst_fusion*)SENTINEL_PTR);
  fst_graph_destroy(g);

  g = capi_new_graph();
  for (i = 0; i < 4; ++i) {
    const char* inputs[] = {"x0", "x1", "x2", "x3"};
    x = fst_input(g, inputs[i], FST_U8, 1, big);
    CHECK_OK(fst_output(g, names[i], fst_reduce(g, FST_REDUCE_MAX, x, 1, &axis, 0)));
  }
  CHECK_FAIL(fst_fuse(g, NULL, &fusion), FST_ERROR_OUT_OF_MEMORY, "fst_fuse", "more than 2^64 bytes");
  CHECK(fusion == (fst_fusion*)SENTINEL_PTR);
  fst_graph_destroy(g);
}

void test_sizes(void) {
  test_parse_too_large();
  test_builders_too_large();
  test_huge_valid_graph();
  test_totals_too_large();
}
