/* The C API test: calls every entry point of fstitch.h from C99, with good and bad input,
 * and checks statuses, messages, untouched out-parameters and the sticky graph error.
 * Prints "N passed, M failed" last and exits nonzero on any failure. */
#include <stdio.h>
#include <string.h>

#include "capi_check.h"

static int passed;
static int failed;

char capi_sentinel_object;
fst_context* capi_context;
fst_value capi_foreign_value;
fst_value capi_dead_value;

void capi_record(int ok, const char* file, int line, const char* what) {
  if (ok) {
    ++passed;
    return;
  }
  ++failed;
  fprintf(stderr, "%s:%d: CHECK failed: %s\n  last error: %s: %s\n", file, line, what,
          fst_status_string(fst_last_error_status()), fst_last_error_message());
}

int capi_contains(const char* text, const char* part) {
  return text != NULL && part != NULL && strstr(text, part) != NULL;
}

void capi_expect_ok(fst_status got, const char* file, int line, const char* call) {
  if (got == FST_OK) {
    ++passed;
    return;
  }
  ++failed;
  fprintf(stderr, "%s:%d: %s returned %s, expected FST_OK\n  last error: %s\n", file, line, call,
          fst_status_string(got), fst_last_error_message());
}

void capi_expect_failure(fst_status got, fst_status want, const char* function, const char* detail,
                         const char* file, int line, const char* call) {
  const char* message = fst_last_error_message();
  int ok = got == want && fst_last_error_status() == want && message != NULL && message[0] != '\0' &&
           capi_contains(message, function) && (detail == NULL || capi_contains(message, detail));
  if (ok) {
    ++passed;
    return;
  }
  ++failed;
  fprintf(stderr,
          "%s:%d: %s\n  returned %s (last status %s), expected %s\n  message \"%s\" should name \"%s\""
          " and contain \"%s\"\n",
          file, line, call, fst_status_string(got), fst_status_string(fst_last_error_status()),
          fst_status_string(want), message ? message : "(NULL)", function, detail ? detail : "");
}

size_t capi_value_count(const fst_graph* g) {
  size_t count = 0;
  CHECK(fst_graph_value_count(g, &count) == FST_OK);
  return count;
}

fst_graph* capi_new_graph(void) {
  fst_graph* g = NULL;
  CHECK_OK(fst_graph_create(capi_context, &g));
  return g;
}

fst_graph* capi_graph_with_x(fst_value* out_x) {
  fst_graph* g = capi_new_graph();
  *out_x = FST_VALUE_INVALID;
  if (g == NULL) return NULL;
  *out_x = fst_input(g, "x", FST_F32, 2, (const int64_t[]){2, 3});
  CHECK(*out_x != FST_VALUE_INVALID);
  return g;
}

/* Copies at most size-1 bytes of `text` into `buffer`. */
static void copy_text(char* buffer, size_t size, const char* text) {
  size_t n = strlen(text);
  if (n >= size) n = size - 1;
  memcpy(buffer, text, n);
  buffer[n] = '\0';
}

void capi_expect_builder_failure(fst_graph* g, fst_value got, fst_status want, const char* function,
                                 const char* detail, const char* file, int line, const char* call) {
  char first_message[2048];
  size_t count_after;
  char* text = (char*)SENTINEL_PTR;
  fst_fusion* fusion = (fst_fusion*)SENTINEL_PTR;
  float sink = 0.0f;
  void* outputs[1];
  outputs[0] = &sink;

  capi_record(got == FST_VALUE_INVALID, file, line, "the failing builder returned FST_VALUE_INVALID");
  capi_expect_failure(fst_last_error_status(), want, function, detail, file, line, call);
  if (g == NULL) return;

  /* The first error is recorded on the graph, which is otherwise unchanged. */
  capi_record(fst_graph_status(g) == want, file, line, "fst_graph_status() reports the builder's status");
  copy_text(first_message, sizeof first_message, fst_graph_error_message(g));
  capi_record(capi_contains(first_message, function), file, line,
              "fst_graph_error_message() names the failing builder");
  capi_record(detail == NULL || capi_contains(first_message, detail), file, line,
              "fst_graph_error_message() names the value at fault");
  count_after = capi_value_count(g);

  /* Later builders do nothing, and report the first error. */
  capi_record(fst_constant_f64(g, FST_F32, 1.0) == FST_VALUE_INVALID, file, line,
              "a later fst_constant_f64 returns FST_VALUE_INVALID");
  capi_expect_failure(fst_last_error_status(), want, "fst_constant_f64", function, file, line,
                      "later fst_constant_f64 on a graph in error");
  capi_record(fst_input(g, "later_input", FST_F32, 0, NULL) == FST_VALUE_INVALID, file, line,
              "a later fst_input returns FST_VALUE_INVALID");
  capi_record(fst_iota(g, FST_I32, 1, (const int64_t[]){4}, 0) == FST_VALUE_INVALID, file, line,
              "a later fst_iota returns FST_VALUE_INVALID");
  capi_record(capi_value_count(g) == count_after, file, line, "later builders added no value");

  /* Everything that consumes the graph returns the first error's status. */
  capi_expect_failure(fst_graph_verify(g), want, "fst_graph_verify", function, file, line,
                      "fst_graph_verify");
  capi_expect_failure(fst_graph_print(g, &text), want, "fst_graph_print", function, file, line,
                      "fst_graph_print");
  capi_record(text == (char*)SENTINEL_PTR, file, line, "fst_graph_print left out_text untouched");
  capi_expect_failure(fst_graph_evaluate_reference(g, NULL, 0, outputs, 1), want,
                      "fst_graph_evaluate_reference", function, file, line, "fst_graph_evaluate_reference");
  capi_record(sink == 0.0f, file, line, "a failed evaluation wrote no output");
  capi_expect_failure(fst_fuse(g, NULL, &fusion), want, "fst_fuse", function, file, line, "fst_fuse");
  capi_record(fusion == (fst_fusion*)SENTINEL_PTR, file, line, "fst_fuse left out_fusion untouched");
  capi_expect_failure(fst_output(g, "later_output", FST_VALUE_INVALID), want, "fst_output", function, file,
                      line, "fst_output");

  /* The graph keeps the first error and its message. */
  capi_record(fst_graph_status(g) == want, file, line, "fst_graph_status() still reports the first error");
  capi_record(strcmp(fst_graph_error_message(g), first_message) == 0, file, line,
              "fst_graph_error_message() still holds the first error");
  fst_graph_destroy(g);
}

int main(void) {
  /* Nothing has failed yet on this thread. */
  CHECK(fst_last_error_status() == FST_OK);
  CHECK(fst_last_error_message() != NULL && fst_last_error_message()[0] == '\0');

  test_basics();
  test_context();

  {
    fst_context_options* options = NULL;
    CHECK_OK(fst_context_options_create(&options));
    CHECK_OK(fst_context_options_set_log_level(options, FST_LOG_ERROR));
    CHECK_OK(fst_context_options_set_cache_dir(options, "off"));
    /* The runs below pass host buffers: they need the host backend whatever the default. */
    CHECK_OK(fst_context_options_set_backend(options, FST_BACKEND_HOST));
    CHECK_OK(fst_context_create(options, &capi_context));
    fst_context_options_destroy(options);
  }
  if (capi_context != NULL) {
    /* Values that belong to another graph, alive or destroyed, for the error tests. */
    fst_graph* other = capi_graph_with_x(&capi_foreign_value);
    fst_graph_destroy(capi_graph_with_x(&capi_dead_value));

    test_graph_lifetime();
    test_builders_ok();
    test_builder_errors_operands();
    test_builder_errors_shapes();
    test_queries();
    test_text();
    test_evaluate();
    test_threads();
    test_fusion();
    test_sizes();
    test_aliasing();
    test_opaque_steps();
    test_movement();
    test_tensor_constants();
    test_split_reductions();
    test_split_rows();
    test_grid_for_occupancy();
    fst_graph_destroy(other);
  }
  fst_context_destroy(capi_context);

  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
