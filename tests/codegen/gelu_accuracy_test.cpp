// The generated GELU (erf form) in f32, run on the host backend: within a few ulp of the
// exact value x * erfc(-x / sqrt 2) / 2 (long double) over the whole range, large negative
// inputs and subnormal results included, and exact on the special values. The host runs
// the same sequence of IEEE operations as the GPU, except that the GPU's reciprocal is the
// hardware approximation (within 1 ulp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "common/backend_run.hpp"
#include "common/host_context.hpp"
#include "ir/numeric.hpp"
#include "ref/gelu_table.hpp"

namespace {

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// |y - exact| in units of the last place of the exact value rounded to f32 (2^-149 below
// the smallest normal).
double ulp_error(float y, long double exact) {
  const float rounded = static_cast<float>(exact);
  const float magnitude = std::fabs(rounded);
  const double ulp = magnitude < std::numeric_limits<float>::min()
                         ? std::ldexp(1.0, -149)
                         : static_cast<double>(std::nextafter(magnitude, INFINITY) - magnitude);
  return static_cast<double>(std::fabs(static_cast<long double>(y) - exact)) / ulp;
}

// Every 2^-12 over [-16.5, 16.5] (GELU(-16.5) underflows to -0; past 16.5 it is x), a spread
// of bit patterns (tiny, subnormal and large magnitudes of both signs), then the kSpecials
// special values: +inf, -inf, NaN, -0, +0.
constexpr size_t kSpecials = 5;
std::vector<float> f32_inputs() {
  std::vector<float> xs;
  for (int i = -16.5 * 4096; i <= 16.5 * 4096; ++i) xs.push_back(static_cast<float>(i) / 4096.0f);
  for (uint32_t b = 0; b < 0x7f800000u; b += 0x10001u) {
    xs.push_back(from_bits(b));
    xs.push_back(-from_bits(b));
  }
  for (float s : {INFINITY, -INFINITY, NAN, -0.0f, 0.0f}) xs.push_back(s);
  return xs;
}

// Fuses y = GELU(x) for x of `n` elements of `dtype` on the host backend, its outputs y
// itself (no casts) or y cast to each of `casts`, checks that the plan dump says
// `plan_says` (when given), and runs it from `input` into `outputs`.
void run_gelu(fst_dtype dtype, int64_t n, const std::vector<fst_dtype>& casts, const char* plan_says,
              fstitch::testing::HostArray input, const std::vector<fstitch::testing::HostArray>& outputs) {
  fstitch::testing::ContextHandle ctx = fstitch::testing::host_backend_context();
  ASSERT_TRUE(ctx);
  fst_graph* g = nullptr;
  ASSERT_EQ(fst_graph_create(ctx.get(), &g), FST_OK);
  const fst_value y = fst_unary(g, FST_UNARY_GELU, fst_input(g, "x", dtype, 1, &n));
  if (casts.empty()) {
    ASSERT_EQ(fst_output(g, "y", y), FST_OK) << fst_last_error_message();
  }
  for (size_t i = 0; i < casts.size(); ++i) {
    const std::string name = "y" + std::to_string(i);
    ASSERT_EQ(fst_output(g, name.c_str(), fst_cast(g, y, casts[i])), FST_OK) << fst_last_error_message();
  }
  fst_fusion* f = nullptr;
  ASSERT_EQ(fst_fuse(g, nullptr, &f), FST_OK) << fst_last_error_message();
  fst_graph_destroy(g);
  if (plan_says) {
    char* dump = nullptr;
    ASSERT_EQ(fst_fusion_dump(f, &dump), FST_OK);
    EXPECT_NE(std::string(dump).find(plan_says), std::string::npos) << dump;
    fst_string_free(dump);
  }
  EXPECT_EQ(fstitch::testing::run_on_backend(f, {input}, outputs), FST_OK) << fst_last_error_message();
  fst_fusion_destroy(f);
}

TEST(GeluAccuracy, F32WithinFourUlpOverTheWholeRange) {
  std::vector<float> xs = f32_inputs();
  const size_t checked = xs.size() - kSpecials;

  std::vector<float> ys(xs.size(), NAN);
  const size_t bytes = xs.size() * sizeof(float);
  run_gelu(FST_F32, static_cast<int64_t>(xs.size()), {}, nullptr, {xs.data(), bytes}, {{ys.data(), bytes}});
  if (HasFatalFailure()) return;

  double worst = 0, sum = 0;
  float worst_x = 0;
  for (size_t i = 0; i < checked; ++i) {
    const long double v = xs[i];
    const long double exact = v * 0.5L * std::erfc(-v / std::sqrt(2.0L));
    const double e = ulp_error(ys[i], exact);
    sum += e;
    if (!(e <= worst)) {
      worst = e;
      worst_x = xs[i];
    }
  }
  std::printf("[ gelu ] %zu inputs: worst %.2f ulp (x = %.9g), mean %.3f ulp\n", checked, worst, worst_x,
              sum / static_cast<double>(checked));
  EXPECT_LE(worst, 4.5) << "at x = " << worst_x;
  EXPECT_LE(sum / static_cast<double>(checked), 0.3);
  // GELU(inf) = inf, GELU(-inf) = -inf * 0 = NaN, NaN stays NaN, the sign of zero is kept.
  const float* special = ys.data() + checked;
  EXPECT_EQ(special[0], INFINITY);
  EXPECT_TRUE(std::isnan(special[1]));
  EXPECT_TRUE(std::isnan(special[2]));
  EXPECT_TRUE(special[3] == 0.0f && std::signbit(special[3]));
  EXPECT_TRUE(special[4] == 0.0f && !std::signbit(special[4]));
}

// GELU of bf16 values is a bf16 operation (its operand rounded to bf16, its result too): the
// kernel looks the reference's value up, so every one of the 65536 inputs gives the
// reference's bits (NaN: a NaN), in a kernel that the plan says uses the table.
TEST(GeluAccuracy, Bf16IsTheReferenceOnEveryInput) {
  std::vector<uint16_t> xs(65536);
  for (uint32_t b = 0; b < xs.size(); ++b) xs[b] = static_cast<uint16_t>(b);
  std::vector<uint16_t> ys(xs.size(), 0);
  const size_t bytes = xs.size() * sizeof(uint16_t);
  run_gelu(FST_BF16, static_cast<int64_t>(xs.size()), {}, "gelu: bf16 table", {xs.data(), bytes},
           {{ys.data(), bytes}});
  if (HasFatalFailure()) return;
  auto is_nan = [](uint16_t b) { return (b & 0x7fffu) > 0x7f80u; };
  size_t wrong = 0;
  for (uint32_t b = 0; b < xs.size(); ++b) {
    const uint16_t want = fstitch::ref::bf16_gelu_reference(static_cast<uint16_t>(b));
    const bool ok = is_nan(want) ? is_nan(ys[b]) : ys[b] == want;
    if (!ok && ++wrong <= 5)
      ADD_FAILURE() << std::hex << "x = 0x" << b << ": 0x" << ys[b] << ", want 0x" << want;
  }
  EXPECT_EQ(wrong, 0u);
  // A NaN input stays that NaN, made quiet (as the conversions keep it).
  EXPECT_EQ(ys[0x7f81], 0x7fc1);
  EXPECT_EQ(ys[0xffa5], 0xffe5);
  EXPECT_EQ(ys[0xff80], 0xffc0);  // GELU(-inf): -inf made quiet
}

// An f32 GELU whose only uses round it to bf16 or f16 (torch's F.gelu(x.float()).to(bf16))
// is evaluated to the precision the rounding needs: every rounded result is within half
// an ulp of the exact value plus 2^-16 of it (so it is the correctly rounded one except
// within 2^-16 of a halfway point), the special values as in f32.
TEST(GeluAccuracy, F32RoundedTo16BitsIsWithinHalfAnUlpPlusTwoToTheMinus16) {
  std::vector<float> xs = f32_inputs();
  const size_t checked = xs.size() - kSpecials;

  std::vector<uint16_t> bs(xs.size()), hs(xs.size());
  const size_t in_bytes = xs.size() * sizeof(float), out_bytes = xs.size() * sizeof(uint16_t);
  run_gelu(FST_F32, static_cast<int64_t>(xs.size()), {FST_BF16, FST_F16},
           "to the precision of its 16-bit rounding", {xs.data(), in_bytes},
           {{bs.data(), out_bytes}, {hs.data(), out_bytes}});
  if (HasFatalFailure()) return;

  struct Format {
    const char* name;
    const std::vector<uint16_t>& bits;
    double (*value)(uint16_t);
    uint16_t (*round)(double);
    int mantissa_bits;
    double min_normal;
  };
  const Format formats[] = {
      {"bf16", bs, fstitch::bf16_bits_to_f64, fstitch::f64_to_bf16_bits, 7, std::ldexp(1.0, -126)},
      {"f16", hs, fstitch::f16_bits_to_f64, fstitch::f64_to_f16_bits, 10, std::ldexp(1.0, -14)},
  };
  for (const Format& fmt : formats) {
    size_t not_nearest = 0, wrong = 0;
    for (size_t i = 0; i < checked; ++i) {
      const long double v = xs[i];
      const double exact = static_cast<double>(v * 0.5L * std::erfc(-v / std::sqrt(2.0L)));
      const uint16_t nearest = fmt.round(exact);
      if (fmt.bits[i] == nearest) continue;
      ++not_nearest;
      const double got = fmt.value(fmt.bits[i]);
      const double magnitude = std::max(std::fabs(got), std::fabs(fmt.value(nearest)));
      int e = 0;
      std::frexp(std::max(magnitude, fmt.min_normal), &e);
      const double ulp = std::ldexp(1.0, e - 1 - fmt.mantissa_bits);
      if (!(std::fabs(got - exact) <= 0.5 * ulp + std::ldexp(std::fabs(exact), -16)) && ++wrong <= 5)
        ADD_FAILURE() << fmt.name << " at x = " << xs[i] << ": " << got << ", exact " << exact;
    }
    std::printf("[ gelu ] %s: %zu of %zu inputs not the nearest value, %zu beyond the bound\n", fmt.name,
                not_nearest, checked, wrong);
    EXPECT_EQ(wrong, 0u) << fmt.name;
  }
  const size_t k = checked;
  EXPECT_EQ(bs[k], 0x7f80);                    // GELU(+inf) = +inf
  EXPECT_TRUE((bs[k + 1] & 0x7fff) > 0x7f80);  // GELU(-inf) is NaN
  EXPECT_TRUE((bs[k + 2] & 0x7fff) > 0x7f80);  // NaN
  EXPECT_EQ(bs[k + 3], 0x8000);                // -0
  EXPECT_EQ(bs[k + 4], 0x0000);                // +0
  EXPECT_EQ(hs[k], 0x7c00);
  EXPECT_TRUE((hs[k + 1] & 0x7fff) > 0x7c00);
  EXPECT_EQ(hs[k + 3], 0x8000);
}

}  // namespace
