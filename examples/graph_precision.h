/*
 * Which outputs of a graph are computed through f16 or bf16 values. Such an output may
 * differ from the reference by a rounding of one f16/bf16 unit somewhere on its path, even
 * when the output itself is f32, so it is judged with the f16/bf16 tolerance. The public
 * API does not walk a graph's operands, so this reads the graph's printed text
 * (docs/text-format.md), where each value line names its operands and its type.
 */
#ifndef FSTITCH_EXAMPLES_GRAPH_PRECISION_H
#define FSTITCH_EXAMPLES_GRAPH_PRECISION_H

#include <stddef.h>

/* Sets flags[i] to 1 when the i-th output depends on a computed (neither input nor constant)
 * f16 or bf16 value, else 0. `printed` is fst_graph_print()'s text of a graph with
 * `noutputs` outputs. Returns 0, or -1 when the text does not read as expected (the flags
 * are then all 1, the safe side). */
int example_low_precision_outputs(const char* printed, size_t noutputs, unsigned char* flags);

#endif
