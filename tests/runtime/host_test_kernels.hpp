// Hand-written kernel texts that follow docs/generated-code.md, as the code generator will
// emit them: one file, a prelude without #include, each kernel followed by FST_HOST_ENTRY.
#pragma once

namespace fstitch::host::testing {

inline constexpr const char* kTestKernels = R"kernels(
#ifdef __CUDACC_RTC__
#define FST_SHARED(T, name, count) __shared__ T name[count]
#define FST_DYNAMIC_SHARED(T, name) extern __shared__ T name[]
#define FST_HOST_ENTRY(name)
#endif

static __device__ __forceinline__ float fst_neg_inf() { return __int_as_float((int)0xff800000u); }

// y = a * exp(x) + b: grid-stride loop over float4, then the tail one element at a time.
extern "C" __global__ void __launch_bounds__(128) fst_exp_affine(const float* __restrict__ x, float* __restrict__ y,
                                                                  float a, float b, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long n4 = n / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float4* y4 = reinterpret_cast<float4*>(y);
  for (long long i = first; i < n4; i += stride) {
    const float4 v = x4[i];
    y4[i] = make_float4(a * expf(v.x) + b, a * expf(v.y) + b, a * expf(v.z) + b, a * expf(v.w) + b);
  }
  for (long long i = n4 * 4 + first; i < n; i += stride) y[i] = a * expf(x[i]) + b;
}
FST_HOST_ENTRY(fst_exp_affine)

// Overloads as in CUDA: float arguments take the float functions.
extern "C" __global__ void fst_math(const float* xf, const double* xd, float* yf, double* yd, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  yf[4 * i + 0] = exp(xf[i]);
  yf[4 * i + 1] = tanh(xf[i]);
  yf[4 * i + 2] = rsqrtf(xf[i] * xf[i] + 1.0f);
  yf[4 * i + 3] = erf(xf[i]);
  yd[2 * i + 0] = exp(xd[i]);
  yd[2 * i + 1] = log1p(fabs(xd[i]));
}
FST_HOST_ENTRY(fst_math)

// Every thread writes where it is: threadIdx, blockIdx, blockDim, gridDim, packed.
extern "C" __global__ void fst_indices(unsigned int* out) {
  const unsigned int tpb = blockDim.x * blockDim.y * blockDim.z;
  const unsigned int block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned int thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned int* slot = out + 4 * (block * tpb + thread);
  slot[0] = threadIdx.x | threadIdx.y << 10 | threadIdx.z << 20;
  slot[1] = blockIdx.x | blockIdx.y << 10 | blockIdx.z << 20;
  slot[2] = blockDim.x | blockDim.y << 10 | blockDim.z << 20;
  slot[3] = gridDim.x | gridDim.y << 10 | gridDim.z << 20;
}
FST_HOST_ENTRY(fst_indices)

// Softmax of each row, one block (64 threads) per row, reductions through shared memory.
extern "C" __global__ void __launch_bounds__(64) fst_softmax_rows(const float* __restrict__ x,
                                                                    float* __restrict__ y, int cols) {
  FST_SHARED(float, partial, 64);
  const float* row = x + (long long)blockIdx.x * cols;
  float* out = y + (long long)blockIdx.x * cols;
  const int t = threadIdx.x;
  float m = fst_neg_inf();
  for (int c = t; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
  partial[t] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) partial[t] = fmaxf(partial[t], partial[t + s]);
    __syncthreads();
  }
  const float row_max = partial[0];
  __syncthreads();
  float sum = 0.0f;
  for (int c = t; c < cols; c += blockDim.x) sum += expf(row[c] - row_max);
  partial[t] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) partial[t] += partial[t + s];
    __syncthreads();
  }
  const float inv = 1.0f / partial[0];
  for (int c = t; c < cols; c += blockDim.x) out[c] = expf(row[c] - row_max) * inv;
}
FST_HOST_ENTRY(fst_softmax_rows)

// One warp per row; the butterfly leaves the row sum in every lane, and each lane writes it.
extern "C" __global__ void fst_warp_row_sum(const float* __restrict__ x, float* __restrict__ lanes_out, int rows,
                                            int cols) {
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  float s = 0.0f;
  if (warp < rows)
    for (int c = lane; c < cols; c += 32) s += x[(long long)warp * cols + c];
  for (int offset = 16; offset > 0; offset >>= 1) s += __shfl_xor_sync(0xffffffffu, s, offset);
  if (warp < rows) lanes_out[warp * 32 + lane] = s;
}
FST_HOST_ENTRY(fst_warp_row_sum)

// Eight lanes per row (segments of width 8); the segment's first lane holds the sum.
extern "C" __global__ void fst_segment_row_sum(const float* __restrict__ x, float* __restrict__ y, int rows,
                                               int cols) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = t / 8;
  const int sub = t % 8;
  float s = 0.0f;
  if (row < rows)
    for (int c = sub; c < cols; c += 8) s += x[(long long)row * cols + c];
  for (int offset = 4; offset > 0; offset >>= 1) s += __shfl_down_sync(0xffffffffu, s, offset, 8);
  if (row < rows && sub == 0) y[row] = s;
}
FST_HOST_ENTRY(fst_segment_row_sum)

// Shuffle semantics: what each lane receives, for each (operation, argument, width).
extern "C" __global__ void fst_shuffles(const int* ops, int count, long long* out) {
  const int lane = threadIdx.x % 32;
  const int value = 1000 * (threadIdx.x / 32) + 10 * lane + 1;
  for (int k = 0; k < count; ++k) {
    const int op = ops[3 * k], arg = ops[3 * k + 1], width = ops[3 * k + 2];
    long long r = 0;
    if (op == 0) r = __shfl_sync(0xffffffffu, value, arg, width);
    if (op == 1) r = __shfl_up_sync(0xffffffffu, value, (unsigned)arg, width);
    if (op == 2) r = __shfl_down_sync(0xffffffffu, value, (unsigned)arg, width);
    if (op == 3) r = __shfl_xor_sync(0xffffffffu, value, arg, width);
    out[(long long)k * blockDim.x + threadIdx.x] = r;
  }
}
FST_HOST_ENTRY(fst_shuffles)

// 64-bit values travel whole, and two halves of a warp shuffle apart with their own masks.
extern "C" __global__ void fst_shuffle_wide(double* dout, long long* lout, int* masked_out) {
  const int lane = threadIdx.x % 32;
  const double d = 1.0e300 / (lane + 1);
  const long long l = (1LL << 40) * (lane + 1) + lane;
  dout[threadIdx.x] = __shfl_down_sync(0xffffffffu, d, 1);
  lout[threadIdx.x] = __shfl_xor_sync(0xffffffffu, l, 3);
  const unsigned int half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
  // Lanes 0-15 read lane + 4 (lanes 12-15 then name lanes 16-19, outside their mask).
  masked_out[threadIdx.x] = __shfl_sync(half, 100 + lane, lane + 4);
  __syncwarp();
}
FST_HOST_ENTRY(fst_shuffle_wide)

// Each thread copies its element to shared memory and reads its left neighbour's: correct
// only with the barrier.
extern "C" __global__ void fst_left_neighbor_unsynced(const float* x, float* y) {
  FST_SHARED(float, tile, 64);
  const int t = threadIdx.x;
  tile[t] = x[blockIdx.x * 64 + t];
  y[blockIdx.x * 64 + t] = t > 0 ? tile[t - 1] : 0.0f;
}
FST_HOST_ENTRY(fst_left_neighbor_unsynced)

extern "C" __global__ void fst_left_neighbor(const float* x, float* y) {
  FST_SHARED(float, tile, 64);
  const int t = threadIdx.x;
  tile[t] = x[blockIdx.x * 64 + t];
  __syncthreads();
  y[blockIdx.x * 64 + t] = t > 0 ? tile[t - 1] : 0.0f;
}
FST_HOST_ENTRY(fst_left_neighbor)

// Reverses each block's elements through dynamic shared memory; also reports what one
// element past the written part holds before anyone writes it.
extern "C" __global__ void fst_reverse_dynamic(const float* x, float* y, float* unwritten) {
  FST_SHARED(int, flag, 1);
  FST_DYNAMIC_SHARED(float, buffer);
  const int t = threadIdx.x;
  const int n = blockDim.x;
  if (t == 0) { flag[0] = 1; unwritten[blockIdx.x] = buffer[n]; }
  __syncthreads();
  buffer[t] = x[blockIdx.x * n + t];
  __syncthreads();
  y[blockIdx.x * n + t] = buffer[n - 1 - t];
}
FST_HOST_ENTRY(fst_reverse_dynamic)

// Grid-wide barrier: an atomic counter in global memory, spun on with __nanosleep.
static __device__ __forceinline__ void fst_grid_barrier(unsigned int* counter, unsigned int target) {
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicAdd(counter, 1u);
    while (atomicAdd(counter, 0u) < target) __nanosleep(64);
    __threadfence();
  }
  __syncthreads();
}

// Each block sums its chunk; after the grid barrier every block sums the partial sums.
extern "C" __global__ void fst_grid_total(const float* x, float* partial, float* totals, unsigned int* counter,
                                          int per_block) {
  FST_SHARED(float, acc, 64);
  const int t = threadIdx.x;
  float s = 0.0f;
  for (int i = t; i < per_block; i += blockDim.x) s += x[(long long)blockIdx.x * per_block + i];
  acc[t] = s;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (t < k) acc[t] += acc[t + k];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = acc[0];
  fst_grid_barrier(counter, gridDim.x);
  if (t == 0) {
    float total = 0.0f;
    for (unsigned int b = 0; b < gridDim.x; ++b) total += partial[b];
    totals[blockIdx.x] = total;
  }
}
FST_HOST_ENTRY(fst_grid_total)

// Atomics from every thread of many blocks.
extern "C" __global__ void fst_atomics(const float* x, int n, float* fsum, double* dsum, int* count, int* imax,
                                       unsigned int* umin, unsigned long long* usum) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    atomicAdd(fsum, x[i]);
    atomicAdd(dsum, (double)x[i]);
    atomicAdd(count, 1);
    atomicMax(imax, (int)x[i]);
    atomicMin(umin, (unsigned int)x[i]);
    atomicAdd(usum, (unsigned long long)x[i]);
  }
}
FST_HOST_ENTRY(fst_atomics)

// Broken kernels, each of which the runtime must report instead of hanging.
extern "C" __global__ void fst_early_exit_before_barrier(float* y) {
  if (threadIdx.x >= 16) return;
  __syncthreads();
  y[threadIdx.x] = 1.0f;
}
FST_HOST_ENTRY(fst_early_exit_before_barrier)

extern "C" __global__ void fst_lane_exits_before_shuffle(float* y) {
  if (threadIdx.x == 5) return;
  y[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1.0f, 1);
}
FST_HOST_ENTRY(fst_lane_exits_before_shuffle)

// Lanes that take the first branch skip the second shuffle: the lanes of the mask do not all
// reach the same call (undefined on a GPU).
extern "C" __global__ void fst_divergent_shuffle(float* y) {
  float a = (float)threadIdx.x;
  for (int o = 16; o > 0; o >>= 1)
    a = (a < __shfl_xor_sync(0xffffffffu, a, o) ? a : __shfl_xor_sync(0xffffffffu, a, o));
  y[threadIdx.x] = a;
}
FST_HOST_ENTRY(fst_divergent_shuffle)

extern "C" __global__ void fst_different_barriers(float* y) {
  if (threadIdx.x % 2 == 0) {
    __syncthreads();
  } else {
    __syncthreads();
  }
  y[threadIdx.x] = 1.0f;
}
FST_HOST_ENTRY(fst_different_barriers)

extern "C" __global__ void fst_full_mask_partial_warp(float* y) {
  y[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1.0f, 1);
}
FST_HOST_ENTRY(fst_full_mask_partial_warp)

extern "C" __global__ void fst_too_much_shared(float* y) {
  FST_SHARED(float, big, 20000);
  big[threadIdx.x] = 1.0f;
  y[threadIdx.x] = big[threadIdx.x];
}
FST_HOST_ENTRY(fst_too_much_shared)

extern "C" __global__ void fst_traps(float* y) {
  if (threadIdx.x == 3) __trap();
  y[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;  // each block its own elements: no race
}
FST_HOST_ENTRY(fst_traps)

static __device__ __noinline__ int fst_deep(int n) {
  volatile char pad[512];
  pad[0] = (char)n;
  return n == 0 ? 0 : fst_deep(n - 1) + pad[0];
}
extern "C" __global__ void fst_recurse(int depth, int* out) { out[threadIdx.x] = fst_deep(depth); }
FST_HOST_ENTRY(fst_recurse)

// Synchronization points in a loop: the cost of switching threads.
extern "C" __global__ void fst_barrier_loop(int iterations, int* out) {
  int s = 0;
  for (int i = 0; i < iterations; ++i) {
    s += (int)threadIdx.x;
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
FST_HOST_ENTRY(fst_barrier_loop)

extern "C" __global__ void fst_no_params() {}
FST_HOST_ENTRY(fst_no_params)

// Clusters of blockDim-sized blocks along x: each block publishes its block index in shared
// memory, the cluster meets, and every thread reads the next rank's value (wrapping) from that
// block's shared memory; a second meeting keeps each block alive until the others have read.
extern "C" __global__ void fst_cluster_ring(int cluster, int* out) {
  FST_SHARED(int, mine, 1);
  if (threadIdx.x == 0) mine[0] = (int)blockIdx.x;
  fst_host_cluster_sync();
  const unsigned rank = blockIdx.x % (unsigned)cluster;
  const int* other = fst_host_cluster_map(mine, (rank + 1) % (unsigned)cluster);
  out[blockIdx.x * blockDim.x + threadIdx.x] = other[0];
  fst_host_cluster_sync();
}
FST_HOST_ENTRY(fst_cluster_ring)

// Maps the shared memory of a rank its cluster does not have.
extern "C" __global__ void fst_cluster_bad_rank(int* out) {
  FST_SHARED(int, mine, 1);
  mine[0] = 1;
  out[0] = fst_host_cluster_map(mine, 99u)[0];
}
FST_HOST_ENTRY(fst_cluster_bad_rank)

// Block 0 of each cluster leaves without meeting the others.
extern "C" __global__ void fst_cluster_early_exit() {
  if (blockIdx.x % 2u == 0) return;
  fst_host_cluster_sync();
}
FST_HOST_ENTRY(fst_cluster_early_exit)
)kernels";

}  // namespace fstitch::host::testing
