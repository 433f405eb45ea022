/*
 * Device buffers for the examples when fstitch runs on the CUDA backend: the CUDA driver is
 * loaded with dlopen (as fstitch loads it), so the examples build and run on machines
 * without CUDA, where the context runs on the host backend and host arrays are used as
 * they are. A framework would use its own allocator instead.
 */
#ifndef FSTITCH_EXAMPLES_DEVICE_BUFFERS_H
#define FSTITCH_EXAMPLES_DEVICE_BUFFERS_H

#include <stddef.h>

/* Loads the driver and makes device 0's primary context current on this thread.
 * Returns 0 on success, else -1 with a message in `why` (of `why_size` bytes). */
int device_buffers_open(char* why, size_t why_size);

/* A device copy of `bytes` bytes at `host`; NULL on failure. */
void* device_copy_in(const void* host, size_t bytes);

/* Waits for the device, then copies `bytes` bytes from `device` to `host`. 0 on success. */
int device_copy_out(void* host, const void* device, size_t bytes);

/* Frees a buffer from device_copy_in(). Accepts NULL. */
void device_free(void* device);

#endif
