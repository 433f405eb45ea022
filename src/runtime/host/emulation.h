/* Host emulation of the CUDA C subset that generated kernels use (docs/generated-code.md).
 *
 * The host backend force-includes this header (-include) when the host C++ compiler builds
 * a generated file into a shared object. The library carries the text of this file and
 * writes it next to the source it compiles. The first part, the ABI between the compiled
 * object and the runtime, is also read by the runtime itself (with FST_HOST_ABI_ONLY).
 *
 * Threads of a block run as fibers; a fiber switches only inside the runtime calls made
 * by __syncthreads, warp operations, and __nanosleep. Each fiber's thread state is found
 * through a thread_local pointer, refreshed after every such call. */
#ifndef FSTITCH_HOST_EMULATION_ABI_H
#define FSTITCH_HOST_EMULATION_ABI_H

#define FST_HOST_ABI_VERSION 3u

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fst_host_uint3 {
  unsigned int x, y, z;
} fst_host_uint3;

/* What generated code sees of the thread it runs as. */
typedef struct fst_host_thread {
  fst_host_uint3 thread_idx;
  fst_host_uint3 block_idx;
  fst_host_uint3 block_dim;
  fst_host_uint3 grid_dim;
  void* dynamic_shared; /* the block's dynamic shared memory */
  void* runtime;        /* the runtime's fiber; opaque here */
} fst_host_thread;

/* Where a synchronizing call is in the source: its line, and a number unique to the call
   (__COUNTER__), so threads meeting at different calls are told apart. */
typedef struct fst_host_site {
  unsigned int line;
  unsigned int call;
} fst_host_site;

/* Warp operations, as passed to warp_exchange (diagnostics name them). */
enum {
  FST_HOST_WARP_SYNC = 0,
  FST_HOST_WARP_SHFL_IDX = 1,
  FST_HOST_WARP_SHFL_UP = 2,
  FST_HOST_WARP_SHFL_DOWN = 3,
  FST_HOST_WARP_SHFL_XOR = 4
};

/* The runtime's services, handed to the object by fst_host_bind. */
typedef struct fst_host_api {
  unsigned int abi_version;
  /* The thread a fiber runs as; valid when a kernel entry starts. */
  fst_host_thread* (*current)(void);
  void (*syncthreads)(fst_host_thread* self, fst_host_site site);
  void (*nanosleep)(fst_host_thread* self, unsigned int nanoseconds);
  /* Every lane of `mask` offers `value` at the same call and receives the value offered by
     `source_lane` (all ones when that lane is not in `mask`). */
  unsigned long long (*warp_exchange)(fst_host_thread* self, fst_host_site site, int op, unsigned int mask,
                                      unsigned long long value, unsigned int source_lane);
  /* Next static shared array of the block (the same address in every thread). */
  void* (*shared_alloc)(fst_host_thread* self, unsigned long long bytes, unsigned long long alignment);
  /* Ends the launch with an error naming `what`. Does not return. */
  void (*trap)(fst_host_thread* self, const char* what);
  /* Every thread of every block of the thread's cluster meets here (barrier.cluster with
     release and acquire semantics). */
  void (*cluster_sync)(fst_host_thread* self, fst_host_site site);
  /* The address in block `rank` of the cluster of `shared`, an address in this block's
     shared memory (mapa). */
  void* (*cluster_map_shared)(fst_host_thread* self, void* shared, unsigned int rank);
} fst_host_api;

#ifdef __cplusplus
}
#endif

#endif /* FSTITCH_HOST_EMULATION_ABI_H */

#if !defined(FST_HOST_ABI_ONLY) && !defined(FSTITCH_HOST_EMULATION)
#define FSTITCH_HOST_EMULATION 1

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

/* ---- Qualifiers ------------------------------------------------------------------------ */
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
/* Shared memory is declared with FST_SHARED / FST_DYNAMIC_SHARED only. */
#define __shared__ __shared___is_not_supported_declare_shared_memory_with_FST_SHARED
#define FST_HOST_EXPORT __attribute__((visibility("default")))

/* One of each per object: inline variables, so the translation units of a split module
   (linked into one object) share them, as the inline functions below that use them must. */
namespace fst_host_detail {
inline const fst_host_api* api = nullptr; /* read and written only atomically: see fst_host_bind */
inline const fst_host_api* bound_api() {
  return __atomic_load_n(&api, __ATOMIC_ACQUIRE);
}
inline thread_local fst_host_thread* self = nullptr;
}  // namespace fst_host_detail

/* ---- Indices --------------------------------------------------------------------------- */
typedef fst_host_uint3 uint3;
struct dim3 {
  unsigned int x, y, z;
  dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};
static constexpr int warpSize = 32;

#define threadIdx (static_cast<const uint3&>(fst_host_detail::self->thread_idx))
#define blockIdx (static_cast<const uint3&>(fst_host_detail::self->block_idx))
#define blockDim (static_cast<const uint3&>(fst_host_detail::self->block_dim))
#define gridDim (static_cast<const uint3&>(fst_host_detail::self->grid_dim))

/* ---- Synchronization ------------------------------------------------------------------- */
namespace fst_host_detail {
/* A synchronizing runtime service called at its site; the thread pointer is refreshed after
   it, as after every call that may switch fibers. */
inline void meet_at(void (*fst_host_api::*service)(fst_host_thread*, fst_host_site), unsigned int line,
                    unsigned int call) {
  fst_host_thread* s = self;
  (bound_api()->*service)(s, fst_host_site{line, call});
  self = s;
}
}  // namespace fst_host_detail
/* Synchronizing calls are macros so each carries its call site. */
#define __syncthreads() fst_host_detail::meet_at(&fst_host_api::syncthreads, __LINE__, __COUNTER__)
inline void __nanosleep(unsigned int ns) {
  fst_host_thread* s = fst_host_detail::self;
  fst_host_detail::bound_api()->nanosleep(s, ns);
  fst_host_detail::self = s;
}
/* Thread-block clusters along x: the blocks of a cluster are resident together. */
#define fst_host_cluster_sync() fst_host_detail::meet_at(&fst_host_api::cluster_sync, __LINE__, __COUNTER__)
template <class T>
inline T* fst_host_cluster_map(T* shared, unsigned int rank) {
  return static_cast<T*>(fst_host_detail::bound_api()->cluster_map_shared(
      fst_host_detail::self, const_cast<void*>(static_cast<const void*>(shared)), rank));
}
inline void __threadfence() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
inline void __threadfence_system() {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
/* The threads of a block share one OS thread: ordering the compiler is enough. */
inline void __threadfence_block() {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}
inline void __trap() {
  fst_host_detail::bound_api()->trap(fst_host_detail::self, "__trap()");
  __builtin_unreachable();
}

/* ---- Warp operations (PTX shfl.sync rules) --------------------------------------------- */
namespace fst_host_detail {
inline unsigned int lane_id() {
  const fst_host_thread* s = self;
  const unsigned int linear =
      s->thread_idx.x + s->block_dim.x * (s->thread_idx.y + s->block_dim.y * s->thread_idx.z);
  return linear & 31u;
}

/* The source lane of shfl.sync with c = ((32 - width) << 8) | (up ? 0 : 31), as CUDA
   passes it; a source outside the lane's range means the lane reads its own value. */
inline unsigned int shuffle_source(int op, unsigned int lane, unsigned int b, int width) {
  const int segmask = (32 - width) & 31;
  const int cval = op == FST_HOST_WARP_SHFL_UP ? 0 : 31;
  const int bval = static_cast<int>(b & 31u);
  const int ilane = static_cast<int>(lane);
  const int max_lane = (ilane & segmask) | (cval & ~segmask);
  const int min_lane = ilane & segmask;
  int j = ilane;
  bool in_range = true;
  switch (op) {
    case FST_HOST_WARP_SHFL_UP:
      j = ilane - bval;
      in_range = j >= max_lane;
      break;
    case FST_HOST_WARP_SHFL_DOWN:
      j = ilane + bval;
      in_range = j <= max_lane;
      break;
    case FST_HOST_WARP_SHFL_XOR:
      j = ilane ^ bval;
      in_range = j <= max_lane;
      break;
    default:
      j = min_lane | (bval & ~segmask);
      in_range = j <= max_lane;
      break;
  }
  return in_range ? static_cast<unsigned int>(j) : lane;
}

template <class T>
inline T shuffle(fst_host_site site, int op, unsigned int mask, T var, unsigned int b, int width) {
  static_assert(sizeof(T) <= 8, "shuffled values are at most 64 bits");
  fst_host_thread* s = self;
  unsigned long long bits = 0;
  std::memcpy(&bits, &var, sizeof(T));
  const unsigned int source = shuffle_source(op, lane_id(), b, width);
  bits = bound_api()->warp_exchange(s, site, op, mask, bits, source);
  self = s;
  T result;
  std::memcpy(&result, &bits, sizeof(T));
  return result;
}

/* The warp operations of one call site, with CUDA's signatures and default arguments. */
struct WarpCall {
  fst_host_site site;
  void syncwarp(unsigned int mask = 0xffffffffu) const {
    fst_host_thread* s = self;
    bound_api()->warp_exchange(s, site, FST_HOST_WARP_SYNC, mask, 0, lane_id());
    self = s;
  }
#define FST_HOST_SHUFFLES(T)                                                                              \
  T shfl(unsigned int mask, T var, int src_lane, int width = warpSize) const {                            \
    return shuffle(site, FST_HOST_WARP_SHFL_IDX, mask, var, static_cast<unsigned int>(src_lane), width);  \
  }                                                                                                       \
  T shfl_up(unsigned int mask, T var, unsigned int delta, int width = warpSize) const {                   \
    return shuffle(site, FST_HOST_WARP_SHFL_UP, mask, var, delta, width);                                 \
  }                                                                                                       \
  T shfl_down(unsigned int mask, T var, unsigned int delta, int width = warpSize) const {                 \
    return shuffle(site, FST_HOST_WARP_SHFL_DOWN, mask, var, delta, width);                               \
  }                                                                                                       \
  T shfl_xor(unsigned int mask, T var, int lane_mask, int width = warpSize) const {                       \
    return shuffle(site, FST_HOST_WARP_SHFL_XOR, mask, var, static_cast<unsigned int>(lane_mask), width); \
  }
  FST_HOST_SHUFFLES(int)
  FST_HOST_SHUFFLES(unsigned int)
  FST_HOST_SHUFFLES(long)
  FST_HOST_SHUFFLES(unsigned long)
  FST_HOST_SHUFFLES(long long)
  FST_HOST_SHUFFLES(unsigned long long)
  FST_HOST_SHUFFLES(float)
  FST_HOST_SHUFFLES(double)
#undef FST_HOST_SHUFFLES
};
}  // namespace fst_host_detail

#define FST_HOST_WARP_CALL (fst_host_detail::WarpCall{fst_host_site{__LINE__, __COUNTER__}})
#define __syncwarp(...) FST_HOST_WARP_CALL.syncwarp(__VA_ARGS__)
#define __shfl_sync(...) FST_HOST_WARP_CALL.shfl(__VA_ARGS__)
#define __shfl_up_sync(...) FST_HOST_WARP_CALL.shfl_up(__VA_ARGS__)
#define __shfl_down_sync(...) FST_HOST_WARP_CALL.shfl_down(__VA_ARGS__)
#define __shfl_xor_sync(...) FST_HOST_WARP_CALL.shfl_xor(__VA_ARGS__)

/* ---- Atomics (blocks run on several OS threads) ---------------------------------------- */
/* CUDA's atomics are relaxed, and so are these. ThreadSanitizer does not model fences, so in
   kernels built for it they are sequentially consistent instead: a grid barrier (a fence, then
   an atomic counter) then orders the blocks for the sanitizer as the fence does on a GPU. The
   price: under ThreadSanitizer a missing __threadfence goes unnoticed. */
#if defined(__SANITIZE_THREAD__)
#define FST_HOST_ATOMIC_ORDER __ATOMIC_SEQ_CST
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FST_HOST_ATOMIC_ORDER __ATOMIC_SEQ_CST
#endif
#endif
#ifndef FST_HOST_ATOMIC_ORDER
#define FST_HOST_ATOMIC_ORDER __ATOMIC_RELAXED
#endif
namespace fst_host_detail {
typedef unsigned int __attribute__((may_alias)) alias_u32;
typedef unsigned long long __attribute__((may_alias)) alias_u64;

template <class F>
inline float update_float(float* address, F next) {
  alias_u32* bits = reinterpret_cast<alias_u32*>(address);
  unsigned int old_bits = __atomic_load_n(bits, FST_HOST_ATOMIC_ORDER);
  for (;;) {
    float old_value;
    std::memcpy(&old_value, &old_bits, sizeof old_value);
    const float new_value = next(old_value);
    unsigned int new_bits;
    std::memcpy(&new_bits, &new_value, sizeof new_bits);
    if (__atomic_compare_exchange_n(bits, &old_bits, new_bits, true, FST_HOST_ATOMIC_ORDER,
                                    FST_HOST_ATOMIC_ORDER))
      return old_value;
  }
}

template <class F>
inline double update_double(double* address, F next) {
  alias_u64* bits = reinterpret_cast<alias_u64*>(address);
  unsigned long long old_bits = __atomic_load_n(bits, FST_HOST_ATOMIC_ORDER);
  for (;;) {
    double old_value;
    std::memcpy(&old_value, &old_bits, sizeof old_value);
    const double new_value = next(old_value);
    unsigned long long new_bits;
    std::memcpy(&new_bits, &new_value, sizeof new_bits);
    if (__atomic_compare_exchange_n(bits, &old_bits, new_bits, true, FST_HOST_ATOMIC_ORDER,
                                    FST_HOST_ATOMIC_ORDER))
      return old_value;
  }
}

template <class T, class F>
inline T update_integer(T* address, F next) {
  T old_value = __atomic_load_n(address, FST_HOST_ATOMIC_ORDER);
  while (!__atomic_compare_exchange_n(address, &old_value, next(old_value), true, FST_HOST_ATOMIC_ORDER,
                                      FST_HOST_ATOMIC_ORDER)) {
  }
  return old_value;
}
}  // namespace fst_host_detail

inline int atomicAdd(int* a, int v) {
  return __atomic_fetch_add(a, v, FST_HOST_ATOMIC_ORDER);
}
inline unsigned int atomicAdd(unsigned int* a, unsigned int v) {
  return __atomic_fetch_add(a, v, FST_HOST_ATOMIC_ORDER);
}
inline unsigned long long atomicAdd(unsigned long long* a, unsigned long long v) {
  return __atomic_fetch_add(a, v, FST_HOST_ATOMIC_ORDER);
}
inline float atomicAdd(float* a, float v) {
  return fst_host_detail::update_float(a, [v](float old) { return old + v; });
}
inline double atomicAdd(double* a, double v) {
  return fst_host_detail::update_double(a, [v](double old) { return old + v; });
}
inline int atomicSub(int* a, int v) {
  return __atomic_fetch_sub(a, v, FST_HOST_ATOMIC_ORDER);
}
inline unsigned int atomicSub(unsigned int* a, unsigned int v) {
  return __atomic_fetch_sub(a, v, FST_HOST_ATOMIC_ORDER);
}
inline int atomicCAS(int* a, int compare, int value) {
  __atomic_compare_exchange_n(a, &compare, value, false, FST_HOST_ATOMIC_ORDER, FST_HOST_ATOMIC_ORDER);
  return compare;
}
inline unsigned int atomicCAS(unsigned int* a, unsigned int compare, unsigned int value) {
  __atomic_compare_exchange_n(a, &compare, value, false, FST_HOST_ATOMIC_ORDER, FST_HOST_ATOMIC_ORDER);
  return compare;
}
inline unsigned long long atomicCAS(unsigned long long* a, unsigned long long compare,
                                    unsigned long long value) {
  __atomic_compare_exchange_n(a, &compare, value, false, FST_HOST_ATOMIC_ORDER, FST_HOST_ATOMIC_ORDER);
  return compare;
}
inline int atomicExch(int* a, int v) {
  return __atomic_exchange_n(a, v, FST_HOST_ATOMIC_ORDER);
}
inline unsigned int atomicExch(unsigned int* a, unsigned int v) {
  return __atomic_exchange_n(a, v, FST_HOST_ATOMIC_ORDER);
}
inline float atomicExch(float* a, float v) {
  return fst_host_detail::update_float(a, [v](float) { return v; });
}
inline int atomicMax(int* a, int v) {
  return fst_host_detail::update_integer(a, [v](int old) { return old > v ? old : v; });
}
inline unsigned int atomicMax(unsigned int* a, unsigned int v) {
  return fst_host_detail::update_integer(a, [v](unsigned int old) { return old > v ? old : v; });
}
inline int atomicMin(int* a, int v) {
  return fst_host_detail::update_integer(a, [v](int old) { return old < v ? old : v; });
}
inline unsigned int atomicMin(unsigned int* a, unsigned int v) {
  return fst_host_detail::update_integer(a, [v](unsigned int old) { return old < v ? old : v; });
}

/* ---- Vector types (CUDA member names and alignment) ------------------------------------ */
struct __align__(8) float2 {
  float x, y;
};
struct __align__(16) float4 {
  float x, y, z, w;
};
struct __align__(8) int2 {
  int x, y;
};
struct __align__(16) int4 {
  int x, y, z, w;
};
struct __align__(8) uint2 {
  unsigned int x, y;
};
struct __align__(16) uint4 {
  unsigned int x, y, z, w;
};
struct __align__(16) double2 {
  double x, y;
};
struct __align__(4) ushort2 {
  unsigned short x, y;
};
struct __align__(8) ushort4 {
  unsigned short x, y, z, w;
};
struct __align__(4) uchar4 {
  unsigned char x, y, z, w;
};
struct __align__(4) char4 {
  signed char x, y, z, w;
};
struct __align__(16) longlong2 {
  long long x, y;
};
static_assert(sizeof(float4) == 16 && alignof(float4) == 16, "float4 layout");
static_assert(sizeof(double2) == 16 && alignof(double2) == 16, "double2 layout");
static_assert(sizeof(ushort4) == 8 && alignof(ushort4) == 8, "ushort4 layout");
static_assert(sizeof(uchar4) == 4 && alignof(uchar4) == 4, "uchar4 layout");

inline float2 make_float2(float x, float y) {
  return float2{x, y};
}
inline float4 make_float4(float x, float y, float z, float w) {
  return float4{x, y, z, w};
}
inline int2 make_int2(int x, int y) {
  return int2{x, y};
}
inline int4 make_int4(int x, int y, int z, int w) {
  return int4{x, y, z, w};
}
inline uint2 make_uint2(unsigned int x, unsigned int y) {
  return uint2{x, y};
}
inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) {
  return uint3{x, y, z};
}
inline uint4 make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w) {
  return uint4{x, y, z, w};
}
inline double2 make_double2(double x, double y) {
  return double2{x, y};
}
inline ushort2 make_ushort2(unsigned short x, unsigned short y) {
  return ushort2{x, y};
}
inline ushort4 make_ushort4(unsigned short x, unsigned short y, unsigned short z, unsigned short w) {
  return ushort4{x, y, z, w};
}
inline uchar4 make_uchar4(unsigned char x, unsigned char y, unsigned char z, unsigned char w) {
  return uchar4{x, y, z, w};
}
inline char4 make_char4(signed char x, signed char y, signed char z, signed char w) {
  return char4{x, y, z, w};
}
inline longlong2 make_longlong2(long long x, long long y) {
  return longlong2{x, y};
}

/* ---- Math: float overloads call the float libm functions (std::exp(float) is expf) ----- */
using std::ceil;
using std::copysign;
using std::cos;
using std::erf;
using std::erfc;
using std::exp;
using std::exp2;
using std::expm1;
using std::fabs;
using std::floor;
using std::fma;
using std::fmax;
using std::fmin;
using std::isfinite;
using std::isinf;
using std::isnan;
using std::log;
using std::log1p;
using std::log2;
using std::pow;
using std::rint;
using std::round;
using std::sin;
using std::sqrt;
using std::tanh;
using std::trunc;
inline float rsqrtf(float x) {
  return 1.0f / sqrtf(x);
}
inline float rsqrt(float x) {
  return 1.0f / sqrtf(x);
}
inline double rsqrt(double x) {
  return 1.0 / std::sqrt(x);
}

inline int min(int a, int b) {
  return a < b ? a : b;
}
inline unsigned int min(unsigned int a, unsigned int b) {
  return a < b ? a : b;
}
inline long long min(long long a, long long b) {
  return a < b ? a : b;
}
inline unsigned long long min(unsigned long long a, unsigned long long b) {
  return a < b ? a : b;
}
inline float min(float a, float b) {
  return fminf(a, b);
}
inline double min(double a, double b) {
  return std::fmin(a, b);
}
inline int max(int a, int b) {
  return a > b ? a : b;
}
inline unsigned int max(unsigned int a, unsigned int b) {
  return a > b ? a : b;
}
inline long long max(long long a, long long b) {
  return a > b ? a : b;
}
inline unsigned long long max(unsigned long long a, unsigned long long b) {
  return a > b ? a : b;
}
inline float max(float a, float b) {
  return fmaxf(a, b);
}
inline double max(double a, double b) {
  return std::fmax(a, b);
}

/* ---- Bit casts and loads --------------------------------------------------------------- */
namespace fst_host_detail {
template <class To, class From>
inline To bit_cast(From from) {
  static_assert(sizeof(To) == sizeof(From), "bit casts keep the size");
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}
}  // namespace fst_host_detail
inline float __int_as_float(int v) {
  return fst_host_detail::bit_cast<float>(v);
}
inline int __float_as_int(float v) {
  return fst_host_detail::bit_cast<int>(v);
}
inline float __uint_as_float(unsigned int v) {
  return fst_host_detail::bit_cast<float>(v);
}
inline unsigned int __float_as_uint(float v) {
  return fst_host_detail::bit_cast<unsigned int>(v);
}
inline double __longlong_as_double(long long v) {
  return fst_host_detail::bit_cast<double>(v);
}
inline long long __double_as_longlong(double v) {
  return fst_host_detail::bit_cast<long long>(v);
}
template <class T>
inline T __ldg(const T* p) {
  return *p;
}

/* ---- Shared memory --------------------------------------------------------------------- */
/* Each thread takes the block's static shared arrays in declaration order from one arena,
   so every thread of the block gets the same addresses. */
#define FST_SHARED(T, name, count)                                                         \
  T* name = static_cast<T*>(fst_host_detail::bound_api()->shared_alloc(                    \
      fst_host_detail::self,                                                               \
      static_cast<unsigned long long>(sizeof(T)) * static_cast<unsigned long long>(count), \
      static_cast<unsigned long long>(alignof(T))))
#define FST_DYNAMIC_SHARED(T, name) T* name = static_cast<T*>(fst_host_detail::self->dynamic_shared)

/* ---- Entry points ---------------------------------------------------------------------- */
namespace fst_host_detail {
template <class... Args, std::size_t... I>
inline void call_kernel(void (*kernel)(Args...), void** params, std::index_sequence<I...>) {
  kernel(*static_cast<typename std::remove_cv<Args>::type*>(params[I])...);
}
template <class... Args>
inline void run_kernel(void (*kernel)(Args...), void** params) {
  self = bound_api()->current();
  call_kernel(kernel, params, std::index_sequence_for<Args...>{});
}
template <class... Args>
constexpr unsigned int param_count(void (*)(Args...)) {
  return static_cast<unsigned int>(sizeof...(Args));
}
}  // namespace fst_host_detail

/* The runtime calls this each time it loads the object; it returns the ABI version it
   accepted, or 0 when the table is from another version or the object already serves another
   table. Loading a file that is already loaded gives the same object, whose kernels may be
   running on other threads: only the first call stores the table, and every access to it is
   atomic, so a later bind never races with running kernels. Inline and kept (`used`): every
   translation unit of a split module defines it, and the linker keeps one. */
extern "C" FST_HOST_EXPORT __attribute__((used)) inline unsigned int fst_host_bind(
    const fst_host_api* table) {
  if (table == nullptr || table->abi_version != FST_HOST_ABI_VERSION) return 0;
  const fst_host_api* bound = nullptr;
  if (__atomic_compare_exchange_n(&fst_host_detail::api, &bound, table, false, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE) ||
      bound == table)
    return FST_HOST_ABI_VERSION;
  return 0;
}

/* fst_host_entry_<name>(params) unpacks the cuLaunchKernel-style parameter array into the
   kernel's parameters and runs it as the current fiber's thread. */
#define FST_HOST_ENTRY(name)                                                  \
  extern "C" FST_HOST_EXPORT void fst_host_entry_##name(void** params) {      \
    fst_host_detail::run_kernel(name, params);                                \
  }                                                                           \
  extern "C" FST_HOST_EXPORT unsigned int fst_host_param_count_##name(void) { \
    return fst_host_detail::param_count(name);                                \
  }

#endif /* !FST_HOST_ABI_ONLY && !FSTITCH_HOST_EMULATION */
