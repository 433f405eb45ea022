/* Fusion through the C API: options, fst_fuse, plan and kernel queries, runs on the host
 * backend checked against the reference evaluator, and every bad argument. Compiling for
 * the GPU (PTX/CUBIN) and running on the host are skipped when FSTITCH_CAPI_TEST_NO_COMPILE
 * is set (the valgrind run: external compilers are not what it checks). */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_check.h"

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

static int compile_allowed(void) {
  const char* skip = getenv("FSTITCH_CAPI_TEST_NO_COMPILE");
  return skip == NULL || skip[0] == '\0';
}

static void test_options(void) {
  static const int kBadPolicies[] = {3, -1, INT_MAX, INT_MIN};
  fst_fuse_options* options = (fst_fuse_options*)SENTINEL_PTR;
  char value[32];
  size_t i;

  CHECK_FAIL(fst_fuse_options_create(NULL), FST_ERROR_INVALID_ARGUMENT, "fst_fuse_options_create",
             "out_options");
  CHECK_FAIL(fst_fuse_options_set_policy(NULL, FST_POLICY_LOOP), FST_ERROR_INVALID_ARGUMENT,
             "fst_fuse_options_set_policy", "options");
  CHECK_FAIL(fst_fuse_options_set_target_arch(NULL, 80), FST_ERROR_INVALID_ARGUMENT,
             "fst_fuse_options_set_target_arch", "options");
  CHECK_FAIL(fst_fuse_options_set_shared_memory_budget(NULL, 4096), FST_ERROR_INVALID_ARGUMENT,
             "fst_fuse_options_set_shared_memory_budget", "options");
  CHECK_FAIL(fst_fuse_options_set_register_cap(NULL, 64), FST_ERROR_INVALID_ARGUMENT,
             "fst_fuse_options_set_register_cap", "options");
  fst_fuse_options_destroy(NULL);

  CHECK_OK(fst_fuse_options_create(&options));
  if (options == NULL || options == (fst_fuse_options*)SENTINEL_PTR) return;
  for (i = 0; i < COUNT_OF(kBadPolicies); ++i) {
    snprintf(value, sizeof value, "%d", kBadPolicies[i]);
    CHECK_FAIL(fst_fuse_options_set_policy(options, (fst_fusion_policy)kBadPolicies[i]),
               FST_ERROR_INVALID_ARGUMENT, "fst_fuse_options_set_policy", value);
  }
  CHECK_OK(fst_fuse_options_set_policy(options, FST_POLICY_STITCH));
  CHECK_OK(fst_fuse_options_set_policy(options, FST_POLICY_NONE));
  CHECK_OK(fst_fuse_options_set_policy(options, FST_POLICY_LOOP));

  CHECK_FAIL(fst_fuse_options_set_target_arch(options, 75), FST_ERROR_UNSUPPORTED,
             "fst_fuse_options_set_target_arch", "75");
  CHECK_FAIL(fst_fuse_options_set_target_arch(options, -90), FST_ERROR_UNSUPPORTED,
             "fst_fuse_options_set_target_arch", "-90");
  CHECK_FAIL(fst_fuse_options_set_target_arch(options, INT_MIN), FST_ERROR_UNSUPPORTED,
             "fst_fuse_options_set_target_arch", "sm");
  CHECK_OK(fst_fuse_options_set_target_arch(options, 80));
  CHECK_OK(fst_fuse_options_set_target_arch(options, 90));

  CHECK_FAIL(fst_fuse_options_set_shared_memory_budget(options, 1023), FST_ERROR_INVALID_ARGUMENT,
             "fst_fuse_options_set_shared_memory_budget", "1023");
  CHECK_FAIL(fst_fuse_options_set_shared_memory_budget(options, 227 * 1024 + 1), FST_ERROR_INVALID_ARGUMENT,
             "fst_fuse_options_set_shared_memory_budget", "232449");
  CHECK_FAIL(fst_fuse_options_set_shared_memory_budget(options, 0), FST_ERROR_INVALID_ARGUMENT,
             "fst_fuse_options_set_shared_memory_budget", "0");
  CHECK_FAIL(fst_fuse_options_set_shared_memory_budget(options, SIZE_MAX), FST_ERROR_INVALID_ARGUMENT,
             "fst_fuse_options_set_shared_memory_budget", "budget");
  CHECK_OK(fst_fuse_options_set_shared_memory_budget(options, 1024));
  CHECK_OK(fst_fuse_options_set_shared_memory_budget(options, 227 * 1024));

  CHECK_FAIL(fst_fuse_options_set_register_cap(options, 31), FST_ERROR_INVALID_ARGUMENT,
             "fst_fuse_options_set_register_cap", "31");
  CHECK_FAIL(fst_fuse_options_set_register_cap(options, 256), FST_ERROR_INVALID_ARGUMENT,
             "fst_fuse_options_set_register_cap", "256");
  CHECK_FAIL(fst_fuse_options_set_register_cap(options, -1), FST_ERROR_INVALID_ARGUMENT,
             "fst_fuse_options_set_register_cap", "-1");
  CHECK_OK(fst_fuse_options_set_register_cap(options, 32));
  CHECK_OK(fst_fuse_options_set_register_cap(options, 255));
  fst_fuse_options_destroy(options);
}

/* A named device model sets the target and the cost model's device; the dump names it. */
static void test_device_model(void) {
  fst_fuse_options* options = NULL;
  fst_graph* g;
  fst_fusion* fusion = NULL;
  char* dump = NULL;
  fst_value x;

  CHECK_FAIL(fst_fuse_options_set_device_model(NULL, "h200"), FST_ERROR_INVALID_ARGUMENT,
             "fst_fuse_options_set_device_model", "options");
  CHECK_OK(fst_fuse_options_create(&options));
  if (options == NULL) return;
  CHECK_FAIL(fst_fuse_options_set_device_model(options, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_fuse_options_set_device_model", "model");
  CHECK_FAIL(fst_fuse_options_set_device_model(options, "h300"), FST_ERROR_UNSUPPORTED,
             "fst_fuse_options_set_device_model", "\"h300\"");
  CHECK_FAIL(fst_fuse_options_set_device_model(options, "H200"), FST_ERROR_UNSUPPORTED,
             "fst_fuse_options_set_device_model", "h200");
  CHECK_OK(fst_fuse_options_set_device_model(options, "a100"));
  CHECK_OK(fst_fuse_options_set_device_model(options, "h200"));

  g = capi_graph_with_x(&x);
  CHECK_OK(fst_output(g, "y", fst_unary(g, FST_UNARY_EXP, x)));
  CHECK_OK(fst_fuse(g, options, &fusion));
  CHECK_OK(fst_fusion_dump(fusion, &dump));
  CHECK(dump != NULL && strstr(dump, "target sm_90 (H200 SXM)") != NULL);
  fst_string_free(dump);
  fst_fusion_destroy(fusion);
  fst_graph_destroy(g);
  fst_fuse_options_destroy(options);
}

/* A graph for fusing: y = x * b + 1 (f32[4,8] with b f32[8]), s = row sums of exp(x). */
static fst_graph* fusable_graph(void) {
  fst_graph* g = capi_new_graph();
  fst_value x, b;
  if (g == NULL) return NULL;
  x = fst_input(g, "x", FST_F32, 2, (const int64_t[]){4, 8});
  b = fst_input(g, "b", FST_F32, 1, (const int64_t[]){8});
  CHECK_OK(fst_output(
      g, "y",
      fst_binary(g, FST_BINARY_ADD, fst_binary(g, FST_BINARY_MUL, x, b), fst_constant_f64(g, FST_F32, 1.0))));
  CHECK_OK(fst_output(
      g, "s", fst_reduce(g, FST_REDUCE_SUM, fst_unary(g, FST_UNARY_EXP, x), 1, (const int64_t[]){1}, 0)));
  return g;
}

static void test_fuse_bad_input(void) {
  fst_graph* g = fusable_graph();
  fst_fusion* fusion = (fst_fusion*)SENTINEL_PTR;
  fst_value x;

  CHECK_FAIL(fst_fuse(NULL, NULL, &fusion), FST_ERROR_INVALID_ARGUMENT, "fst_fuse", "graph");
  CHECK_FAIL(fst_fuse(g, NULL, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_fuse", "out_fusion");
  CHECK(fusion == (fst_fusion*)SENTINEL_PTR);
  fst_graph_destroy(g);
  fst_fusion_destroy(NULL);

  /* A graph that does not verify is refused as verification refuses it. */
  g = capi_graph_with_x(&x);
  CHECK_FAIL(fst_fuse(g, NULL, &fusion), FST_ERROR_INVALID_ARGUMENT, "fst_fuse", "output");
  CHECK(fusion == (fst_fusion*)SENTINEL_PTR);
  fst_graph_destroy(g);
}

/* Total bytes of the graph's inputs and outputs, from the queries. */
static uint64_t io_bytes(const fst_graph* g) {
  uint64_t total = 0;
  size_t count = 0, i, r;
  for (r = 0; r < 2; ++r) {
    CHECK_OK(r == 0 ? fst_graph_input_count(g, &count) : fst_graph_output_count(g, &count));
    for (i = 0; i < count; ++i) {
      fst_value v = FST_VALUE_INVALID;
      fst_dtype dtype = FST_F32;
      size_t rank = 0, d;
      int64_t dims[FST_MAX_RANK];
      uint64_t elements = 1;
      CHECK_OK(r == 0 ? fst_graph_input(g, i, &v, NULL) : fst_graph_output(g, i, &v, NULL));
      CHECK_OK(fst_value_dtype(g, v, &dtype));
      CHECK_OK(fst_value_rank(g, v, &rank));
      CHECK_OK(fst_value_dims(g, v, FST_MAX_RANK, dims));
      for (d = 0; d < rank && d < FST_MAX_RANK; ++d) elements *= (uint64_t)dims[d];
      total += elements * fst_dtype_size(dtype);
    }
  }
  return total;
}

/* Every kernel query, with good and bad arguments. */
static void check_kernel(const fst_graph* g, const fst_kernel* kernel, size_t workspace_bytes) {
  const char* name = (const char*)SENTINEL_PTR;
  const char* source = (const char*)SENTINEL_PTR;
  const char* ptx = (const char*)SENTINEL_PTR;
  const void* cubin = SENTINEL_PTR;
  size_t cubin_size = 77, params = 77, index = 77, shared = 77, i, ninputs = 0, noutputs = 0;
  uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  uint64_t read_bytes = 77, written_bytes = 77;
  fst_param_kind kind = (fst_param_kind)77;
  fst_value value = (fst_value)77;
  fst_launch_kind launch_kind = (fst_launch_kind)77;
  void* function = SENTINEL_PTR;
  void* args[1] = {SENTINEL_PTR};
  fst_status status;

  CHECK_FAIL(fst_kernel_name(NULL, &name), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_name", "kernel");
  CHECK_FAIL(fst_kernel_name(kernel, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_name", "out_name");
  CHECK_FAIL(fst_kernel_source(NULL, &source), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_source", "kernel");
  CHECK_FAIL(fst_kernel_source(kernel, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_source", "out_source");
  CHECK_FAIL(fst_kernel_ptx(NULL, &ptx), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_ptx", "kernel");
  CHECK_FAIL(fst_kernel_ptx(kernel, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_ptx", "out_ptx");
  CHECK_FAIL(fst_kernel_cubin(NULL, &cubin, &cubin_size), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_cubin",
             "kernel");
  CHECK_FAIL(fst_kernel_cubin(kernel, NULL, &cubin_size), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_cubin",
             "out_data");
  CHECK_FAIL(fst_kernel_cubin(kernel, &cubin, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_cubin",
             "out_size");
  CHECK_FAIL(fst_kernel_launch_config(NULL, grid, block, &shared), FST_ERROR_INVALID_ARGUMENT,
             "fst_kernel_launch_config", "kernel");
  CHECK_FAIL(fst_kernel_launch_config(kernel, NULL, block, &shared), FST_ERROR_INVALID_ARGUMENT,
             "fst_kernel_launch_config", "out_grid");
  CHECK_FAIL(fst_kernel_launch_config(kernel, grid, NULL, &shared), FST_ERROR_INVALID_ARGUMENT,
             "fst_kernel_launch_config", "out_block");
  CHECK_FAIL(fst_kernel_launch_config(kernel, grid, block, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_kernel_launch_config", "out_dynamic_shared_bytes");
  CHECK_FAIL(fst_kernel_param_count(NULL, &params), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_param_count",
             "kernel");
  CHECK_FAIL(fst_kernel_param_count(kernel, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_param_count",
             "out_count");
  CHECK_FAIL(fst_kernel_param(NULL, 0, &kind, &index, &value), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_param",
             "kernel");
  CHECK_FAIL(fst_kernel_param(kernel, 0, NULL, &index, &value), FST_ERROR_INVALID_ARGUMENT,
             "fst_kernel_param", "out_kind");
  CHECK_FAIL(fst_kernel_param(kernel, 0, &kind, NULL, &value), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_param",
             "out_index");
  CHECK_FAIL(fst_kernel_param(kernel, SIZE_MAX, &kind, &index, &value), FST_ERROR_INVALID_ARGUMENT,
             "fst_kernel_param", "index");
  CHECK_FAIL(fst_kernel_estimated_bytes(NULL, &read_bytes, &written_bytes), FST_ERROR_INVALID_ARGUMENT,
             "fst_kernel_estimated_bytes", "kernel");
  CHECK_FAIL(fst_kernel_estimated_bytes(kernel, NULL, &written_bytes), FST_ERROR_INVALID_ARGUMENT,
             "fst_kernel_estimated_bytes", "out_read_bytes");
  CHECK_FAIL(fst_kernel_estimated_bytes(kernel, &read_bytes, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_kernel_estimated_bytes", "out_written_bytes");
  CHECK(name == (const char*)SENTINEL_PTR && source == (const char*)SENTINEL_PTR &&
        ptx == (const char*)SENTINEL_PTR);
  CHECK(cubin == SENTINEL_PTR && cubin_size == 77 && params == 77 && shared == 77 && grid[0] == 0 &&
        block[0] == 0);
  CHECK_FAIL(fst_kernel_launch_kind(NULL, &launch_kind), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_launch_kind",
             "kernel");
  CHECK_FAIL(fst_kernel_launch_kind(kernel, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_launch_kind",
             "out_kind");
  CHECK_FAIL(fst_kernel_function(NULL, &function), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_function",
             "kernel");
  CHECK_FAIL(fst_kernel_function(kernel, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_function",
             "out_function");
  /* The test's context runs on the host backend, where kernels have no CUfunction. */
  CHECK_FAIL(fst_kernel_function(kernel, &function), FST_ERROR_UNSUPPORTED, "fst_kernel_function", "host");
  CHECK_FAIL(fst_kernel_launch(NULL, args, 1, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_launch",
             "kernel");
  CHECK_FAIL(fst_kernel_launch(kernel, args, 1000, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_launch",
             "nargs is 1000");
  CHECK_FAIL(fst_kernel_launch(kernel, args, 0, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_kernel_launch",
             "nargs is 0");
  CHECK(read_bytes == 77 && written_bytes == 77 && kind == (fst_param_kind)77 && value == (fst_value)77);
  CHECK(launch_kind == (fst_launch_kind)77 && function == SENTINEL_PTR);

  /* The entry point is named in the module's source. */
  CHECK_OK(fst_kernel_name(kernel, &name));
  CHECK_OK(fst_kernel_source(kernel, &source));
  CHECK(name != NULL && name[0] != '\0' && capi_contains(source, name));
  CHECK_OK(fst_kernel_launch_config(kernel, grid, block, &shared));
  CHECK(grid[0] >= 1 && grid[1] >= 1 && grid[2] >= 1 && block[0] >= 1 && block[1] >= 1 && block[2] >= 1);
  CHECK(block[0] * block[1] * block[2] <= 1024);
  CHECK(shared <= 227 * 1024);
  CHECK_OK(fst_kernel_estimated_bytes(kernel, &read_bytes, &written_bytes));
  CHECK(written_bytes > 0); /* a kernel of constants reads nothing */
  CHECK_OK(fst_kernel_launch_kind(kernel, &launch_kind));
  CHECK(launch_kind == FST_LAUNCH_REGULAR); /* nothing planned today meets at a grid barrier */

  /* Every parameter is an input, an output or a place in the workspace, with a graph value. */
  CHECK_OK(fst_graph_input_count(g, &ninputs));
  CHECK_OK(fst_graph_output_count(g, &noutputs));
  CHECK_OK(fst_kernel_param_count(kernel, &params));
  CHECK(params >= 1);
  for (i = 0; i < params; ++i) {
    fst_dtype dtype = FST_BOOL;
    CHECK_OK(fst_kernel_param(kernel, i, &kind, &index, &value));
    CHECK(kind == FST_PARAM_INPUT || kind == FST_PARAM_OUTPUT || kind == FST_PARAM_WORKSPACE);
    if (kind == FST_PARAM_INPUT) CHECK(index < ninputs);
    if (kind == FST_PARAM_OUTPUT) CHECK(index < noutputs);
    if (kind == FST_PARAM_WORKSPACE) CHECK(index < workspace_bytes);
    CHECK_OK(fst_value_dtype(g, value, &dtype));
    CHECK_OK(fst_kernel_param(kernel, i, &kind, &index, NULL));
  }
  CHECK_FAIL(fst_kernel_param(kernel, params, &kind, &index, &value), FST_ERROR_INVALID_ARGUMENT,
             "fst_kernel_param", "index");

  /* PTX and CUBIN need NVRTC: either they come back, or the status says what is missing. */
  if (compile_allowed()) {
    ptx = NULL;
    status = fst_kernel_ptx(kernel, &ptx);
    CHECK(status == FST_OK || status == FST_ERROR_NO_COMPILER);
    if (status == FST_OK) CHECK(capi_contains(ptx, name));
    cubin = NULL;
    cubin_size = 0;
    status = fst_kernel_cubin(kernel, &cubin, &cubin_size);
    CHECK(status == FST_OK || status == FST_ERROR_NO_COMPILER);
    if (status == FST_OK) CHECK(cubin != NULL && cubin_size > 0);
  }
}

/* True if every byte of `buffer` is still the 0x5A fill. */
static int untouched(const void* buffer, size_t size) {
  const unsigned char* p = (const unsigned char*)buffer;
  size_t i;
  for (i = 0; i < size; ++i) {
    if (p[i] != 0x5A) return 0;
  }
  return 1;
}

/* Launches the fusion's kernels one by one with fst_kernel_launch, as a framework running
 * them around its own operations would, and checks that the outputs equal those of
 * fst_fusion_run (y and s, already in the output buffers). */
static void run_kernel_by_kernel(const fst_fusion* fusion, const void* const* inputs, void* const* outputs,
                                 size_t workspace_bytes, const void* y, size_t y_size, const void* s,
                                 size_t s_size) {
  unsigned char saved_y[32 * sizeof(float)], saved_s[4 * sizeof(float)];
  unsigned char* workspace = (unsigned char*)malloc(workspace_bytes > 0 ? workspace_bytes : 1);
  size_t kernels = 0, i, p;
  if (workspace == NULL || y_size > sizeof saved_y || s_size > sizeof saved_s) {
    free(workspace);
    CHECK(0);
    return;
  }
  memcpy(saved_y, y, y_size);
  memcpy(saved_s, s, s_size);
  memset(outputs[0], 0x5A, y_size);
  memset(outputs[1], 0x5A, s_size);
  CHECK_OK(fst_fusion_kernel_count(fusion, &kernels));
  for (i = 0; i < kernels; ++i) {
    const fst_kernel* kernel = NULL;
    size_t params = 0;
    void* args[16];
    CHECK_OK(fst_fusion_kernel(fusion, i, &kernel));
    if (kernel == NULL) break;
    CHECK_OK(fst_kernel_param_count(kernel, &params));
    CHECK(params <= 16);
    if (params > 16) break;
    for (p = 0; p < params; ++p) {
      fst_param_kind kind = FST_PARAM_INPUT;
      size_t index = 0;
      CHECK_OK(fst_kernel_param(kernel, p, &kind, &index, NULL));
      args[p] = kind == FST_PARAM_INPUT    ? (void*)inputs[index]
                : kind == FST_PARAM_OUTPUT ? outputs[index]
                                           : (void*)(workspace + index);
    }
    if (params > 0) {
      void* saved = args[0];
      args[0] = NULL;
      CHECK_FAIL(fst_kernel_launch(kernel, args, params, NULL), FST_ERROR_INVALID_ARGUMENT,
                 "fst_kernel_launch", "args[0] is NULL");
      args[0] = saved;
      CHECK_FAIL(fst_kernel_launch(kernel, NULL, params, NULL), FST_ERROR_INVALID_ARGUMENT,
                 "fst_kernel_launch", "args");
    }
    CHECK_OK(fst_kernel_launch(kernel, args, params, NULL));
  }
  CHECK(memcmp(outputs[0], saved_y, y_size) == 0);
  CHECK(memcmp(outputs[1], saved_s, s_size) == 0);
  free(workspace);
}

/* Fuses `g` with `policy`, checks the plan's queries and, when allowed, runs it on the host
 * and compares with the reference evaluator. */
static void check_fusion(fst_graph* g, fst_fusion_policy policy) {
  float x[32], b[8], y[32], s[4], ref_y[32], ref_s[4];
  const void* inputs[2];
  void* outputs[2];
  void* ref_outputs[2];
  fst_fuse_options* options = NULL;
  fst_fusion* fusion = NULL;
  const fst_kernel* kernel = (const fst_kernel*)SENTINEL_PTR;
  size_t kernels = 0, workspace = 0, i;
  uint64_t planned = 0, lower = 0, found = 0;
  char* dump = (char*)SENTINEL_PTR;
  int k;

  CHECK_OK(fst_fuse_options_create(&options));
  CHECK_OK(fst_fuse_options_set_policy(options, policy));
  CHECK_OK(fst_fuse(g, options, &fusion));
  fst_fuse_options_destroy(options); /* not retained */
  if (fusion == NULL) return;

  CHECK_FAIL(fst_fusion_kernel_count(NULL, &kernels), FST_ERROR_INVALID_ARGUMENT, "fst_fusion_kernel_count",
             "fusion");
  CHECK_FAIL(fst_fusion_kernel_count(fusion, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_fusion_kernel_count",
             "out_count");
  CHECK_FAIL(fst_fusion_kernel(NULL, 0, &kernel), FST_ERROR_INVALID_ARGUMENT, "fst_fusion_kernel", "fusion");
  CHECK_FAIL(fst_fusion_kernel(fusion, 0, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_fusion_kernel",
             "out_kernel");
  CHECK_FAIL(fst_fusion_kernel(fusion, SIZE_MAX, &kernel), FST_ERROR_INVALID_ARGUMENT, "fst_fusion_kernel",
             "index");
  CHECK_FAIL(fst_fusion_workspace_size(NULL, &workspace), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_workspace_size", "fusion");
  CHECK_FAIL(fst_fusion_workspace_size(fusion, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_fusion_workspace_size",
             "out_bytes");
  CHECK_FAIL(fst_fusion_planned_bytes(NULL, &planned, &lower), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_planned_bytes", "fusion");
  CHECK_FAIL(fst_fusion_planned_bytes(fusion, NULL, &lower), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_planned_bytes", "out_planned_bytes");
  CHECK_FAIL(fst_fusion_planned_bytes(fusion, &planned, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_planned_bytes", "out_lower_bound_bytes");
  CHECK_FAIL(fst_fusion_dump(NULL, &dump), FST_ERROR_INVALID_ARGUMENT, "fst_fusion_dump", "fusion");
  CHECK_FAIL(fst_fusion_dump(fusion, NULL), FST_ERROR_INVALID_ARGUMENT, "fst_fusion_dump", "out_text");
  CHECK(kernels == 0 && workspace == 0 && planned == 0 && lower == 0);
  CHECK(kernel == (const fst_kernel*)SENTINEL_PTR && dump == (char*)SENTINEL_PTR);

  CHECK_OK(fst_fusion_kernel_count(fusion, &kernels));
  CHECK(kernels >= 1);
  CHECK_OK(fst_fusion_workspace_size(fusion, &workspace));
  CHECK_OK(fst_fusion_planned_bytes(fusion, &planned, &lower));
  CHECK(lower == io_bytes(g));
  CHECK(planned >= lower);
  CHECK_OK(fst_fusion_dump(fusion, &dump));
  CHECK(dump != NULL && dump[0] != '\0');
  fst_string_free(dump);
  for (i = 0; i < kernels; ++i) {
    kernel = NULL;
    CHECK_OK(fst_fusion_kernel(fusion, i, &kernel));
    if (kernel != NULL) check_kernel(g, kernel, workspace);
  }
  CHECK_FAIL(fst_fusion_kernel(fusion, kernels, &kernel), FST_ERROR_INVALID_ARGUMENT, "fst_fusion_kernel",
             "index");

  /* Bad runs. */
  for (k = 0; k < 32; ++k) x[k] = (float)(k % 7) * 0.25f - 0.5f;
  for (k = 0; k < 8; ++k) b[k] = (float)k - 3.0f;
  inputs[0] = x;
  inputs[1] = b;
  outputs[0] = y;
  outputs[1] = s;
  memset(y, 0x5A, sizeof y);
  CHECK_FAIL(fst_fusion_run(NULL, inputs, 2, outputs, 2, NULL, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_run", "fusion");
  CHECK_FAIL(fst_fusion_run(fusion, inputs, 1, outputs, 2, NULL, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_run", "ninputs");
  CHECK_FAIL(fst_fusion_run(fusion, inputs, 2, outputs, 3, NULL, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_run", "noutputs");
  CHECK_FAIL(fst_fusion_run(fusion, NULL, 2, outputs, 2, NULL, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_run", "inputs");
  CHECK_FAIL(fst_fusion_run(fusion, inputs, 2, NULL, 2, NULL, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_run", "outputs");
  CHECK(untouched(y, sizeof y)); /* failed runs wrote nothing */

  /* Compile counters: bad arguments, then what the first good run compiled or found. */
  CHECK_FAIL(fst_fusion_compile_stat(NULL, FST_COMPILE_STAT_COMPILED, &found), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_compile_stat", "fusion");
  CHECK_FAIL(fst_fusion_compile_stat(fusion, FST_COMPILE_STAT_COMPILED, NULL), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_compile_stat", "out_value");
  CHECK_FAIL(fst_fusion_compile_stat(fusion, (fst_compile_stat)6, &found), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_compile_stat", "6");
  CHECK_FAIL(fst_fusion_compile_stat(fusion, (fst_compile_stat)-1, &found), FST_ERROR_INVALID_ARGUMENT,
             "fst_fusion_compile_stat", "-1");
  CHECK(found == 0);

  /* A good run on the host backend agrees with the reference evaluator. */
  if (compile_allowed()) {
    ref_outputs[0] = ref_y;
    ref_outputs[1] = ref_s;
    CHECK_OK(fst_graph_evaluate_reference(g, inputs, 2, ref_outputs, 2));
    CHECK_OK(fst_fusion_run(fusion, inputs, 2, outputs, 2, NULL, NULL));
    CHECK(memcmp(y, ref_y, sizeof y) == 0);
    for (k = 0; k < 4; ++k) CHECK(s[k] - ref_s[k] <= 1e-5f * ref_s[k] && ref_s[k] - s[k] <= 1e-5f * ref_s[k]);
    run_kernel_by_kernel(fusion, inputs, outputs, workspace, y, sizeof y, s, sizeof s);
    /* The run compiled the fusion's modules or found them in memory or on disk. */
    for (k = FST_COMPILE_STAT_COMPILED; k <= FST_COMPILE_STAT_DISK_HITS; ++k) {
      uint64_t count = 0;
      CHECK_OK(fst_fusion_compile_stat(fusion, (fst_compile_stat)k, &count));
      found += count;
    }
    CHECK(found >= 1);
  }
  fst_fusion_destroy(fusion);
}

/* A fusion outlives its graph and context; a plan with an opaque operation does not run. */
static void test_lifetime_and_opaque(void) {
  fst_context* context = NULL;
  fst_graph* g = NULL;
  fst_fusion* fusion = NULL;
  fst_value x;
  size_t count = 0;
  float in[4] = {1, 2, 3, 4}, out[4];
  const void* inputs[1];
  void* outputs[1];

  CHECK_OK(fst_context_create(NULL, &context));
  CHECK_OK(fst_graph_create(context, &g));
  fst_context_destroy(context);
  if (g == NULL) return;
  x = fst_input(g, "x", FST_F32, 1, (const int64_t[]){4});
  CHECK_OK(fst_output(g, "y", fst_unary(g, FST_UNARY_RELU, x)));
  CHECK_OK(fst_fuse(g, NULL, &fusion));
  fst_graph_destroy(g);
  if (fusion != NULL) {
    CHECK_OK(fst_fusion_kernel_count(fusion, &count));
    CHECK(count >= 1);
  }
  fst_fusion_destroy(fusion);
  fusion = NULL;

  g = capi_new_graph();
  if (g == NULL) return;
  x = fst_input(g, "x", FST_F32, 1, (const int64_t[]){4});
  CHECK_OK(fst_output(
      g, "y",
      fst_unary(g, FST_UNARY_EXP, fst_opaque(g, "custom_op", 1, &x, FST_F32, 1, (const int64_t[]){4}))));
  CHECK_OK(fst_fuse(g, NULL, &fusion));
  inputs[0] = in;
  outputs[0] = out;
  if (fusion != NULL) {
    CHECK_FAIL(fst_fusion_run(fusion, inputs, 1, outputs, 1, NULL, NULL), FST_ERROR_UNSUPPORTED,
               "fst_fusion_run", "custom_op");
  }
  fst_fusion_destroy(fusion);
  fst_graph_destroy(g);
}

void test_fusion(void) {
  fst_graph* g;
  test_options();
  test_device_model();
  test_fuse_bad_input();
  g = fusable_graph();
  if (g != NULL) {
    check_fusion(g, FST_POLICY_STITCH);
    check_fusion(g, FST_POLICY_LOOP);
    check_fusion(g, FST_POLICY_NONE);
  }
  fst_graph_destroy(g);
  test_lifetime_and_opaque();
}
