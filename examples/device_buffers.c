#include "device_buffers.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*init_fn)(unsigned);
typedef int (*device_get_fn)(int*, int);
typedef int (*retain_fn)(void**, int);
typedef int (*set_current_fn)(void*);
typedef int (*alloc_fn)(unsigned long long*, size_t);
typedef int (*free_fn)(unsigned long long);
typedef int (*htod_fn)(unsigned long long, const void*, size_t);
typedef int (*dtoh_fn)(void*, unsigned long long, size_t);
typedef int (*sync_fn)(void);

static alloc_fn mem_alloc;
static free_fn mem_free;
static htod_fn copy_htod;
static dtoh_fn copy_dtoh;
static sync_fn ctx_synchronize;

/* dlsym returns an object pointer; POSIX guarantees it converts to a function pointer. */
#define LOAD(handle, type, name) ((type)(uintptr_t)dlsym(handle, name))

int device_buffers_open(char* why, size_t why_size) {
  /* The driver fstitch itself loads: FSTITCH_CUDA_DRIVER when set. */
  const char* path = getenv("FSTITCH_CUDA_DRIVER");
  void* driver = dlopen(path != NULL && path[0] != '\0' ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  init_fn init;
  device_get_fn device_get;
  retain_fn retain;
  set_current_fn set_current;
  int device = 0;
  void* context = NULL;
  if (driver == NULL) {
    snprintf(why, why_size, "%s", dlerror());
    return -1;
  }
  init = LOAD(driver, init_fn, "cuInit");
  device_get = LOAD(driver, device_get_fn, "cuDeviceGet");
  retain = LOAD(driver, retain_fn, "cuDevicePrimaryCtxRetain");
  set_current = LOAD(driver, set_current_fn, "cuCtxSetCurrent");
  mem_alloc = LOAD(driver, alloc_fn, "cuMemAlloc_v2");
  mem_free = LOAD(driver, free_fn, "cuMemFree_v2");
  copy_htod = LOAD(driver, htod_fn, "cuMemcpyHtoD_v2");
  copy_dtoh = LOAD(driver, dtoh_fn, "cuMemcpyDtoH_v2");
  ctx_synchronize = LOAD(driver, sync_fn, "cuCtxSynchronize");
  if (!init || !device_get || !retain || !set_current || !mem_alloc || !mem_free || !copy_htod ||
      !copy_dtoh || !ctx_synchronize) {
    snprintf(why, why_size, "the CUDA driver lacks an entry point the example uses");
    return -1;
  }
  if (init(0) != 0 || device_get(&device, 0) != 0 || retain(&context, device) != 0 ||
      set_current(context) != 0) {
    snprintf(why, why_size, "the CUDA driver could not open device 0");
    return -1;
  }
  return 0;
}

void* device_copy_in(const void* host, size_t bytes) {
  unsigned long long address = 0;
  if (mem_alloc(&address, bytes) != 0) return NULL;
  if (copy_htod(address, host, bytes) != 0) {
    mem_free(address);
    return NULL;
  }
  return (void*)(uintptr_t)address;
}

int device_copy_out(void* host, const void* device, size_t bytes) {
  if (ctx_synchronize() != 0) return -1;
  return copy_dtoh(host, (unsigned long long)(uintptr_t)device, bytes) == 0 ? 0 : -1;
}

void device_free(void* device) {
  if (device != NULL) mem_free((unsigned long long)(uintptr_t)device);
}
