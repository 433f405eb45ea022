#include "fusion_runner.h"

#include <stdio.h>
#include <stdlib.h>

#include "device_buffers.h"
#include "example_util.h"

static int run_on_host(const char* program, const fst_fusion* fusion, const example_buffer* inputs,
                       size_t ninputs, const example_buffer* outputs, size_t noutputs) {
  const void** input_pointers = malloc(sizeof(void*) * (ninputs > 0 ? ninputs : 1));
  void** output_pointers = malloc(sizeof(void*) * (noutputs > 0 ? noutputs : 1));
  fst_status status = FST_ERROR_OUT_OF_MEMORY;
  size_t i;
  if (input_pointers != NULL && output_pointers != NULL) {
    for (i = 0; i < ninputs; ++i) input_pointers[i] = inputs[i].data;
    for (i = 0; i < noutputs; ++i) output_pointers[i] = outputs[i].data;
    status = fst_fusion_run(fusion, input_pointers, ninputs, output_pointers, noutputs, NULL, NULL);
    if (status != FST_OK) example_report(program, "fst_fusion_run on the host backend", status);
  } else {
    fprintf(stderr, "%s: out of memory\n", program);
  }
  free(input_pointers);
  free(output_pointers);
  return status == FST_OK ? 0 : -1;
}

static int run_on_device(const char* program, const fst_fusion* fusion, const example_buffer* inputs,
                         size_t ninputs, const example_buffer* outputs, size_t noutputs) {
  static int driver_open = 0;
  const size_t count = ninputs + noutputs;
  void** device = calloc(count > 0 ? count : 1, sizeof(void*));
  int result = -1;
  size_t i;
  char why[256];
  if (device == NULL) {
    fprintf(stderr, "%s: out of memory\n", program);
    return -1;
  }
  if (!driver_open) {
    if (device_buffers_open(why, sizeof why) != 0) {
      fprintf(stderr, "%s: cannot allocate device buffers: %s\n", program, why);
      goto done;
    }
    driver_open = 1;
  }
  for (i = 0; i < count; ++i) {
    const example_buffer* buffer = i < ninputs ? &inputs[i] : &outputs[i - ninputs];
    device[i] = device_copy_in(buffer->data, buffer->bytes);
    if (device[i] == NULL) {
      fprintf(stderr, "%s: cannot allocate and fill %zu bytes of device memory for %s %zu\n", program,
              buffer->bytes, i < ninputs ? "input" : "output", i < ninputs ? i : i - ninputs);
      goto done;
    }
  }
  {
    fst_status status =
        fst_fusion_run(fusion, (const void* const*)device, ninputs, device + ninputs, noutputs, NULL, NULL);
    if (status != FST_OK) {
      example_report(program, "fst_fusion_run on the cuda backend", status);
      goto done;
    }
  }
  for (i = 0; i < noutputs; ++i) {
    if (device_copy_out(outputs[i].data, device[ninputs + i], outputs[i].bytes) != 0) {
      fprintf(stderr, "%s: the kernels failed on the device (copying output %zu back failed)\n", program, i);
      goto done;
    }
  }
  result = 0;
done:
  for (i = 0; i < count; ++i) device_free(device[i]);
  free(device);
  return result;
}

int example_run_fusion(const char* program, const fst_fusion* fusion, fst_backend backend,
                       const example_buffer* inputs, size_t ninputs, const example_buffer* outputs,
                       size_t noutputs) {
  if (backend == FST_BACKEND_CUDA) return run_on_device(program, fusion, inputs, ninputs, outputs, noutputs);
  return run_on_host(program, fusion, inputs, ninputs, outputs, noutputs);
}
