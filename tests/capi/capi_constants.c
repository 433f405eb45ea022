/* Tensor constants through the C API: fst_constant_tensor with good and bad arguments, their
 * text round trip, the fusion's constants (fst_fusion_constant_count, fst_fusion_constant),
 * kernels that take them as FST_PARAM_CONSTANT parameters, a fused run and a framework-style
 * run of the kernels with fst_kernel_launch passing the host data, compared with the
 * reference. Runs are skipped when FSTITCH_CAPI_TEST_NO_COMPILE is set. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capi_check.h"

enum { kRows = 3, kCols = 5 };

static int compile_allowed(void) {
  const char* skip = getenv("FSTITCH_CAPI_TEST_NO_COMPILE");
  return skip == NULL || skip[0] == '\0';
}

static void test_builder(void) {
  const int64_t dims[2] = {2, 3};
  const int64_t too_many[FST_MAX_RANK + 1] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  const int64_t empty[1] = {0};
  const float six[6] = {1, 2, 3, 4, 5, 6};
  const int64_t answer[1] = {42};
  const unsigned char bools[3] = {1, 0, 2};
  fst_graph* g = capi_new_graph();
  fst_value c;
  if (g == NULL) return;
  c = fst_constant_tensor(g, FST_F32, 2, dims, six, sizeof six);
  CHECK_VALUE(g, c, FST_F32, 2, dims);
  c = fst_constant_tensor(g, FST_I64, 0, NULL, answer, sizeof answer); /* a scalar */
  CHECK_VALUE(g, c, FST_I64, 0, NULL);
  c = fst_constant_tensor(g, FST_BOOL, 1, (const int64_t[]){2}, bools, 2);
  CHECK_VALUE(g, c, FST_BOOL, 1, ((const int64_t[]){2}));
  fst_graph_destroy(g);

  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_constant_tensor(g, FST_F32, 2, dims, six, 20), FST_ERROR_INVALID_ARGUMENT,
                     "fst_constant_tensor", "bytes is 20, but a f32[2,3] tensor has 24");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_constant_tensor(g, FST_F32, 2, dims, NULL, 24), FST_ERROR_INVALID_ARGUMENT,
                     "fst_constant_tensor", "data is NULL");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_constant_tensor(g, (fst_dtype)99, 2, dims, six, 24), FST_ERROR_INVALID_ARGUMENT,
                     "fst_constant_tensor", "dtype 99");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_constant_tensor(g, FST_F32, 2, NULL, six, 24), FST_ERROR_INVALID_ARGUMENT,
                     "fst_constant_tensor", "dims is NULL");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_constant_tensor(g, FST_U8, FST_MAX_RANK + 1, too_many, six, 1), FST_ERROR_SHAPE,
                     "fst_constant_tensor", "rank");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_constant_tensor(g, FST_F32, 1, empty, six, 0), CAPI_EMPTY_DIM_STATUS,
                     "fst_constant_tensor", "dim 0 = 0");
  g = capi_new_graph();
  CHECK_BUILDER_FAIL(g, fst_constant_tensor(g, FST_BOOL, 1, (const int64_t[]){3}, bools, 3),
                     FST_ERROR_INVALID_ARGUMENT, "fst_constant_tensor", "element 2 is byte 2");
}

static void test_text_round_trip(void) {
  const uint16_t halves[3] = {0x7e01, 0x8000, 0x3c00}; /* a NaN payload, -0, 1 */
  fst_graph* g = capi_new_graph();
  fst_graph* parsed = NULL;
  char* text = NULL;
  char* again = NULL;
  if (g == NULL) return;
  CHECK_OK(
      fst_output(g, "h", fst_constant_tensor(g, FST_F16, 1, (const int64_t[]){3}, halves, sizeof halves)));
  CHECK_OK(fst_graph_print(g, &text));
  CHECK(capi_contains(text, "tensor [0x7e01, 0x8000, 0x3c00] : f16[3]"));
  CHECK_OK(fst_graph_parse(capi_context, text, strlen(text), &parsed));
  CHECK_OK(fst_graph_print(parsed, &again));
  CHECK(text != NULL && again != NULL && strcmp(text, again) == 0);
  fst_string_free(text);
  fst_string_free(again);
  fst_graph_destroy(parsed);
  fst_graph_destroy(g);
}

/* y = x * scale + bias: scale [cols] broadcast over rows, bias a [rows, cols] table. */
typedef struct scaled {
  fst_graph* g;
  float scale[kCols];
  float bias[kRows * kCols];
  float x[kRows * kCols];
  fst_value scale_value;
} scaled;

static void build_scaled(scaled* s) {
  const int64_t dims[2] = {kRows, kCols};
  fst_value x, scale, bias;
  int i;
  for (i = 0; i < kCols; ++i) s->scale[i] = 0.5f * (float)(i + 1);
  for (i = 0; i < kRows * kCols; ++i) {
    s->bias[i] = (float)(i % 4) - 1.5f;
    s->x[i] = 0.25f * (float)(i % 7);
  }
  s->g = capi_new_graph();
  if (s->g == NULL) return;
  x = fst_input(s->g, "x", FST_F32, 2, dims);
  scale = fst_constant_tensor(s->g, FST_F32, 1, &dims[1], s->scale, sizeof s->scale);
  bias = fst_constant_tensor(s->g, FST_F32, 2, dims, s->bias, sizeof s->bias);
  s->scale_value = scale;
  CHECK_OK(fst_output(s->g, "y",
                      fst_binary(s->g, FST_BINARY_ADD, fst_binary(s->g, FST_BINARY_MUL, x, scale), bias)));
}

static void test_fusion_constants(void) {
  scaled s;
  fst_fusion* f = NULL;
  size_t count = 99, bytes = 99, k, kernels = 0, constant_params = 0;
  const void* data = SENTINEL_PTR;
  fst_value value = FST_VALUE_INVALID;
  float y[kRows * kCols], expected[kRows * kCols];
  const void* inputs[1];
  void* outputs[1];
  build_scaled(&s);
  if (s.g == NULL) return;
  CHECK_OK(fst_fuse(s.g, NULL, &f));
  if (f == NULL) {
    fst_graph_destroy(s.g);
    return;
  }
  CHECK_OK(fst_fusion_constant_count(f, &count));
  CHECK(count == 2);
  CHECK_OK(fst_fusion_constant(f, 0, &data, &bytes, &value));
  CHECK(bytes == sizeof s.scale && data != NULL && memcmp(data, s.scale, bytes) == 0);
  CHECK(data != (const void*)s.scale); /* the fusion's own copy */
  CHECK(value == s.scale_value);
  CHECK_OK(fst_fusion_constant(f, 1, &data, &bytes, NULL));
  CHECK(bytes == sizeof s.bias && memcmp(data, s.bias, bytes) == 0);

  /* Errors leave the outputs untouched. */
  data = SENTINEL_PTR;
  bytes = 7;
  count = 7;
  CHECK_FAIL(fst_fusion_constant_count(NULL, &count), FST_ERROR_INVALID_ARGUMENT, "fst_fusion_constant_count",
             "fusion is NULL");
  CHECK_FAIL(fst_fusion_constant_count(f, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_fusion_constant_count",
             "out_count is NULL");
  CHECK_FAIL(fst_fusion_constant(f, 2, &data, &bytes, &value), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_constant", "the fusion has 2 constant(s)");
  CHECK_FAIL(fst_fusion_constant(NULL, 0, &data, &bytes, &value), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_constant", "fusion is NULL");
  CHECK_FAIL(fst_fusion_constant(f, 0, NULL, &bytes, &value), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_constant", "out_host_data is NULL");
  CHECK_FAIL(fst_fusion_constant(f, 0, &data, NULL, &value), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_constant", "out_bytes is NULL");
  CHECK(data == SENTINEL_PTR && bytes == 7 && count == 7);

  /* Kernels read the constants through FST_PARAM_CONSTANT parameters. */
  CHECK_OK(fst_fusion_kernel_count(f, &kernels));
  for (k = 0; k < kernels; ++k) {
    const fst_kernel* kernel = NULL;
    size_t nparams = 0, p;
    CHECK_OK(fst_fusion_kernel(f, k, &kernel));
    CHECK_OK(fst_kernel_param_count(kernel, &nparams));
    for (p = 0; p < nparams; ++p) {
      fst_param_kind kind;
      size_t index = 0;
      CHECK_OK(fst_kernel_param(kernel, p, &kind, &index, &value));
      if (kind == FST_PARAM_CONSTANT) {
        CHECK(index < 2);
        ++constant_params;
      }
    }
  }
  CHECK(constant_params == 2);

  if (compile_allowed()) {
    void* args[8];
    inputs[0] = s.x;
    outputs[0] = expected;
    CHECK_OK(fst_graph_evaluate_reference(s.g, inputs, 1, outputs, 1));
    memset(y, 0xff, sizeof y);
    outputs[0] = y;
    CHECK_OK(fst_fusion_run(f, inputs, 1, outputs, 1, NULL, NULL));
    CHECK(memcmp(y, expected, sizeof y) == 0);

    /* A framework launching the kernels itself passes the host data on the host backend. */
    memset(y, 0xff, sizeof y);
    for (k = 0; k < kernels; ++k) {
      const fst_kernel* kernel = NULL;
      size_t nparams = 0, p;
      CHECK_OK(fst_fusion_kernel(f, k, &kernel));
      CHECK_OK(fst_kernel_param_count(kernel, &nparams));
      CHECK(nparams <= 8);
      if (nparams > 8) break;
      for (p = 0; p < nparams; ++p) {
        fst_param_kind kind;
        size_t index = 0;
        CHECK_OK(fst_kernel_param(kernel, p, &kind, &index, NULL));
        args[p] = kind == FST_PARAM_INPUT ? (void*)s.x : kind == FST_PARAM_OUTPUT ? (void*)y : NULL;
        if (kind == FST_PARAM_CONSTANT) {
          CHECK_OK(fst_fusion_constant(f, index, &data, &bytes, NULL));
          args[p] = (void*)data;
        }
      }
      CHECK_OK(fst_kernel_launch(kernel, args, nparams, NULL));
    }
    CHECK(memcmp(y, expected, sizeof y) == 0);
  }
  fst_fusion_destroy(f);
  fst_graph_destroy(s.g);
}

void test_tensor_constants(void) {
  test_builder();
  test_text_round_trip();
  test_fusion_constants();
}
