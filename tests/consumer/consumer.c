/* A program that uses fstitch the way an outside project does: the installed header and
 * library only. It builds y = sum_j x[i][j] * w[j] + 1, evaluates it with the reference
 * evaluator, checks the numbers and prints OK. */
#include <fstitch.h>
#include <stdio.h>

static int report(const char* what) {
  fprintf(stderr, "consumer: %s failed: %s: %s\n", what, fst_status_string(fst_last_error_status()),
          fst_last_error_message());
  return 1;
}

int main(void) {
  static const float x[6] = {1, 2, 3, 4, 5, 6};
  static const float w[3] = {0.5f, -1, 2};
  const float expected[2] = {1 * 0.5f - 2 + 6 + 1, 4 * 0.5f - 5 + 12 + 1}; /* 5.5, 10 */
  float y[2] = {0, 0};
  const void* inputs[2];
  void* outputs[1];
  fst_context* context = NULL;
  fst_graph* graph = NULL;
  fst_value vx, vw, product, sums;
  fst_status status;

  if (fst_version_number() != FST_VERSION_NUMBER) {
    fprintf(stderr, "consumer: header %d and library %u differ\n", FST_VERSION_NUMBER, fst_version_number());
    return 1;
  }
  if (fst_context_create(NULL, &context) != FST_OK) return report("fst_context_create");
  if (fst_graph_create(context, &graph) != FST_OK) return report("fst_graph_create");
  fst_context_destroy(context);

  vx = fst_input(graph, "x", FST_F32, 2, (const int64_t[]){2, 3});
  vw = fst_input(graph, "w", FST_F32, 1, (const int64_t[]){3});
  product = fst_binary(graph, FST_BINARY_MUL, vx, vw);
  sums = fst_reduce(graph, FST_REDUCE_SUM, product, 1, (const int64_t[]){-1}, 0);
  status =
      fst_output(graph, "y", fst_binary(graph, FST_BINARY_ADD, sums, fst_constant_f64(graph, FST_F32, 1.0)));
  if (status != FST_OK) return report("building the graph");

  inputs[0] = x;
  inputs[1] = w;
  outputs[0] = y;
  if (fst_graph_evaluate_reference(graph, inputs, 2, outputs, 1) != FST_OK) return report("evaluation");
  fst_graph_destroy(graph);

  if (y[0] != expected[0] || y[1] != expected[1]) {
    fprintf(stderr, "consumer: got y = {%g, %g}, expected {%g, %g}\n", y[0], y[1], expected[0], expected[1]);
    return 1;
  }
  printf("fstitch %s: OK\n", fst_version_string());
  return 0;
}
