#include "example_cli.h"

#include <stdio.h>
#include <string.h>

#include "example_util.h"

static void print_usage(FILE* stream, const char* program, int64_t default_rows, int64_t default_cols) {
  fprintf(stream,
          "usage: %s [--rows N] [--cols N] [--backend auto|cuda|host]\n"
          "  --rows N     rows of x (default %lld)\n"
          "  --cols N     columns of x, the normalized axis (default %lld)\n"
          "  --backend B  where the fused kernels run: auto (the GPU when there is one), cuda or host\n"
          "               (default: auto, or the backend named by FSTITCH_BACKEND)\n"
          "Exit status: 0 when the fused result matches, 1 when a step fails, 2 for a bad command line.\n",
          program, (long long)default_rows, (long long)default_cols);
}

static example_cli_result usage_error(const char* program, int64_t default_rows, int64_t default_cols) {
  print_usage(stderr, program, default_rows, default_cols);
  return EXAMPLE_CLI_ERROR;
}

example_cli_result example_cli_parse(const char* program, int argc, char** argv, int64_t default_rows,
                                     int64_t default_cols, example_cli* out) {
  int i;
  out->rows = default_rows;
  out->cols = default_cols;
  out->default_backend = 1;
  out->backend = FST_BACKEND_AUTO;
  for (i = 1; i < argc; ++i) {
    const char* option = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    long long number = 0;
    if (strcmp(option, "--help") == 0 || strcmp(option, "-h") == 0) {
      print_usage(stdout, program, default_rows, default_cols);
      return EXAMPLE_CLI_HELP;
    }
    if (strcmp(option, "--rows") != 0 && strcmp(option, "--cols") != 0 && strcmp(option, "--backend") != 0) {
      fprintf(stderr, "%s: unknown option '%s'\n", program, option);
      return usage_error(program, default_rows, default_cols);
    }
    if (value == NULL) {
      fprintf(stderr, "%s: %s needs a value\n", program, option);
      return usage_error(program, default_rows, default_cols);
    }
    ++i;
    if (strcmp(option, "--backend") == 0) {
      if (example_parse_backend(value, &out->backend) != 0) {
        fprintf(stderr, "%s: --backend must be auto, cuda or host, not '%s'\n", program, value);
        return usage_error(program, default_rows, default_cols);
      }
      out->default_backend = 0;
      continue;
    }
    if (example_parse_int(value, 1, EXAMPLE_CLI_MAX_DIM, &number) != 0) {
      fprintf(stderr, "%s: %s must be an integer from 1 to %lld, not '%s'\n", program, option,
              (long long)EXAMPLE_CLI_MAX_DIM, value);
      return usage_error(program, default_rows, default_cols);
    }
    if (strcmp(option, "--rows") == 0) {
      out->rows = number;
    } else {
      out->cols = number;
    }
  }
  if (out->rows > EXAMPLE_CLI_MAX_ELEMENTS / out->cols) {
    fprintf(stderr, "%s: %lld x %lld elements are more than this example allows (%lld)\n", program,
            (long long)out->rows, (long long)out->cols, (long long)EXAMPLE_CLI_MAX_ELEMENTS);
    return usage_error(program, default_rows, default_cols);
  }
  return EXAMPLE_CLI_RUN;
}
