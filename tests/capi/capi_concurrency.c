/* Concurrent use of the public API on the host backend: eight threads run fusions they share,
 * fuse shared graphs into fusions of their own, build, fuse, run and destroy graphs of their
 * own (on the shared context or on contexts of their own), and the last thread done with the
 * shared handles destroys them while the others keep working. Every result is checked against
 * the reference evaluator. tests/tsan/run-tsan runs it under ThreadSanitizer, where a data race
 * anywhere on these paths (the library, the host runtime, the generated kernels) fails it.
 * Plain C99 with POSIX threads; prints what failed and exits nonzero on any failure. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fstitch.h"

#define THREADS 8
#define ROUNDS 4
#define SHARED_GRAPHS 3
#define SHARED_FUSIONS 4
#define MAX_TENSORS 2

/* A graph with its input and output element counts (f32 everywhere). */
typedef struct graph_shape {
  size_t ninputs, noutputs;
  size_t input_elements[MAX_TENSORS];
  size_t output_elements[MAX_TENSORS];
} graph_shape;

typedef struct shared_state {
  fst_context* context;
  fst_graph* graphs[SHARED_GRAPHS];
  graph_shape shapes[SHARED_GRAPHS];
  fst_fusion* fusions[SHARED_FUSIONS];
  int fusion_graph[SHARED_FUSIONS]; /* which shared graph each shared fusion was fused from */
  pthread_mutex_t mutex;
  int users; /* threads still using the shared graphs and fusions */
} shared_state;

typedef struct worker {
  shared_state* shared;
  int index;
  int failures;
  char first_failure[512];
} worker;

static void record_failure(worker* w, int line, const char* what) {
  if (w->failures++ == 0) {
    const char* message = fst_last_error_message();
    snprintf(w->first_failure, sizeof w->first_failure, "line %d: %s (last error: %s)", line, what,
             message != NULL ? message : "(NULL)");
  }
}

#define EXPECT(w, cond)                                \
  do {                                                 \
    if (!(cond)) record_failure((w), __LINE__, #cond); \
  } while (0)

/* Deterministic inputs in [-2, 2) from a seed. */
static void fill_inputs(float* data, size_t count, uint32_t seed) {
  size_t i;
  uint32_t state = seed * 2654435761u + 12345u;
  for (i = 0; i < count; ++i) {
    state = state * 1664525u + 1013904223u;
    data[i] = (float)((state >> 8) & 0xffff) / 16384.0f - 2.0f;
  }
}

static int close_enough(float got, float want) {
  const float scale = fabsf(want) > 1.0f ? fabsf(want) : 1.0f;
  return fabsf(got - want) <= 1e-4f * scale;
}

/* The graph's input and output element counts, from the queries. */
static int query_shape(const fst_graph* g, graph_shape* shape) {
  size_t r, i, d;
  memset(shape, 0, sizeof *shape);
  if (fst_graph_input_count(g, &shape->ninputs) != FST_OK || shape->ninputs > MAX_TENSORS) return 0;
  if (fst_graph_output_count(g, &shape->noutputs) != FST_OK || shape->noutputs > MAX_TENSORS) return 0;
  for (r = 0; r < 2; ++r) {
    const size_t count = r == 0 ? shape->ninputs : shape->noutputs;
    for (i = 0; i < count; ++i) {
      fst_value v = FST_VALUE_INVALID;
      size_t rank = 0, elements = 1;
      int64_t dims[FST_MAX_RANK];
      if ((r == 0 ? fst_graph_input(g, i, &v, NULL) : fst_graph_output(g, i, &v, NULL)) != FST_OK) return 0;
      if (fst_value_rank(g, v, &rank) != FST_OK || fst_value_dims(g, v, FST_MAX_RANK, dims) != FST_OK)
        return 0;
      for (d = 0; d < rank; ++d) elements *= (size_t)dims[d];
      if (r == 0) {
        shape->input_elements[i] = elements;
      } else {
        shape->output_elements[i] = elements;
      }
    }
  }
  return 1;
}

/* Buffers for one run of a graph: inputs, the reference's outputs and the fusion's. */
typedef struct run_buffers {
  float* inputs[MAX_TENSORS];
  float* expected[MAX_TENSORS];
  float* outputs[MAX_TENSORS];
} run_buffers;

static int allocate_buffers(run_buffers* b, const graph_shape* shape, uint32_t seed) {
  size_t i;
  int ok = 1;
  memset(b, 0, sizeof *b);
  for (i = 0; i < shape->ninputs; ++i) {
    b->inputs[i] = malloc(shape->input_elements[i] * sizeof(float));
    if (b->inputs[i] == NULL) ok = 0;
    if (ok) fill_inputs(b->inputs[i], shape->input_elements[i], seed + (uint32_t)i * 7919u);
  }
  for (i = 0; i < shape->noutputs; ++i) {
    b->expected[i] = malloc(shape->output_elements[i] * sizeof(float));
    b->outputs[i] = malloc(shape->output_elements[i] * sizeof(float));
    if (b->expected[i] == NULL || b->outputs[i] == NULL) ok = 0;
  }
  return ok;
}

static void free_buffers(run_buffers* b) {
  size_t i;
  for (i = 0; i < MAX_TENSORS; ++i) {
    free(b->inputs[i]);
    free(b->expected[i]);
    free(b->outputs[i]);
  }
}

/* The reference evaluator's outputs for the buffers' inputs. */
static void evaluate_reference(worker* w, const fst_graph* g, const graph_shape* shape, run_buffers* b) {
  EXPECT(w, fst_graph_evaluate_reference(g, (const void* const*)b->inputs, shape->ninputs,
                                         (void* const*)b->expected, shape->noutputs) == FST_OK);
}

/* Runs `fusion` on the buffers' inputs (with a workspace of the caller's every other time)
 * and compares every output element with the reference's. */
static void run_and_compare(worker* w, const fst_fusion* fusion, const graph_shape* shape, run_buffers* b,
                            int own_workspace) {
  size_t i, k, workspace_bytes = 0;
  void* workspace = NULL;
  int wrong = 0;
  for (i = 0; i < shape->noutputs; ++i)
    memset(b->outputs[i], 0xFF, shape->output_elements[i] * sizeof(float));
  EXPECT(w, fst_fusion_workspace_size(fusion, &workspace_bytes) == FST_OK);
  if (own_workspace && workspace_bytes > 0) workspace = malloc(workspace_bytes);
  EXPECT(w, fst_fusion_run(fusion, (const void* const*)b->inputs, shape->ninputs, (void* const*)b->outputs,
                           shape->noutputs, workspace, NULL) == FST_OK);
  free(workspace);
  for (i = 0; i < shape->noutputs; ++i) {
    for (k = 0; k < shape->output_elements[i]; ++k) {
      if (!close_enough(b->outputs[i][k], b->expected[i][k])) ++wrong;
    }
  }
  EXPECT(w, wrong == 0);
}

/* Graph 0: y = x * b + 1 and s = row sums of exp(x), x f32[16, 64], b f32[64]. */
static void build_affine_and_row_sum(fst_graph* g) {
  fst_value x = fst_input(g, "x", FST_F32, 2, (const int64_t[]){16, 64});
  fst_value b = fst_input(g, "b", FST_F32, 1, (const int64_t[]){64});
  fst_output(
      g, "y",
      fst_binary(g, FST_BINARY_ADD, fst_binary(g, FST_BINARY_MUL, x, b), fst_constant_f64(g, FST_F32, 1.0)));
  fst_output(g, "s",
             fst_reduce(g, FST_REDUCE_SUM, fst_unary(g, FST_UNARY_EXP, x), 1, (const int64_t[]){1}, 0));
}

/* Graph 1: softmax over the rows of x f32[8, 128]: a block-per-row reduction with barriers. */
static void build_softmax(fst_graph* g) {
  fst_value x = fst_input(g, "x", FST_F32, 2, (const int64_t[]){8, 128});
  fst_value e = fst_unary(
      g, FST_UNARY_EXP,
      fst_binary(g, FST_BINARY_SUB, x, fst_reduce(g, FST_REDUCE_MAX, x, 1, (const int64_t[]){1}, 1)));
  fst_output(g, "y",
             fst_binary(g, FST_BINARY_DIV, e, fst_reduce(g, FST_REDUCE_SUM, e, 1, (const int64_t[]){1}, 1)));
}

/* Graph 2: column means of tanh(x), x f32[33, 20]. */
static void build_column_mean(fst_graph* g) {
  fst_value x = fst_input(g, "x", FST_F32, 2, (const int64_t[]){33, 20});
  fst_output(g, "m",
             fst_reduce(g, FST_REDUCE_MEAN, fst_unary(g, FST_UNARY_TANH, x), 1, (const int64_t[]){0}, 0));
}

/* A graph only thread `t` uses: its shape, so its kernels, differ from every other thread's. */
static void build_private(fst_graph* g, int t) {
  fst_value x = fst_input(g, "x", FST_F32, 2, (const int64_t[]){t + 1, 40});
  fst_output(g, "y",
             fst_binary(g, FST_BINARY_ADD,
                        fst_binary(g, FST_BINARY_MUL, fst_unary(g, FST_UNARY_RELU, x),
                                   fst_constant_f64(g, FST_F32, (double)(t + 1))),
                        fst_unary(g, FST_UNARY_SIN, x)));
}

static fst_fusion* fuse_with_policy(worker* w, const fst_graph* g, fst_fusion_policy policy) {
  fst_fuse_options* options = NULL;
  fst_fusion* fusion = NULL;
  EXPECT(w, fst_fuse_options_create(&options) == FST_OK);
  EXPECT(w, fst_fuse_options_set_policy(options, policy) == FST_OK);
  EXPECT(w, fst_fuse(g, options, &fusion) == FST_OK);
  fst_fuse_options_destroy(options);
  return fusion;
}

static fst_context* host_context(void) {
  fst_context_options* options = NULL;
  fst_context* context = NULL;
  if (fst_context_options_create(&options) != FST_OK) return NULL;
  if (fst_context_options_set_backend(options, FST_BACKEND_HOST) == FST_OK)
    fst_context_create(options, &context);
  fst_context_options_destroy(options);
  return context;
}

/* Every shared fusion, on inputs of this thread and round. */
static void run_shared_fusions(worker* w, int round) {
  const shared_state* s = w->shared;
  int f;
  for (f = 0; f < SHARED_FUSIONS; ++f) {
    const int g = s->fusion_graph[f];
    run_buffers b;
    if (allocate_buffers(&b, &s->shapes[g], (uint32_t)(w->index * 1000 + round * 10 + f))) {
      evaluate_reference(w, s->graphs[g], &s->shapes[g], &b);
      run_and_compare(w, s->fusions[f], &s->shapes[g], &b, (round + f) % 2);
    } else {
      record_failure(w, __LINE__, "out of memory for buffers");
    }
    free_buffers(&b);
  }
}

/* A fusion of its own of a shared graph: fused while others fuse and run the same graph. */
static void fuse_shared_graph(worker* w, int round) {
  const shared_state* s = w->shared;
  const int g = (w->index + round) % SHARED_GRAPHS;
  const fst_fusion_policy policy = (fst_fusion_policy)((w->index + 2 * round) % 3);
  fst_fusion* fusion = fuse_with_policy(w, s->graphs[g], policy);
  run_buffers b;
  memset(&b, 0, sizeof b);
  if (fusion != NULL && allocate_buffers(&b, &s->shapes[g], (uint32_t)(w->index * 77 + round))) {
    evaluate_reference(w, s->graphs[g], &s->shapes[g], &b);
    run_and_compare(w, fusion, &s->shapes[g], &b, round % 2);
  }
  free_buffers(&b);
  fst_fusion_destroy(fusion);
}

/* A graph of its own, on the shared context or on a context of its own that is released as
 * soon as the graph holds it. The graph is destroyed before its fusion runs: a fusion does
 * not refer to its graph. */
static void private_graph_round(worker* w, int round) {
  const int own_context = (w->index + round) % 2;
  fst_context* context = own_context ? host_context() : w->shared->context;
  fst_graph* g = NULL;
  fst_fusion* fusion = NULL;
  graph_shape shape;
  run_buffers b;
  memset(&b, 0, sizeof b);
  EXPECT(w, context != NULL);
  EXPECT(w, fst_graph_create(context, &g) == FST_OK);
  if (own_context) fst_context_destroy(context);
  if (g == NULL) return;
  build_private(g, w->index);
  EXPECT(w, fst_graph_status(g) == FST_OK);
  fusion = fuse_with_policy(w, g, (fst_fusion_policy)(round % 3));
  if (fusion != NULL && query_shape(g, &shape) &&
      allocate_buffers(&b, &shape, (uint32_t)(w->index + round))) {
    evaluate_reference(w, g, &shape, &b);
    fst_graph_destroy(g);
    g = NULL;
    run_and_compare(w, fusion, &shape, &b, round % 2);
  }
  free_buffers(&b);
  fst_graph_destroy(g);
  fst_fusion_destroy(fusion);
}

/* The last thread done with the shared graphs and fusions destroys them. */
static void release_shared(shared_state* s) {
  int last, i;
  pthread_mutex_lock(&s->mutex);
  last = --s->users == 0;
  pthread_mutex_unlock(&s->mutex);
  if (!last) return;
  for (i = 0; i < SHARED_FUSIONS; ++i) fst_fusion_destroy(s->fusions[i]);
  for (i = 0; i < SHARED_GRAPHS; ++i) fst_graph_destroy(s->graphs[i]);
}

static void* work(void* arg) {
  worker* w = (worker*)arg;
  int round;
  for (round = 0; round < ROUNDS; ++round) {
    run_shared_fusions(w, round);
    fuse_shared_graph(w, round);
    if (round % 2 == w->index % 2) private_graph_round(w, round);
  }
  release_shared(w->shared);
  /* Others may still run shared fusions, or be destroying them, meanwhile. */
  for (round = 0; round < 2; ++round) private_graph_round(w, ROUNDS + round);
  return NULL;
}

static int set_up(shared_state* s) {
  static void (*const kBuilders[SHARED_GRAPHS])(fst_graph*) = {build_affine_and_row_sum, build_softmax,
                                                               build_column_mean};
  static const fst_fusion_policy kPolicies[SHARED_FUSIONS] = {FST_POLICY_STITCH, FST_POLICY_STITCH,
                                                              FST_POLICY_STITCH, FST_POLICY_LOOP};
  static const int kGraphOf[SHARED_FUSIONS] = {0, 1, 2, 0};
  worker setup;
  int i;
  memset(&setup, 0, sizeof setup);
  s->context = host_context();
  if (s->context == NULL) {
    fprintf(stderr, "cannot create a host context: %s\n", fst_last_error_message());
    return 0;
  }
  for (i = 0; i < SHARED_GRAPHS; ++i) {
    if (fst_graph_create(s->context, &s->graphs[i]) != FST_OK) return 0;
    kBuilders[i](s->graphs[i]);
    if (fst_graph_status(s->graphs[i]) != FST_OK || !query_shape(s->graphs[i], &s->shapes[i])) {
      fprintf(stderr, "shared graph %d: %s\n", i, fst_graph_error_message(s->graphs[i]));
      return 0;
    }
  }
  /* Fused here, compiled by whichever thread runs them first. */
  for (i = 0; i < SHARED_FUSIONS; ++i) {
    s->fusion_graph[i] = kGraphOf[i];
    s->fusions[i] = fuse_with_policy(&setup, s->graphs[kGraphOf[i]], kPolicies[i]);
    if (s->fusions[i] == NULL) {
      fprintf(stderr, "shared fusion %d: %s\n", i, setup.first_failure);
      return 0;
    }
  }
  s->users = THREADS;
  return pthread_mutex_init(&s->mutex, NULL) == 0;
}

int main(void) {
  shared_state shared;
  worker workers[THREADS];
  pthread_t threads[THREADS];
  int i, started = 0, failures = 0;
  memset(&shared, 0, sizeof shared);
  if (!set_up(&shared)) {
    fprintf(stderr, "set-up failed\n");
    return 1;
  }
  for (i = 0; i < THREADS; ++i) {
    memset(&workers[i], 0, sizeof workers[i]);
    workers[i].shared = &shared;
    workers[i].index = i;
    if (pthread_create(&threads[i], NULL, work, &workers[i]) != 0) break;
    ++started;
  }
  for (i = 0; i < started; ++i) pthread_join(threads[i], NULL);
  if (started < THREADS) {
    fprintf(stderr, "could start only %d of %d threads\n", started, THREADS);
    return 1;
  }
  for (i = 0; i < THREADS; ++i) {
    if (workers[i].failures == 0) continue;
    failures += workers[i].failures;
    fprintf(stderr, "thread %d: %d failures, first: %s\n", i, workers[i].failures, workers[i].first_failure);
  }
  pthread_mutex_destroy(&shared.mutex);
  fst_context_destroy(shared.context);
  printf("%d threads x %d rounds: %s\n", THREADS, ROUNDS,
         failures == 0 ? "all results match the reference" : "FAILED");
  return failures == 0 ? 0 : 1;
}
