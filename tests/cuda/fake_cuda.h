/* The control and record interface of the stand-in CUDA driver (libfstitch_fake_cuda.so).
 *
 * The stand-in exports the driver entry points fstitch resolves (cuInit, cuMemAlloc_v2,
 * cuLaunchKernel, ...) and simulates one kind of device in host memory. Tests configure it
 * and read what fstitch asked of it through the fake_cuda_* functions below, resolved with
 * dlsym from the same dlopen handle fstitch loads, so both see one instance.
 *
 * Every function is thread-safe. Records are kept in call order. */
#ifndef FSTITCH_TESTS_CUDA_FAKE_CUDA_H
#define FSTITCH_TESTS_CUDA_FAKE_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FAKE_CUDA_NAME_CAPACITY 128
#define FAKE_CUDA_MAX_RECORDED_PARAMS 32
#define FAKE_CUDA_MAX_ASKED_KERNELS 8

/* One cuLaunchKernel, cuLaunchCooperativeKernel or cuLaunchKernelEx call that the stand-in accepted. */
typedef struct fake_cuda_launch_record {
  void* function;                       /* the handle passed: a CUkernel or a CUfunction */
  char kernel[FAKE_CUDA_NAME_CAPACITY]; /* the kernel's entry-point name */
  unsigned grid[3];
  unsigned block[3];
  unsigned shared_bytes;
  void* stream;
  int cooperative; /* 1 for cuLaunchCooperativeKernel */
  void* context;   /* the calling thread's current context at the call */
  int param_count; /* values read: fake_cuda_set_param_count() for this kernel, else 0 */
  void* params[FAKE_CUDA_MAX_RECORDED_PARAMS]; /* *(void**)kernelParams[i] */
  size_t call_index;                           /* position of the call in fake_cuda_call_log() */
  unsigned cluster[3]; /* cuLaunchKernelEx's cluster dimension; 1, 1, 1 for the other launches */
} fake_cuda_launch_record;

/* One device allocation (cuMemAlloc_v2 or cuMemAllocAsync) and its release. */
typedef struct fake_cuda_allocation_record {
  unsigned long long address;
  size_t bytes;
  int async;    /* 1 for cuMemAllocAsync */
  void* stream; /* the stream of cuMemAllocAsync */
  int freed;
  int free_async; /* 1 when released by cuMemFreeAsync */
  void* free_stream;
  size_t call_index; /* of the allocation */
  size_t free_call_index;
} fake_cuda_allocation_record;

/* One cuMemsetD8Async call that the stand-in accepted. */
typedef struct fake_cuda_memset_record {
  unsigned long long address;
  unsigned char value;
  size_t bytes;
  void* stream;
  size_t call_index; /* position of the call in fake_cuda_call_log() */
} fake_cuda_memset_record;

/* One cuLibraryLoadData call that the stand-in accepted. */
typedef struct fake_cuda_library_record {
  void* handle;
  int is_cubin;                             /* 1: an ELF image, 0: PTX text */
  char ptx_target[FAKE_CUDA_NAME_CAPACITY]; /* the PTX ".target" (e.g. "sm_80"); empty for a CUBIN */
  int unloaded;
  int asked_count; /* cuLibraryGetKernel calls, successful or not */
  char asked[FAKE_CUDA_MAX_ASKED_KERNELS][FAKE_CUDA_NAME_CAPACITY];
} fake_cuda_library_record;

/* ---- Configuration (fake_cuda_reset restores every default) ---- */

/* Defaults, and clears every record and injection. Keeps what outlives a reset in a real
 * driver: whether cuInit succeeded, live contexts, libraries and allocations, primary-context
 * retain counts. Clears the calling thread's context stack. */
void fake_cuda_reset(void);
/* What cuInit returns (default 0). */
void fake_cuda_set_init_result(int result);
/* cuDriverGetVersion (default 13000). */
void fake_cuda_set_driver_version(int version);
/* cuDeviceGetCount (default 1). */
void fake_cuda_set_device_count(int count);
/* Compute capability of every device (default 9.0). */
void fake_cuda_set_compute_capability(int major, int minor);
/* Multiprocessors per device (default 132). */
void fake_cuda_set_multiprocessors(int count);
/* CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK (default 1024); larger blocks fail to launch. */
void fake_cuda_set_max_threads_per_block(int threads);
/* CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH (default 1). */
void fake_cuda_set_cooperative_launch(int supported);
/* CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED (default 1); without it cuMemAllocAsync fails 801. */
void fake_cuda_set_memory_pools(int supported);
/* What cuOccupancyMaxActiveBlocksPerMultiprocessor reports (default 4) for kernels without
 * a register count of their own. */
void fake_cuda_set_max_active_blocks(int blocks_per_multiprocessor);
/* Gives every kernel named `kernel` `registers` registers per thread (0 removes it): its
 * CU_FUNC_ATTRIBUTE_NUM_REGS, and cuOccupancyMaxActiveBlocksPerMultiprocessor then answers as
 * an sm_90 GPU does for that kernel: the least of 2048 threads, 65536 registers (allocated per
 * warp in units of 256), 233472 bytes of shared memory (1 KiB reserved per block) and 32
 * blocks per multiprocessor. Cooperative launches are checked against the same number. */
void fake_cuda_set_kernel_registers(const char* kernel, int registers);
/* When nonzero, cuLibraryLoadData returns 209 (CUDA_ERROR_NO_BINARY_FOR_GPU) for ELF images. */
void fake_cuda_set_reject_cubin(int reject);
/* How many kernel parameters of `kernel` launch records read (default 0). */
void fake_cuda_set_param_count(const char* kernel, int count);
/* Makes `entry_point` (the exported name, e.g. "cuMemAlloc_v2") return `result` for its next
 * `times` calls, or for every call when `times` is negative; 0 removes the injection. An
 * injected call has no other effect but is logged. */
void fake_cuda_inject(const char* entry_point, int result, int times);
/* As fake_cuda_inject, after `successes` more calls that behave normally. */
void fake_cuda_inject_after(const char* entry_point, int successes, int result, int times);

/* ---- Contexts ---- */

/* A new (non-primary) context of `device`, as cuCtxCreate would make; not made current. */
void* fake_cuda_new_context(int device);
/* The device's primary context handle, whether retained or not. */
void* fake_cuda_primary_context(int device);
/* How often the device's primary context is retained now. */
int fake_cuda_primary_retain_count(int device);
/* When `function` is a CUfunction the stand-in handed out: its context and kernel name
 * (FAKE_CUDA_NAME_CAPACITY bytes; either pointer may be NULL), and 1; else 0. */
int fake_cuda_describe_function(void* function, void** out_context, char* out_kernel);
/* The calling thread's current context (NULL when none) and its context stack depth. */
void* fake_cuda_current_context(void);
int fake_cuda_context_stack_depth(void);

/* ---- Records ---- */

/* Clears every record; keeps configuration and state. */
void fake_cuda_clear_records(void);
/* Copies up to `capacity` entry-point names, in call order, into `names` (NULL: count only);
 * returns the number of calls logged. The names stay valid while the library is loaded. */
size_t fake_cuda_call_log(const char** names, size_t capacity);
/* How many calls `entry_point` received (including failed and injected ones). */
size_t fake_cuda_call_count(const char* entry_point);

size_t fake_cuda_launch_count(void);
/* Copies launch `index`; returns 0 when there is no such launch. */
int fake_cuda_launch(size_t index, fake_cuda_launch_record* out);

size_t fake_cuda_allocation_count(void);
int fake_cuda_allocation(size_t index, fake_cuda_allocation_record* out);
/* Allocations not freed yet. */
size_t fake_cuda_live_allocation_count(void);

size_t fake_cuda_memset_count(void);
int fake_cuda_memset(size_t index, fake_cuda_memset_record* out);

size_t fake_cuda_library_count(void);
int fake_cuda_library(size_t index, fake_cuda_library_record* out);

#ifdef __cplusplus
}
#endif

#endif /* FSTITCH_TESTS_CUDA_FAKE_CUDA_H */
