// Hand-written kernels on the host backend: elementwise with float4 and a grid-stride loop,
// the math overloads, thread indices, block-per-row softmax, warp reductions and the exact
// shuffle rules. Expected values are computed here, on the host, in double where it matters.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "host_test_support.hpp"

namespace fstitch::host::testing {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

double relative_l2(const std::vector<float>& got, const std::vector<double>& want) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i])) return std::numeric_limits<double>::infinity();
    diff += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  return std::sqrt(diff / norm);
}

std::uint32_t bits(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

TEST(HostKernels, ElementwiseWithVectorLoadsAndGridStride) {
  const long long n = 4099;  // not a multiple of 4: the tail loop runs too
  const std::vector<float> x = random_floats(n, -2.0f, 2.0f, 11);
  std::vector<float> y(n, kNaN);
  float a = 1.5f, b = -0.25f;
  long long count = n;
  const float* xp = x.data();
  float* yp = y.data();
  void* params[] = {&xp, &yp, &a, &b, &count};
  test_kernels().launch("fst_exp_affine", {3}, {128}, 0, params);
  for (long long i = 0; i < n; ++i) {
    const double want = 1.5 * std::exp(static_cast<double>(x[i])) - 0.25;
    ASSERT_NEAR(y[i], want, 1e-6 * std::abs(want) + 1e-6) << "element " << i;
  }
}

TEST(HostKernels, FloatOverloadsCallTheFloatFunctions) {
  const int n = 300;
  const std::vector<float> xf = random_floats(n, -3.0f, 3.0f, 5);
  std::vector<double> xd(n);
  for (int i = 0; i < n; ++i) xd[i] = xf[i] * 1.25;
  std::vector<float> yf(4 * n, kNaN);
  std::vector<double> yd(2 * n, std::nan(""));
  const float* xfp = xf.data();
  const double* xdp = xd.data();
  float* yfp = yf.data();
  double* ydp = yd.data();
  int count = n;
  void* params[] = {&xfp, &xdp, &yfp, &ydp, &count};
  test_kernels().launch("fst_math", {3}, {128}, 0, params);
  for (int i = 0; i < n; ++i) {
    const float v = xf[i];
    // Bit-exact: the same float libm functions (expf, tanhf, erff) run here.
    EXPECT_EQ(bits(yf[4 * i + 0]), bits(expf(v))) << i;
    EXPECT_EQ(bits(yf[4 * i + 1]), bits(tanhf(v))) << i;
    EXPECT_EQ(bits(yf[4 * i + 2]), bits(1.0f / sqrtf(v * v + 1.0f))) << i;
    EXPECT_EQ(bits(yf[4 * i + 3]), bits(erff(v))) << i;
    EXPECT_EQ(yd[2 * i + 0], std::exp(xd[i])) << i;
    EXPECT_EQ(yd[2 * i + 1], std::log1p(std::fabs(xd[i]))) << i;
  }
}

TEST(HostKernels, ThreadAndBlockIndicesInThreeDimensions) {
  const Dim3 block{4, 2, 2}, grid{2, 3, 2};
  const unsigned int tpb = 16, blocks = 12;
  std::vector<unsigned int> out(4 * tpb * blocks, 0xdeadbeefu);
  unsigned int* outp = out.data();
  void* params[] = {&outp};
  for (ThreadOrder order : kBothOrders) {
    HostLaunchOptions options;
    options.order = order;
    test_kernels().launch("fst_indices", grid, block, 0, params, options);
    for (unsigned int bz = 0; bz < 2; ++bz)
      for (unsigned int by = 0; by < 3; ++by)
        for (unsigned int bx = 0; bx < 2; ++bx)
          for (unsigned int tz = 0; tz < 2; ++tz)
            for (unsigned int ty = 0; ty < 2; ++ty)
              for (unsigned int tx = 0; tx < 4; ++tx) {
                const unsigned int b = bx + 2 * (by + 3 * bz), t = tx + 4 * (ty + 2 * tz);
                const unsigned int* slot = &out[4 * (b * tpb + t)];
                EXPECT_EQ(slot[0], tx | ty << 10 | tz << 20);
                EXPECT_EQ(slot[1], bx | by << 10 | bz << 20);
                EXPECT_EQ(slot[2], 4u | 2u << 10 | 2u << 20);
                EXPECT_EQ(slot[3], 2u | 3u << 10 | 2u << 20);
              }
  }
}

TEST(HostKernels, BlockPerRowSoftmaxThroughSharedMemory) {
  const int rows = 6, cols = 300;
  const std::vector<float> x = random_floats(rows * cols, -4.0f, 4.0f, 21);
  std::vector<double> want(rows * cols);
  for (int r = 0; r < rows; ++r) {
    double m = -INFINITY, sum = 0;
    for (int c = 0; c < cols; ++c) m = std::max(m, static_cast<double>(x[r * cols + c]));
    for (int c = 0; c < cols; ++c) sum += std::exp(x[r * cols + c] - m);
    for (int c = 0; c < cols; ++c) want[r * cols + c] = std::exp(x[r * cols + c] - m) / sum;
  }
  for (ThreadOrder order : kBothOrders) {
    std::vector<float> y(rows * cols, kNaN);
    const float* xp = x.data();
    float* yp = y.data();
    int n = cols;
    void* params[] = {&xp, &yp, &n};
    HostLaunchOptions options;
    options.order = order;
    test_kernels().launch("fst_softmax_rows", {rows}, {64}, 0, params, options);
    EXPECT_LT(relative_l2(y, want), 1e-5) << order_name(order);
  }
}

TEST(HostKernels, WarpPerRowSumWithXorShuffles) {
  const int rows = 5, cols = 100;
  const std::vector<float> x = random_whole_floats(rows * cols, -8, 8, 31);
  for (ThreadOrder order : kBothOrders) {
    std::vector<float> lanes(rows * 32, kNaN);
    const float* xp = x.data();
    float* lp = lanes.data();
    int r = rows, c = cols;
    void* params[] = {&xp, &lp, &r, &c};
    HostLaunchOptions options;
    options.order = order;
    // Three blocks of two warps: the sixth warp has no row and writes nothing.
    test_kernels().launch("fst_warp_row_sum", {3}, {64}, 0, params, options);
    for (int row = 0; row < rows; ++row) {
      float want = 0;
      for (int k = 0; k < cols; ++k) want += x[row * cols + k];
      for (int lane = 0; lane < 32; ++lane)
        EXPECT_EQ(lanes[row * 32 + lane], want)
            << "row " << row << " lane " << lane << " " << order_name(order);
    }
  }
}

TEST(HostKernels, SegmentsOfEightLanesSumWithDownShuffles) {
  const int rows = 13, cols = 37;
  const std::vector<float> x = random_whole_floats(rows * cols, -9, 9, 41);
  for (ThreadOrder order : kBothOrders) {
    std::vector<float> y(rows, kNaN);
    const float* xp = x.data();
    float* yp = y.data();
    int r = rows, c = cols;
    void* params[] = {&xp, &yp, &r, &c};
    HostLaunchOptions options;
    options.order = order;
    test_kernels().launch("fst_segment_row_sum", {4}, {32}, 0, params, options);
    for (int row = 0; row < rows; ++row) {
      float want = 0;
      for (int k = 0; k < cols; ++k) want += x[row * cols + k];
      EXPECT_EQ(y[row], want) << "row " << row << " " << order_name(order);
    }
  }
}

// What CUDA documents for each shuffle, written out directly.
long long expected_shuffle(int op, int arg, int width, int thread) {
  const int warp = thread / 32, lane = thread % 32;
  const auto value = [&](int l) { return 1000LL * warp + 10 * l + 1; };
  const int segment = lane / width * width;
  switch (op) {
    case 0:  // srcLane outside [0, width) wraps within the segment
      return value(segment + arg % width);
    case 1:
      return lane % width >= arg ? value(lane - arg) : value(lane);
    case 2:
      return lane % width + arg < width ? value(lane + arg) : value(lane);
    default: {  // earlier segments may be read; later ones give the lane its own value
      const int j = lane ^ arg;
      return j < segment + width ? value(j) : value(lane);
    }
  }
}

TEST(HostKernels, ShufflesFollowTheWidthAndSegmentRules) {
  const std::vector<int> ops = {
      0, 5, 32, 0, 3,  8,  0, 9, 8,  0, 37, 32, 0, 2, 16,  // __shfl_sync
      1, 1, 32, 1, 3,  8,  1, 0, 4,                        // __shfl_up_sync
      2, 1, 32, 2, 3,  8,  2, 2, 16,                       // __shfl_down_sync
      3, 1, 32, 3, 16, 32, 3, 2, 8,  3, 8,  8,  3, 4, 4,   // __shfl_xor_sync
  };
  const int count = static_cast<int>(ops.size() / 3), threads = 64;
  for (ThreadOrder order : kBothOrders) {
    std::vector<long long> out(count * threads, -12345);
    const int* opp = ops.data();
    long long* outp = out.data();
    int n = count;
    void* params[] = {&opp, &n, &outp};
    HostLaunchOptions options;
    options.order = order;
    test_kernels().launch("fst_shuffles", {1}, {threads}, 0, params, options);
    for (int k = 0; k < count; ++k)
      for (int t = 0; t < threads; ++t)
        EXPECT_EQ(out[k * threads + t], expected_shuffle(ops[3 * k], ops[3 * k + 1], ops[3 * k + 2], t))
            << "op " << ops[3 * k] << " arg " << ops[3 * k + 1] << " width " << ops[3 * k + 2] << " thread "
            << t << " " << order_name(order);
  }
}

TEST(HostKernels, SixtyFourBitShufflesAndDisjointMasks) {
  std::vector<double> d(32, std::nan(""));
  std::vector<long long> l(32, 0);
  std::vector<int> masked(32, 0);
  double* dp = d.data();
  long long* lp = l.data();
  int* mp = masked.data();
  void* params[] = {&dp, &lp, &mp};
  for (ThreadOrder order : kBothOrders) {
    HostLaunchOptions options;
    options.order = order;
    test_kernels().launch("fst_shuffle_wide", {1}, {32}, 0, params, options);
    for (int lane = 0; lane < 32; ++lane) {
      const int down = lane < 31 ? lane + 1 : lane;
      EXPECT_EQ(d[lane], 1.0e300 / (down + 1)) << lane;
      const int x = lane ^ 3;
      EXPECT_EQ(l[lane], (1LL << 40) * (x + 1) + x) << lane;
      // Each half exchanges within its own mask; a source lane outside the mask is
      // undefined in CUDA, and reads as all ones here.
      const int source = (lane + 4) % 32;
      const bool same_half = (source < 16) == (lane < 16);
      EXPECT_EQ(masked[lane], same_half ? 100 + source : -1) << lane << " " << order_name(order);
    }
  }
}

}  // namespace
}  // namespace fstitch::host::testing
