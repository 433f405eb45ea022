/* Thread-related promises: the last error is per thread, and a built graph may be
 * evaluated, printed and queried from several threads at once. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "capi_check.h"

#define THREADS 4
#define ROUNDS 50

/* What a thread saw of its own last error. */
typedef struct error_probe {
  fst_status initial_status;
  char initial_message[64];
  fst_status status;
  char message[256];
} error_probe;

static void* fail_on_other_thread(void* arg) {
  error_probe* probe = (error_probe*)arg;
  const char* message = fst_last_error_message();
  probe->initial_status = fst_last_error_status();
  snprintf(probe->initial_message, sizeof probe->initial_message, "%s", message ? message : "(NULL)");
  probe->status = fst_context_options_set_device(NULL, 1);
  message = fst_last_error_message();
  snprintf(probe->message, sizeof probe->message, "%s", message ? message : "(NULL)");
  return NULL;
}

static void test_last_error_is_per_thread(void) {
  pthread_t thread;
  error_probe probe;
  memset(&probe, 0, sizeof probe);
  CHECK_FAIL(fst_graph_create(NULL, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_graph_create", "context");
  CHECK(pthread_create(&thread, NULL, fail_on_other_thread, &probe) == 0);
  CHECK(pthread_join(thread, NULL) == 0);
  /* The new thread started clean and saw only its own failure ... */
  CHECK(probe.initial_status == FST_OK);
  CHECK(strcmp(probe.initial_message, "") == 0);
  CHECK(probe.status == FST_ERROR_INVALID_ARGUMENT);
  CHECK(capi_contains(probe.message, "fst_context_options_set_device"));
  /* ... and this thread's error is still its own. */
  CHECK(fst_last_error_status() == FST_ERROR_INVALID_ARGUMENT);
  CHECK(capi_contains(fst_last_error_message(), "fst_graph_create"));
}

/* One worker: evaluates y = x * x + x with inputs that depend on the worker, prints the
 * graph and queries it, many times. */
typedef struct worker {
  const fst_graph* graph;
  const char* expected_text;
  int index;
  int failures;
} worker;

static void* work(void* arg) {
  worker* w = (worker*)arg;
  int round;
  for (round = 0; round < ROUNDS; ++round) {
    float x[3];
    float y[3] = {0, 0, 0};
    const void* inputs[1];
    void* outputs[1];
    char* text = NULL;
    size_t count = 0;
    int i;
    for (i = 0; i < 3; ++i) x[i] = (float)(w->index * 100 + round * 3 + i);
    inputs[0] = x;
    outputs[0] = y;
    if (fst_graph_evaluate_reference(w->graph, inputs, 1, outputs, 1) != FST_OK) ++w->failures;
    for (i = 0; i < 3; ++i) {
      if (y[i] != x[i] * x[i] + x[i]) ++w->failures;
    }
    if (fst_graph_print(w->graph, &text) != FST_OK || text == NULL || strcmp(text, w->expected_text) != 0) {
      ++w->failures;
    }
    fst_string_free(text);
    if (fst_graph_value_count(w->graph, &count) != FST_OK || count != 3) ++w->failures;
  }
  return NULL;
}

static void test_concurrent_reads(void) {
  pthread_t threads[THREADS];
  worker workers[THREADS];
  fst_graph* g = capi_new_graph();
  fst_value x;
  char* text = NULL;
  int i;
  if (g == NULL) return;
  x = fst_input(g, "x", FST_F32, 1, (const int64_t[]){3});
  CHECK_OK(fst_output(g, "y", fst_binary(g, FST_BINARY_ADD, fst_binary(g, FST_BINARY_MUL, x, x), x)));
  CHECK_OK(fst_graph_print(g, &text));
  if (text != NULL) {
    for (i = 0; i < THREADS; ++i) {
      workers[i].graph = g;
      workers[i].expected_text = text;
      workers[i].index = i;
      workers[i].failures = 0;
      CHECK(pthread_create(&threads[i], NULL, work, &workers[i]) == 0);
    }
    for (i = 0; i < THREADS; ++i) {
      CHECK(pthread_join(threads[i], NULL) == 0);
      CHECK(workers[i].failures == 0);
    }
  }
  fst_string_free(text);
  fst_graph_destroy(g);
}

void test_threads(void) {
  test_last_error_is_per_thread();
  test_concurrent_reads();
}
