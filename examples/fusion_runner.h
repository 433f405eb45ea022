/*
 * Runs a fusion on its context's backend with host arrays: on the host backend the arrays
 * are used as they are; on the CUDA backend they are copied to device buffers
 * (device_buffers.h), the kernels are queued on the default stream, and the outputs are
 * copied back once the device is done. A framework would pass its own device pointers.
 */
#ifndef FSTITCH_EXAMPLES_FUSION_RUNNER_H
#define FSTITCH_EXAMPLES_FUSION_RUNNER_H

#include <fstitch.h>
#include <stddef.h>

/* The array and its size in bytes, one per graph input or output. */
typedef struct example_buffer {
  void* data;
  size_t bytes;
} example_buffer;

/* Runs `fusion` on `backend` (the context's active backend: cuda or host). Output arrays are
 * uploaded too, so that elements the kernels do not write keep what the caller put there.
 * Returns 0, or -1 after printing "<program>: ..." with the reason to stderr. */
int example_run_fusion(const char* program, const fst_fusion* fusion, fst_backend backend,
                       const example_buffer* inputs, size_t ninputs, const example_buffer* outputs,
                       size_t noutputs);

#endif
