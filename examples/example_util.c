#include "example_util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void example_report(const char* program, const char* what, fst_status status) {
  fprintf(stderr, "%s: %s failed: %s: %s\n", program, what, fst_status_string(status),
          fst_last_error_message());
}

int example_parse_int(const char* text, long long min, long long max, long long* out) {
  char* end = NULL;
  long long value;
  if (text == NULL || *text == '\0') return -1;
  errno = 0;
  value = strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < min || value > max) return -1;
  *out = value;
  return 0;
}

int example_parse_backend(const char* text, fst_backend* out) {
  if (strcmp(text, "auto") == 0) {
    *out = FST_BACKEND_AUTO;
  } else if (strcmp(text, "cuda") == 0) {
    *out = FST_BACKEND_CUDA;
  } else if (strcmp(text, "host") == 0) {
    *out = FST_BACKEND_HOST;
  } else {
    return -1;
  }
  return 0;
}

const char* example_backend_name(fst_backend backend) {
  switch (backend) {
    case FST_BACKEND_CUDA:
      return "cuda";
    case FST_BACKEND_HOST:
      return "host";
    case FST_BACKEND_AUTO:
      break;
  }
  return "auto";
}

fst_status example_create_context(const char* program, int use_default, fst_backend backend,
                                  fst_context** out_context) {
  fst_context_options* options = NULL;
  fst_status status = fst_context_options_create(&options);
  if (status != FST_OK) {
    example_report(program, "fst_context_options_create", status);
    return status;
  }
  if (!use_default) {
    status = fst_context_options_set_backend(options, backend);
    if (status != FST_OK) {
      example_report(program, "fst_context_options_set_backend", status);
      fst_context_options_destroy(options);
      return status;
    }
  }
  status = fst_context_create(options, out_context);
  fst_context_options_destroy(options);
  if (status != FST_OK) {
    /* Naming the backend tells a user on a machine without a GPU what to change. */
    fprintf(stderr, "%s: cannot create a context on the %s backend: %s: %s\n", program,
            use_default ? "default" : example_backend_name(backend), fst_status_string(status),
            fst_last_error_message());
  }
  return status;
}

void example_rng_seed(example_rng* rng, uint64_t seed) {
  /* Distinct seeds must not give overlapping streams early on: start from a mixed state. */
  rng->state = seed * 0x9E3779B97F4A7C15ull + 0xD1B54A32D192ED03ull;
  (void)example_rng_next(rng);
}

uint64_t example_rng_next(example_rng* rng) {
  uint64_t x;
  rng->state = rng->state * 6364136223846793005ull + 1442695040888963407ull;
  x = rng->state;
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDull;
  x ^= x >> 33;
  return x;
}

double example_rng_uniform(example_rng* rng) {
  /* 53 random bits give a double in [0, 1). */
  return (double)(example_rng_next(rng) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

int64_t example_rng_int(example_rng* rng, int64_t low, int64_t high) {
  uint64_t span = (uint64_t)(high - low) + 1;
  return low + (int64_t)((example_rng_next(rng) >> 32) % span);
}

double example_relative_l2(const double* got, const double* want, size_t n) {
  double diff2 = 0, want2 = 0;
  size_t i;
  for (i = 0; i < n; ++i) {
    double d = got[i] - want[i];
    diff2 += d * d;
    want2 += want[i] * want[i];
  }
  return sqrt(diff2) / fmax(sqrt(want2), 1e-30);
}

double example_max_abs_error(const double* got, const double* want, size_t n) {
  double worst = 0;
  size_t i;
  for (i = 0; i < n; ++i) {
    double err = fabs(got[i] - want[i]);
    if (isnan(err)) return err;
    if (err > worst) worst = err;
  }
  return worst;
}

static const char* launch_kind_name(fst_launch_kind kind) {
  switch (kind) {
    case FST_LAUNCH_COOPERATIVE:
      return "cooperative";
    case FST_LAUNCH_CLUSTER:
      return "cluster";
    default:
      return "regular";
  }
}

fst_status example_print_plan_summary(const char* program, const fst_fusion* fusion) {
  size_t kernels = 0, workspace = 0, i;
  uint64_t planned = 0, lower_bound = 0;
  fst_status status;
  if ((status = fst_fusion_kernel_count(fusion, &kernels)) != FST_OK ||
      (status = fst_fusion_planned_bytes(fusion, &planned, &lower_bound)) != FST_OK ||
      (status = fst_fusion_workspace_size(fusion, &workspace)) != FST_OK) {
    example_report(program, "querying the fusion", status);
    return status;
  }
  printf("plan: %zu kernel(s), %llu global bytes planned (lower bound %llu, %.2fx), workspace %zu bytes\n",
         kernels, (unsigned long long)planned, (unsigned long long)lower_bound,
         lower_bound > 0 ? (double)planned / (double)lower_bound : 0.0, workspace);
  for (i = 0; i < kernels; ++i) {
    const fst_kernel* kernel = NULL;
    const char* name = NULL;
    uint32_t grid[3], block[3];
    size_t shared = 0;
    uint32_t cluster = 1;
    fst_launch_kind kind = FST_LAUNCH_REGULAR;
    if ((status = fst_fusion_kernel(fusion, i, &kernel)) != FST_OK ||
        (status = fst_kernel_name(kernel, &name)) != FST_OK ||
        (status = fst_kernel_launch_config(kernel, grid, block, &shared)) != FST_OK ||
        (status = fst_kernel_launch_kind(kernel, &kind)) != FST_OK ||
        (status = fst_kernel_cluster_blocks(kernel, &cluster)) != FST_OK) {
      example_report(program, "querying a kernel", status);
      return status;
    }
    printf(
        "  kernel %zu %s: grid [%u,%u,%u], block [%u,%u,%u], %zu bytes of dynamic shared memory, %s launch",
        i, name, (unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2], (unsigned)block[0],
        (unsigned)block[1], (unsigned)block[2], shared, launch_kind_name(kind));
    if (kind == FST_LAUNCH_CLUSTER) printf(" (clusters of %u blocks)", (unsigned)cluster);
    printf("\n");
  }
  return FST_OK;
}

int example_judge_f32(const char* program, fst_backend backend, const float* fused, const float* reference,
                      const double* direct, size_t n) {
  double* reference_d = calloc(n > 0 ? n : 1, sizeof(double));
  double* fused_d = calloc(n > 0 ? n : 1, sizeof(double));
  double reference_vs_direct, fused_vs_reference, fused_vs_direct;
  int result = 1;
  size_t i;
  if (reference_d == NULL || fused_d == NULL) {
    fprintf(stderr, "%s: out of memory for the comparison of %zu elements\n", program, n);
    goto done;
  }
  for (i = 0; i < n; ++i) {
    reference_d[i] = reference[i];
    fused_d[i] = fused[i];
  }
  reference_vs_direct = example_relative_l2(reference_d, direct, n);
  fused_vs_reference = example_relative_l2(fused_d, reference_d, n);
  fused_vs_direct = example_relative_l2(fused_d, direct, n);
  printf(
      "relative L2 error: reference evaluator vs direct C %.3g, fused vs reference %.3g, fused vs direct C "
      "%.3g\n",
      reference_vs_direct, fused_vs_reference, fused_vs_direct);
  printf("max |fused - reference| = %.3g\n", example_max_abs_error(fused_d, reference_d, n));
  if (!(reference_vs_direct < 1e-5)) {
    fprintf(stderr, "%s: FAILED: the reference evaluator disagrees with the direct computation\n", program);
  } else if (!(fused_vs_reference < 1e-5) || !(fused_vs_direct < 1e-5)) {
    fprintf(stderr, "%s: FAILED: the fused kernels on the %s backend disagree with the reference\n", program,
            example_backend_name(backend));
  } else {
    result = 0;
  }
done:
  free(reference_d);
  free(fused_d);
  return result;
}
