/*
 * The command line of the layernorm and softmax examples:
 *   --rows N --cols N --backend auto|cuda|host --help
 */
#ifndef FSTITCH_EXAMPLES_EXAMPLE_CLI_H
#define FSTITCH_EXAMPLES_EXAMPLE_CLI_H

#include <fstitch.h>
#include <stdint.h>

/* Largest accepted --rows or --cols, and rows * cols. */
#define EXAMPLE_CLI_MAX_DIM (INT64_C(1) << 24)
#define EXAMPLE_CLI_MAX_ELEMENTS (INT64_C(1) << 26)

typedef struct example_cli {
  int64_t rows;
  int64_t cols;
  int default_backend; /* nonzero when --backend was not given */
  fst_backend backend;
} example_cli;

typedef enum example_cli_result {
  EXAMPLE_CLI_RUN = 0,  /* the options are in *out */
  EXAMPLE_CLI_HELP = 1, /* --help: the usage was printed to stdout */
  EXAMPLE_CLI_ERROR = 2 /* a bad argument: the reason and the usage went to stderr */
} example_cli_result;

example_cli_result example_cli_parse(const char* program, int argc, char** argv, int64_t default_rows,
                                     int64_t default_cols, example_cli* out);

#endif
