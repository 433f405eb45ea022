/*
 * fstitch-run: fuses a graph written in the text format (docs/text-format.md), prints the
 * plan and, on request, each kernel's CUDA C and PTX, runs the kernels on the context's
 * backend with seeded random inputs and checks every output against the reference
 * evaluator. Exit status: 0 when every output matches, 1 when a step fails or an output
 * differs, 2 for a bad command line.
 */
#include <errno.h>
#include <fstitch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype_values.h"
#include "example_util.h"
#include "fusion_runner.h"
#include "graph_precision.h"
#include "output_check.h"

static const char* const program = "fstitch-run";

/* Graph text larger than this is refused rather than read into memory. */
#define MAX_TEXT_BYTES ((size_t)256 << 20)

typedef struct run_options {
  const char* path;       /* "-" reads standard input */
  const char* shown_path; /* the path as messages name it */
  fst_fusion_policy policy;
  const char* policy_name;
  int target; /* 0: the default (the context's device, else sm_90) */
  int default_backend;
  fst_backend backend;
  unsigned long long seed;
  int print_plan;
  int print_source;
  int print_ptx;
  int run;
} run_options;

/* A graph input or output: its name, dtype, dims, and host arrays. */
typedef struct tensor {
  const char* name;
  fst_dtype dtype;
  size_t rank;
  int64_t dims[FST_MAX_RANK];
  size_t count;
  size_t bytes;
  void* data;     /* inputs: the random data; outputs: the fused result */
  void* expected; /* outputs: the reference evaluator's result */
} tensor;

static void print_usage(FILE* stream) {
  fprintf(stream,
          "usage: %s [options] GRAPH\n"
          "Fuses GRAPH (the fstitch graph text format; - reads standard input), runs the kernels\n"
          "with random inputs and checks every output against the reference evaluator.\n"
          "\n"
          "  --policy P    stitch (default), loop or none\n"
          "  --target SM   80 or 90: the architecture kernels are planned and compiled for\n"
          "                (default: the context's GPU, else 90)\n"
          "  --backend B   auto, cuda or host (default: auto, or the one named by FSTITCH_BACKEND)\n"
          "  --seed N      seed of the random inputs (default 1): floats uniform in [-1, 1],\n"
          "                integers in [-8, 8] (u8 in [0, 16]), bools both ways\n"
          "  --plan        print the plan: kernels, schedules, stitch schemes, buffers, bytes\n"
          "  --source      print each kernel's CUDA C source\n"
          "  --ptx         print each kernel's PTX (compiles with NVRTC)\n"
          "  --no-run      print only; do not run or check\n"
          "  --help        print this help\n"
          "\n"
          "Exit status: 0 when every output matches the reference, 1 when a step fails or an\n"
          "output differs, 2 for a bad command line.\n",
          program);
}

static int usage_error(void) {
  fprintf(stderr, "Try '%s --help'.\n", program);
  return EXAMPLE_EXIT_USAGE;
}

static int parse_policy(const char* text, run_options* options) {
  if (strcmp(text, "stitch") == 0) {
    options->policy = FST_POLICY_STITCH;
  } else if (strcmp(text, "loop") == 0) {
    options->policy = FST_POLICY_LOOP;
  } else if (strcmp(text, "none") == 0) {
    options->policy = FST_POLICY_NONE;
  } else {
    return -1;
  }
  options->policy_name = text;
  return 0;
}

/* Sets the option `name` from `value`; prints the reason and returns -1 when it is bad. */
static int set_valued_option(const char* name, const char* value, run_options* options) {
  long long number = 0;
  if (strcmp(name, "--policy") == 0) {
    if (parse_policy(value, options) == 0) return 0;
    fprintf(stderr, "%s: --policy must be stitch, loop or none, not '%s'\n", program, value);
  } else if (strcmp(name, "--target") == 0) {
    if (example_parse_int(value, 0, 1000, &number) == 0 && (number == 80 || number == 90)) {
      options->target = (int)number;
      return 0;
    }
    fprintf(stderr, "%s: --target must be 80 (A100) or 90 (H100, H200), not '%s'\n", program, value);
  } else if (strcmp(name, "--backend") == 0) {
    if (example_parse_backend(value, &options->backend) == 0) {
      options->default_backend = 0;
      return 0;
    }
    fprintf(stderr, "%s: --backend must be auto, cuda or host, not '%s'\n", program, value);
  } else {
    if (value[0] != '-' && example_parse_int(value, 0, 0x7FFFFFFFFFFFFFFFLL, &number) == 0) {
      options->seed = (unsigned long long)number;
      return 0;
    }
    fprintf(stderr, "%s: --seed must be a non-negative integer, not '%s'\n", program, value);
  }
  return -1;
}

static int is_valued_option(const char* name) {
  return strcmp(name, "--policy") == 0 || strcmp(name, "--target") == 0 || strcmp(name, "--backend") == 0 ||
         strcmp(name, "--seed") == 0;
}

/* EXAMPLE_EXIT_OK to go on, -1 after --help, EXAMPLE_EXIT_USAGE after a bad argument. */
static int parse_options(int argc, char** argv, run_options* options) {
  int i, only_operands = 0;
  memset(options, 0, sizeof *options);
  options->policy = FST_POLICY_STITCH;
  options->policy_name = "stitch";
  options->default_backend = 1;
  options->backend = FST_BACKEND_AUTO;
  options->seed = 1;
  options->run = 1;
  for (i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    if (only_operands || arg[0] != '-' || strcmp(arg, "-") == 0) {
      if (options->path != NULL) {
        fprintf(stderr, "%s: one graph file at a time ('%s' and '%s' given)\n", program, options->path, arg);
        return usage_error();
      }
      options->path = arg;
    } else if (strcmp(arg, "--") == 0) {
      only_operands = 1;
    } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      print_usage(stdout);
      return -1;
    } else if (strcmp(arg, "--plan") == 0) {
      options->print_plan = 1;
    } else if (strcmp(arg, "--source") == 0) {
      options->print_source = 1;
    } else if (strcmp(arg, "--ptx") == 0) {
      options->print_ptx = 1;
    } else if (strcmp(arg, "--no-run") == 0) {
      options->run = 0;
    } else {
      /* --name value or --name=value */
      char name[16];
      const char* equals = strchr(arg, '=');
      const char* value;
      const size_t length = equals != NULL ? (size_t)(equals - arg) : strlen(arg);
      if (length < sizeof name) {
        memcpy(name, arg, length);
        name[length] = '\0';
      }
      if (length >= sizeof name || !is_valued_option(name)) {
        fprintf(stderr, "%s: unknown option '%s'\n", program, arg);
        return usage_error();
      }
      if (equals != NULL) {
        value = equals + 1;
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        fprintf(stderr, "%s: %s needs a value\n", program, name);
        return usage_error();
      }
      if (set_valued_option(name, value, options) != 0) return usage_error();
    }
  }
  if (options->path == NULL) {
    fprintf(stderr, "%s: no graph file given\n", program);
    return usage_error();
  }
  options->shown_path = strcmp(options->path, "-") == 0 ? "<standard input>" : options->path;
  return EXAMPLE_EXIT_OK;
}

/* Reads the whole file (or standard input for "-"). Returns 0, or -1 after saying why. */
static int read_text(const char* path, char** out_text, size_t* out_length) {
  const int from_stdin = strcmp(path, "-") == 0;
  FILE* file = from_stdin ? stdin : fopen(path, "rb");
  size_t capacity = 0, length = 0;
  char* text = NULL;
  int result = -1;
  if (file == NULL) {
    fprintf(stderr, "%s: cannot open '%s': %s\n", program, path, strerror(errno));
    return -1;
  }
  for (;;) {
    if (length == capacity) {
      char* grown;
      if (capacity >= MAX_TEXT_BYTES) {
        fprintf(stderr, "%s: '%s' has more than %zu bytes, more than a graph text should have\n", program,
                path, MAX_TEXT_BYTES);
        break;
      }
      grown = realloc(text, capacity == 0 ? (size_t)1 << 16 : capacity * 2);
      if (grown == NULL) {
        fprintf(stderr, "%s: out of memory reading '%s'\n", program, path);
        break;
      }
      text = grown;
      capacity = capacity == 0 ? (size_t)1 << 16 : capacity * 2;
    }
    length += fread(text + length, 1, capacity - length, file);
    if (ferror(file)) { /* a directory, say */
      fprintf(stderr, "%s: cannot read '%s': %s\n", program, path, strerror(errno));
      break;
    }
    if (feof(file)) {
      result = 0;
      break;
    }
  }
  if (!from_stdin) fclose(file);
  if (result != 0) {
    free(text);
    return -1;
  }
  *out_text = text;
  *out_length = length;
  return 0;
}

/* "f32[64,256]", or "f32" for a scalar. */
static void format_type(const tensor* t, char* out, size_t size) {
  size_t used = (size_t)snprintf(out, size, "%s", fst_dtype_name(t->dtype)), i;
  for (i = 0; i < t->rank && used < size; ++i) {
    used += (size_t)snprintf(out + used, size - used, "%s%lld%s", i == 0 ? "[" : ",", (long long)t->dims[i],
                             i + 1 == t->rank ? "]" : "");
  }
}

/* "[3,17]": the coordinates of flat element `index`. */
static void format_coordinates(const tensor* t, size_t index, char* out, size_t size) {
  size_t coordinates[FST_MAX_RANK], used = 0, i;
  for (i = t->rank; i-- > 0;) {
    coordinates[i] = index % (size_t)t->dims[i];
    index /= (size_t)t->dims[i];
  }
  snprintf(out, size, "[]"); /* a scalar */
  for (i = 0; i < t->rank && used < size; ++i) {
    used += (size_t)snprintf(out + used, size - used, "%s%zu%s", i == 0 ? "[" : ",", coordinates[i],
                             i + 1 == t->rank ? "]" : "");
  }
}

/* Fills in a tensor's dtype, dims, element count and byte size, and allocates its arrays. */
static int describe_tensor(const fst_graph* graph, fst_value value, const char* name, int is_output,
                           tensor* t) {
  fst_status status;
  size_t i, element_size;
  t->name = name;
  if ((status = fst_value_dtype(graph, value, &t->dtype)) != FST_OK ||
      (status = fst_value_rank(graph, value, &t->rank)) != FST_OK ||
      (status = fst_value_dims(graph, value, FST_MAX_RANK, t->dims)) != FST_OK) {
    example_report(program, "querying the graph", status);
    return -1;
  }
  element_size = fst_dtype_size(t->dtype);
  if (element_size == 0) {
    fprintf(stderr, "%s: %s \"%s\" has an unknown dtype\n", program, is_output ? "output" : "input", name);
    return -1;
  }
  t->count = 1;
  for (i = 0; i < t->rank; ++i) {
    if ((uint64_t)t->dims[i] > (uint64_t)(SIZE_MAX / element_size / t->count)) {
      fprintf(stderr, "%s: %s \"%s\" has more elements than this machine can address\n", program,
              is_output ? "output" : "input", name);
      return -1;
    }
    t->count *= (size_t)t->dims[i];
  }
  t->bytes = t->count * element_size;
  t->data = malloc(t->bytes);
  if (is_output) t->expected = malloc(t->bytes);
  if (t->data == NULL || (is_output && t->expected == NULL)) {
    fprintf(stderr, "%s: out of memory: %s \"%s\" needs %zu bytes\n", program, is_output ? "output" : "input",
            name, t->bytes);
    return -1;
  }
  return 0;
}

static void free_tensors(tensor* tensors, size_t count) {
  size_t i;
  if (tensors == NULL) return;
  for (i = 0; i < count; ++i) {
    free(tensors[i].data);
    free(tensors[i].expected);
  }
  free(tensors);
}

/* Prints each kernel's CUDA C source (`ptx` 0) or PTX (`ptx` 1). */
static int print_kernel_texts(const fst_fusion* fusion, int ptx) {
  size_t kernels = 0, i;
  fst_status status = fst_fusion_kernel_count(fusion, &kernels);
  if (status != FST_OK) {
    example_report(program, "fst_fusion_kernel_count", status);
    return -1;
  }
  for (i = 0; i < kernels; ++i) {
    const fst_kernel* kernel = NULL;
    const char* name = NULL;
    const char* text = NULL;
    if ((status = fst_fusion_kernel(fusion, i, &kernel)) != FST_OK ||
        (status = fst_kernel_name(kernel, &name)) != FST_OK) {
      example_report(program, "querying a kernel", status);
      return -1;
    }
    status = ptx ? fst_kernel_ptx(kernel, &text) : fst_kernel_source(kernel, &text);
    if (status != FST_OK) {
      example_report(program, ptx ? "fst_kernel_ptx" : "fst_kernel_source", status);
      return -1;
    }
    printf("// ---- kernel %zu: %s, %s ----\n%s%s", i, name, ptx ? "PTX" : "CUDA C source", text,
           text[0] != '\0' && text[strlen(text) - 1] == '\n' ? "" : "\n");
  }
  return 0;
}

/* Prints one line for output `index` and returns whether it passed. */
static int judge_output(size_t index, const tensor* t, int through_low_precision) {
  const example_tolerance tolerance = example_output_tolerance(t->dtype, through_low_precision);
  example_comparison result;
  char type[96], at[96];
  example_compare_output(t->dtype, t->data, t->expected, t->count, &tolerance, &result);
  format_type(t, type, sizeof type);
  format_coordinates(t, result.first_mismatch, at, sizeof at);
  printf("output %zu \"%s\" %s: ", index, t->name, type);
  if (tolerance.exact) {
    if (result.mismatches == 0) {
      printf("all %zu elements equal the reference: ok\n", t->count);
    } else {
      printf(
          "%zu of %zu elements differ from the reference, the first at %s (%.17g, expected %.17g): FAILED\n",
          result.mismatches, t->count, at, result.got_value, result.want_value);
    }
    return result.ok;
  }
  if (result.mismatches > 0) {
    printf(
        "%zu of %zu elements are NaN or infinite where the reference is finite, or differ from its NaN or "
        "infinity; the first at %s (%g, expected %g)",
        result.mismatches, t->count, at, result.got_value, result.want_value);
  } else {
    printf("relative L2 error %.3g (limit %g), largest error %.3g of the RMS (limit %g)", result.l2_error,
           tolerance.l2, result.max_over_rms, tolerance.max_over_rms);
    if (!result.ok)
      printf(", the largest at %s (%.9g, expected %.9g)", at, result.got_value, result.want_value);
  }
  printf(": %s\n", result.ok ? "ok" : "FAILED");
  return result.ok;
}

int main(int argc, char** argv) {
  run_options options;
  fst_context* ctx = NULL;
  fst_graph* graph = NULL;
  fst_fuse_options* fuse_options = NULL;
  fst_fusion* fusion = NULL;
  fst_backend backend = FST_BACKEND_HOST;
  char* text = NULL;
  char* printed = NULL;
  char* plan = NULL;
  size_t length = 0, ninputs = 0, noutputs = 0, i, passed = 0;
  tensor* inputs = NULL;
  tensor* outputs = NULL;
  example_buffer* input_buffers = NULL;
  example_buffer* output_buffers = NULL;
  const void** reference_inputs = NULL;
  void** reference_outputs = NULL;
  unsigned char* low_precision = NULL;
  int target = 90, exit_code = EXAMPLE_EXIT_FAILURE;
  fst_status status;
  example_rng rng;

  /* Line by line, so that a message on stderr comes after the lines it follows. */
  setvbuf(stdout, NULL, _IOLBF, BUFSIZ);
  switch (parse_options(argc, argv, &options)) {
    case EXAMPLE_EXIT_OK:
      break;
    case -1:
      return EXAMPLE_EXIT_OK;
    default:
      return EXAMPLE_EXIT_USAGE;
  }
  if (read_text(options.path, &text, &length) != 0) return EXAMPLE_EXIT_FAILURE;
  if (example_create_context(program, options.default_backend, options.backend, &ctx) != FST_OK) goto done;
  if ((status = fst_context_active_backend(ctx, &backend)) != FST_OK) {
    example_report(program, "fst_context_active_backend", status);
    goto done;
  }
  if (backend == FST_BACKEND_CUDA && fst_context_device_arch(ctx, &target) != FST_OK) target = 90;

  /* Parse errors carry "line L, column C: what was expected and what was found". */
  if ((status = fst_graph_parse(ctx, text, length, &graph)) != FST_OK) {
    const char* message = fst_last_error_message();
    const char* const function = "fst_graph_parse: ";
    if (strncmp(message, function, strlen(function)) == 0) message += strlen(function);
    fprintf(stderr, "%s: %s: %s (%s)\n", program, options.shown_path, message, fst_status_string(status));
    goto done;
  }
  if ((status = fst_graph_verify(graph)) != FST_OK) {
    fprintf(stderr, "%s: %s: the graph is not valid: %s (%s)\n", program, options.shown_path,
            fst_last_error_message(), fst_status_string(status));
    goto done;
  }
  if ((status = fst_graph_input_count(graph, &ninputs)) != FST_OK ||
      (status = fst_graph_output_count(graph, &noutputs)) != FST_OK) {
    example_report(program, "querying the graph", status);
    goto done;
  }

  if ((status = fst_fuse_options_create(&fuse_options)) != FST_OK ||
      (status = fst_fuse_options_set_policy(fuse_options, options.policy)) != FST_OK ||
      (options.target != 0 &&
       (status = fst_fuse_options_set_target_arch(fuse_options, options.target)) != FST_OK)) {
    example_report(program, "setting the fuse options", status);
    goto done;
  }
  if (options.target != 0) target = options.target;
  if ((status = fst_fuse(graph, fuse_options, &fusion)) != FST_OK) {
    example_report(program, "fst_fuse", status);
    goto done;
  }
  printf("%s: %zu input(s), %zu output(s); policy %s, target sm_%d, %s backend\n", options.shown_path,
         ninputs, noutputs, options.policy_name, target, example_backend_name(backend));
  if (example_print_plan_summary(program, fusion) != FST_OK) goto done;
  if (options.print_plan) {
    if ((status = fst_fusion_dump(fusion, &plan)) != FST_OK) {
      example_report(program, "fst_fusion_dump", status);
      goto done;
    }
    printf("%s%s", plan, plan[0] != '\0' && plan[strlen(plan) - 1] == '\n' ? "" : "\n");
  }
  if (options.print_source && print_kernel_texts(fusion, 0) != 0) goto done;
  if (options.print_ptx && print_kernel_texts(fusion, 1) != 0) goto done;
  if (!options.run) {
    exit_code = EXAMPLE_EXIT_OK;
    goto done;
  }

  inputs = calloc(ninputs + 1, sizeof *inputs);
  outputs = calloc(noutputs + 1, sizeof *outputs);
  input_buffers = calloc(ninputs + 1, sizeof *input_buffers);
  output_buffers = calloc(noutputs + 1, sizeof *output_buffers);
  reference_inputs = calloc(ninputs + 1, sizeof *reference_inputs);
  reference_outputs = calloc(noutputs + 1, sizeof *reference_outputs);
  low_precision = calloc(noutputs + 1, 1);
  if (!inputs || !outputs || !input_buffers || !output_buffers || !reference_inputs || !reference_outputs ||
      !low_precision) {
    fprintf(stderr, "%s: out of memory\n", program);
    goto done;
  }
  example_rng_seed(&rng, options.seed);
  for (i = 0; i < ninputs; ++i) {
    fst_value value;
    const char* name = NULL;
    if ((status = fst_graph_input(graph, i, &value, &name)) != FST_OK) {
      example_report(program, "fst_graph_input", status);
      goto done;
    }
    if (describe_tensor(graph, value, name, 0, &inputs[i]) != 0) goto done;
    example_fill_random(inputs[i].dtype, inputs[i].data, inputs[i].count, &rng);
    input_buffers[i].data = inputs[i].data;
    input_buffers[i].bytes = inputs[i].bytes;
    reference_inputs[i] = inputs[i].data;
  }
  for (i = 0; i < noutputs; ++i) {
    fst_value value;
    const char* name = NULL;
    if ((status = fst_graph_output(graph, i, &value, &name)) != FST_OK) {
      example_report(program, "fst_graph_output", status);
      goto done;
    }
    if (describe_tensor(graph, value, name, 1, &outputs[i]) != 0) goto done;
    /* All-ones bytes are NaN in every float dtype, so an element the kernels skip fails. */
    memset(outputs[i].data, 0xFF, outputs[i].bytes);
    output_buffers[i].data = outputs[i].data;
    output_buffers[i].bytes = outputs[i].bytes;
    reference_outputs[i] = outputs[i].expected;
  }

  status = fst_graph_evaluate_reference(graph, reference_inputs, ninputs, reference_outputs, noutputs);
  if (status == FST_ERROR_UNSUPPORTED) {
    fprintf(stderr,
            "%s: %s: the graph has opaque operations, which its caller runs between the fused kernels; "
            "%s cannot run them or check the plan (--no-run prints it without running): %s\n",
            program, options.shown_path, program, fst_last_error_message());
    goto done;
  }
  if (status != FST_OK) {
    example_report(program, "fst_graph_evaluate_reference", status);
    goto done;
  }
  if (example_run_fusion(program, fusion, backend, input_buffers, ninputs, output_buffers, noutputs) != 0) {
    goto done;
  }

  if ((status = fst_graph_print(graph, &printed)) != FST_OK) {
    example_report(program, "fst_graph_print", status);
    goto done;
  }
  if (example_low_precision_outputs(printed, noutputs, low_precision) != 0) {
    fprintf(stderr,
            "%s: note: the printed graph did not read as expected; every float output is judged "
            "with the f16/bf16 tolerance\n",
            program);
  }
  printf("inputs: seed %llu\n", options.seed);
  for (i = 0; i < noutputs; ++i) passed += (size_t)judge_output(i, &outputs[i], low_precision[i]);
  if (passed != noutputs) {
    fprintf(stderr, "%s: FAILED: %zu of %zu output(s) differ from the reference evaluator\n", program,
            noutputs - passed, noutputs);
    goto done;
  }
  printf("%s: OK: %zu output(s) match the reference evaluator on the %s backend\n", program, noutputs,
         example_backend_name(backend));
  exit_code = EXAMPLE_EXIT_OK;

done:
  free_tensors(inputs, ninputs);
  free_tensors(outputs, noutputs);
  free(input_buffers);
  free(output_buffers);
  free(reference_inputs);
  free(reference_outputs);
  free(low_precision);
  fst_string_free(plan);
  fst_string_free(printed);
  fst_fusion_destroy(fusion);
  fst_fuse_options_destroy(fuse_options);
  fst_graph_destroy(graph);
  fst_context_destroy(ctx);
  free(text);
  return exit_code;
}
