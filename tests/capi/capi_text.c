/* The text format through the C API: print, parse, exact round trips, and malformed text of
 * many kinds, each rejected with the right status and the line at fault. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_check.h"

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* A valid graph, written by hand in the canonical form print produces. */
static const char kSmallText[] =
    "fstitch.graph 1\n"
    "%0 = input \"x\" : f32[2,3]\n"
    "%1 = exp %0 : f32[2,3]\n"
    "%2 = reduce_sum %1 axes=[1] keepdims=false : f32[2]\n"
    "output \"y\" = %2\n";

/* Prints `g`; NULL and a failed check on error. Release with fst_string_free(). */
static char* print_or_null(const fst_graph* g) {
  char* text = NULL;
  CHECK_OK(fst_graph_print(g, &text));
  CHECK(text != NULL);
  return text;
}

static void test_bad_arguments(void) {
  fst_graph* g = capi_new_graph();
  fst_graph* parsed = (fst_graph*)SENTINEL_PTR;
  char* text = (char*)SENTINEL_PTR;

  CHECK_FAIL(fst_graph_print(NULL, &text), FST_ERROR_INVALID_ARGUMENT, "fst_graph_print", "graph");
  CHECK_FAIL(fst_graph_print(g, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_graph_print", "out_text");
  CHECK(text == (char*)SENTINEL_PTR);
  CHECK_FAIL(fst_graph_parse(NULL, kSmallText, (size_t)-1, &parsed), FST_ERROR_INVALID_ARGUMENT,
             "fst_graph_parse", "context");
  CHECK_FAIL(fst_graph_parse(capi_context, NULL, (size_t)-1, &parsed), FST_ERROR_INVALID_ARGUMENT,
             "fst_graph_parse", "text");
  CHECK_FAIL(fst_graph_parse(capi_context, NULL, 0, &parsed), FST_ERROR_INVALID_ARGUMENT, "fst_graph_parse",
             "text");
  CHECK_FAIL(fst_graph_parse(capi_context, kSmallText, (size_t)-1, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_graph_parse", "out_graph");
  CHECK(parsed == (fst_graph*)SENTINEL_PTR);
  fst_string_free(NULL);

  /* A graph without outputs still prints (it is a valid, if useless, graph under construction). */
  text = print_or_null(g);
  CHECK(text != NULL && strcmp(text, "fstitch.graph 1\n") == 0);
  fst_string_free(text);
  fst_graph_destroy(g);
}

/* Checks that `a` and `b` have the same inputs, outputs and value types. */
static void check_same_structure(const fst_graph* a, const fst_graph* b) {
  size_t na = 0, nb = 0, i;
  CHECK_OK(fst_graph_value_count(a, &na));
  CHECK_OK(fst_graph_value_count(b, &nb));
  CHECK(na == nb);
  CHECK_OK(fst_graph_input_count(a, &na));
  CHECK_OK(fst_graph_input_count(b, &nb));
  CHECK(na == nb);
  CHECK_OK(fst_graph_output_count(a, &na));
  CHECK_OK(fst_graph_output_count(b, &nb));
  CHECK(na == nb);
  for (i = 0; i < na && i < nb; ++i) {
    fst_value va = FST_VALUE_INVALID, vb = FST_VALUE_INVALID;
    const char* name_a = NULL;
    const char* name_b = NULL;
    fst_dtype da = FST_F32, db = FST_BOOL;
    size_t ra = 0, rb = 99;
    int64_t dims_a[FST_MAX_RANK] = {0}, dims_b[FST_MAX_RANK] = {0};
    CHECK_OK(fst_graph_output(a, i, &va, &name_a));
    CHECK_OK(fst_graph_output(b, i, &vb, &name_b));
    CHECK(name_a != NULL && name_b != NULL && strcmp(name_a, name_b) == 0);
    CHECK(va != vb); /* values identify their graph */
    CHECK_OK(fst_value_dtype(a, va, &da));
    CHECK_OK(fst_value_dtype(b, vb, &db));
    CHECK(da == db);
    CHECK_OK(fst_value_rank(a, va, &ra));
    CHECK_OK(fst_value_rank(b, vb, &rb));
    CHECK(ra == rb);
    CHECK_OK(fst_value_dims(a, va, FST_MAX_RANK, dims_a));
    CHECK_OK(fst_value_dims(b, vb, FST_MAX_RANK, dims_b));
    CHECK(memcmp(dims_a, dims_b, sizeof dims_a) == 0);
  }
}

/* print(parse(print(g))) == print(g), and the parsed graph has g's structure. */
static void check_round_trip(const fst_graph* g) {
  char* first = print_or_null(g);
  char* second = NULL;
  fst_graph* parsed = NULL;
  if (first == NULL) return;
  CHECK_OK(fst_graph_parse(capi_context, first, (size_t)-1, &parsed));
  if (parsed != NULL) {
    CHECK(fst_graph_status(parsed) == FST_OK);
    CHECK_OK(fst_graph_verify(parsed));
    second = print_or_null(parsed);
    CHECK(second != NULL && strcmp(first, second) == 0);
    if (second != NULL && strcmp(first, second) != 0)
      fprintf(stderr, "printed:\n%s\nreprinted:\n%s\n", first, second);
    check_same_structure(g, parsed);
  }
  fst_string_free(second);
  fst_graph_destroy(parsed);
  fst_string_free(first);
}

/* Evaluates a graph without inputs whose outputs are all scalars into `out` (8 bytes each). */
#define MAX_SCALARS 64
static void evaluate_scalars(const fst_graph* g, size_t count, unsigned char (*out)[8]) {
  void* outputs[MAX_SCALARS];
  size_t i;
  CHECK(count <= MAX_SCALARS);
  if (count > MAX_SCALARS) return;
  for (i = 0; i < count; ++i) {
    memset(out[i], 0xA5, 8);
    outputs[i] = out[i];
  }
  CHECK_OK(fst_graph_evaluate_reference(g, NULL, 0, outputs, count));
}

/* Constants at the edges of their dtypes survive print and parse bit for bit. */
static void test_constant_round_trip(void) {
  static const double kDoubles[] = {0.1, -0.0, 5e-324, DBL_MAX, -DBL_MAX, 1.0 / 3.0, 123456789.125};
  static const fst_dtype kFloatTypes[] = {FST_F64, FST_F32, FST_F16, FST_BF16};
  unsigned char before[MAX_SCALARS][8], after[MAX_SCALARS][8];
  fst_graph* g = capi_new_graph();
  fst_graph* parsed = NULL;
  char name[32];
  char* text;
  size_t i, j, count = 0;
  if (g == NULL) return;
  for (i = 0; i < COUNT_OF(kDoubles); ++i) {
    for (j = 0; j < COUNT_OF(kFloatTypes); ++j) {
      snprintf(name, sizeof name, "c%u", (unsigned)count++);
      CHECK_OK(fst_output(g, name, fst_constant_f64(g, kFloatTypes[j], kDoubles[i])));
    }
  }
  CHECK_OK(fst_output(g, "inf", fst_constant_f64(g, FST_F32, HUGE_VAL)));
  CHECK_OK(fst_output(g, "minus_inf", fst_constant_f64(g, FST_F16, -HUGE_VAL)));
  CHECK_OK(fst_output(g, "nan", fst_constant_f64(g, FST_F64, NAN)));
  CHECK_OK(fst_output(g, "i64_min", fst_constant_i64(g, FST_I64, INT64_MIN)));
  CHECK_OK(fst_output(g, "i64_max", fst_constant_i64(g, FST_I64, INT64_MAX)));
  CHECK_OK(fst_output(g, "u8_max", fst_constant_i64(g, FST_U8, 255)));
  CHECK_OK(fst_output(g, "i8_min", fst_constant_i64(g, FST_I8, -128)));
  CHECK_OK(fst_output(g, "true", fst_constant_i64(g, FST_BOOL, 1)));
  count += 8;
  check_round_trip(g);

  text = print_or_null(g);
  if (text != NULL) CHECK_OK(fst_graph_parse(capi_context, text, strlen(text), &parsed));
  if (parsed != NULL) {
    evaluate_scalars(g, count, before);
    evaluate_scalars(parsed, count, after);
    for (i = 0; i < count; ++i) CHECK(memcmp(before[i], after[i], 8) == 0);
  }
  fst_graph_destroy(parsed);
  fst_string_free(text);
  fst_graph_destroy(g);
}

static void test_round_trips(void) {
  fst_graph* g = capi_build_all_ops();
  fst_graph* parsed = NULL;
  char* text;
  char padded[512];
  float x[6] = {0.5f, -1.0f, 2.0f, 0.0f, 1.5f, -3.0f};
  float y[2] = {0.0f, 0.0f};
  const void* inputs[1];
  void* outputs[1];

  if (g != NULL) check_round_trip(g);
  fst_graph_destroy(g);
  test_constant_round_trip();

  /* Hand-written text in canonical form prints back unchanged. */
  CHECK_OK(fst_graph_parse(capi_context, kSmallText, (size_t)-1, &parsed));
  text = parsed != NULL ? print_or_null(parsed) : NULL;
  CHECK(text != NULL && strcmp(text, kSmallText) == 0);
  fst_string_free(text);

  /* ... and means what it says: y[i] = sum_j f32(exp(x[i][j])), accumulated in f64. */
  inputs[0] = x;
  outputs[0] = y;
  if (parsed != NULL) {
    double expected0 = (double)(float)exp(0.5) + (double)(float)exp(-1.0) + (double)(float)exp(2.0);
    double expected1 = (double)(float)exp(0.0) + (double)(float)exp(1.5) + (double)(float)exp(-3.0);
    CHECK_OK(fst_graph_evaluate_reference(parsed, inputs, 1, outputs, 1));
    CHECK(y[0] == (float)expected0);
    CHECK(y[1] == (float)expected1);
  }
  fst_graph_destroy(parsed);
  parsed = NULL;

  /* An explicit length: whatever follows it is not read. */
  snprintf(padded, sizeof padded, "%s%s", kSmallText, "this is not part of the graph");
  CHECK_OK(fst_graph_parse(capi_context, padded, strlen(kSmallText), &parsed));
  text = parsed != NULL ? print_or_null(parsed) : NULL;
  CHECK(text != NULL && strcmp(text, kSmallText) == 0);
  fst_string_free(text);
  fst_graph_destroy(parsed);
  parsed = NULL;

  /* Comments, blank lines, other value names and no final newline give the canonical form. */
  CHECK_OK(fst_graph_parse(capi_context,
                           "# a comment\n\nfstitch.graph 1   # header\n"
                           "%in = input \"x\" : f32[2,3]\n"
                           "  %e.1 = exp %in : f32[2,3]\n"
                           "%sum = reduce_sum %e.1 axes=[1] keepdims=false : f32[2]\n"
                           "output \"y\" = %sum",
                           (size_t)-1, &parsed));
  text = parsed != NULL ? print_or_null(parsed) : NULL;
  CHECK(text != NULL && strcmp(text, kSmallText) == 0);
  fst_string_free(text);
  fst_graph_destroy(parsed);
}

/* One malformed text, the status it must give and the line the message must name. */
typedef struct bad_text {
  const char* text;
  size_t length; /* (size_t)-1: NUL-terminated */
  fst_status status;
  const char* line;
} bad_text;

static void test_malformed(void) {
  static const char kWithNul[] = "fstitch.graph 1\n%0 = input \"x\"\0 : f32[2]\n";
  static const bad_text kCases[] = {
      {"", (size_t)-1, FST_ERROR_PARSE, "line 1"},
      {"hello world\n", (size_t)-1, FST_ERROR_PARSE, "line 1"},
      {"%0 = input \"x\" : f32[2,3]\noutput \"y\" = %0\n", (size_t)-1, FST_ERROR_PARSE, "line 1"},
      {"fstitch.graph 2\n", (size_t)-1, FST_ERROR_PARSE, "line 1"},
      {"fstitch.graph 1\nfstitch.graph 1\n", (size_t)-1, FST_ERROR_PARSE, "line 2"},
      {"fstitch.graph 1\n%0 = input \"x\" : f32[2,3]\n%1 = expp %0 : f32[2,3]\n", (size_t)-1, FST_ERROR_PARSE,
       "line 3"},
      {"fstitch.graph 1\n%0 = input \"x\" : f31[2,3]\n", (size_t)-1, FST_ERROR_PARSE, "line 2"},
      {"fstitch.graph 1\n%0 = input \"x\" : f32[2,3]\n%1 = exp %7 : f32[2,3]\n", (size_t)-1, FST_ERROR_PARSE,
       "line 3"},
      {"fstitch.graph 1\n%0 = input \"x : f32[2,3]\n", (size_t)-1, FST_ERROR_PARSE, "line 2"},
      {"fstitch.graph 1\n%0 = input \"x\" : f32[2,3\n", (size_t)-1, FST_ERROR_PARSE, "line 2"},
      {"fstitch.graph 1\n%0 = input \"x\" : f32[2,3]\n%0 = exp %0 : f32[2,3]\n", (size_t)-1, FST_ERROR_PARSE,
       "line 3"},
      {"fstitch.graph 1\n%0 = input \"x\" : f32[99999999999999999999]\n", (size_t)-1, FST_ERROR_PARSE,
       "line 2"},
      {"fstitch.graph 1\n%0 = constant 300 : i8\n", (size_t)-1, FST_ERROR_PARSE, "line 2"},
      {"fstitch.graph 1\n%0 = constant 1.5.2 : f32\n", (size_t)-1, FST_ERROR_PARSE, "line 2"},
      {"fstitch.graph 1\n%0 = input \"x\" : f32[2]\n%1 = reduce_sum %0 axes=[0] : f32\n", (size_t)-1,
       FST_ERROR_PARSE, "line 3"},
      {"fstitch.graph 1\n%0 = input \"x\" : f32[2]\n%1 = exp %0 axes=[0] : f32[2]\n", (size_t)-1,
       FST_ERROR_PARSE, "line 3"},
      {"fstitch.graph 1\n%0 = input \"x\" : f32[2]\n%1 = add %0 : f32[2]\n", (size_t)-1, FST_ERROR_PARSE,
       "line 3"},
      {"fstitch.graph 1\n%0 = input \"x\" : f32[2] extra\n", (size_t)-1, FST_ERROR_PARSE, "line 2"},
      {"fstitch.graph 1\n%0 = input \"\xff\" : f32[2]\n", (size_t)-1, FST_ERROR_PARSE, "line 2"},
      {"fstitch.graph 1\n\n\n%0 = input \"x\" : f32[2] $\n", (size_t)-1, FST_ERROR_PARSE, "line 4"},
      {kWithNul, sizeof kWithNul - 1, FST_ERROR_PARSE, "line 2"},
      {"fstitch.graph 1\noutput \"y\" = %0\n", (size_t)-1, FST_ERROR_PARSE, "line 2"},
      /* Well-formed lines that do not type-check. */
      {"fstitch.graph 1\n%0 = input \"x\" : i32[2,3]\n%1 = exp %0 : i32[2,3]\n", (size_t)-1, FST_ERROR_DTYPE,
       "line 3"},
      {"fstitch.graph 1\n%0 = input \"x\" : f32[2,3]\n%1 = exp %0 : f32[3,2]\n", (size_t)-1, FST_ERROR_SHAPE,
       "line 3"},
      {"fstitch.graph 1\n%0 = input \"x\" : f32[2,3]\n%1 = exp %0 : f64[2,3]\n", (size_t)-1, FST_ERROR_DTYPE,
       "line 3"},
      {"fstitch.graph 1\n%0 = input \"x\" : f32[2,3]\n%1 = reduce_max %0 axes=[2] keepdims=true : f32[2,3]\n",
       (size_t)-1, FST_ERROR_SHAPE, "line 3"},
      {"fstitch.graph 1\n%0 = input \"x\" : f32[2,3]\n%1 = reshape %0 : f32[4]\n", (size_t)-1,
       FST_ERROR_SHAPE, "line 3"},
      {"fstitch.graph 1\n%0 = input \"x\" : f32[2,-3]\n", (size_t)-1, FST_ERROR_SHAPE, "line 2"},
      {"fstitch.graph 1\n%0 = input \"x\" : f32[2]\n%1 = input \"x\" : f32[2]\n", (size_t)-1,
       FST_ERROR_INVALID_ARGUMENT, "line 3"},
      {"fstitch.graph 1\n%0 = input \"x\" : f32[2]\noutput \"y\" = %0\noutput \"y\" = %0\n", (size_t)-1,
       FST_ERROR_INVALID_ARGUMENT, "line 4"},
  };
  size_t i;
  for (i = 0; i < COUNT_OF(kCases); ++i) {
    fst_graph* parsed = (fst_graph*)SENTINEL_PTR;
    fst_status status = fst_graph_parse(capi_context, kCases[i].text, kCases[i].length, &parsed);
    capi_expect_failure(status, kCases[i].status, "fst_graph_parse", kCases[i].line, __FILE__, __LINE__,
                        kCases[i].text);
    CHECK(capi_contains(fst_last_error_message(), "column"));
    CHECK(parsed == (fst_graph*)SENTINEL_PTR);
    if (parsed != (fst_graph*)SENTINEL_PTR) fst_graph_destroy(parsed);
  }
}

void test_text(void) {
  test_bad_arguments();
  test_round_trips();
  test_malformed();
}
