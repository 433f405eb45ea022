// Tests of the GPU benchmark's host-side pieces: random inputs, element reading, accuracy,
// row sampling, JSON output, timing summaries, and a clean failure without a driver.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "capi.hpp"
#include "common/canonical_graphs.hpp"
#include "common/reduction_graphs.hpp"
#include "gpu_runtime.hpp"
#include "host_data.hpp"
#include "ir/builder.hpp"
#include "ir/text.hpp"
#include "json_writer.hpp"
#include "reference_rows.hpp"
#include "results.hpp"
#include "row_sample.hpp"
#include "support/error.hpp"

namespace fstitch::bench_gpu {
namespace {

std::vector<unsigned char> bf16_bytes(std::initializer_list<uint16_t> bits) {
  std::vector<unsigned char> bytes(bits.size() * 2);
  size_t i = 0;
  for (uint16_t b : bits) std::memcpy(bytes.data() + 2 * i++, &b, 2);
  return bytes;
}

TEST(GpuBenchHostData, RandomElementsAreDeterministicSpreadAndInRange) {
  const auto a = random_elements(10000, DType::kF32, 42);
  const auto b = random_elements(10000, DType::kF32, 42);
  const auto c = random_elements(10000, DType::kF32, 43);
  ASSERT_EQ(a.size(), 10000u * 4);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  double sum = 0, lowest = 10, highest = -10;
  for (int64_t i = 0; i < 10000; ++i) {
    const double v = element_as_double(a.data(), i, DType::kF32);
    sum += v;
    lowest = std::min(lowest, v);
    highest = std::max(highest, v);
  }
  EXPECT_GE(lowest, -2.0);
  EXPECT_LT(highest, 2.0);
  EXPECT_LT(lowest, -1.9);  // uniform over [-2, 2): the ends are reached
  EXPECT_GT(highest, 1.9);
  EXPECT_LT(std::abs(sum / 10000), 0.1);
}

TEST(GpuBenchHostData, RandomBf16ElementsAreBf16Values) {
  const auto bytes = random_elements(1000, DType::kBF16, 5);
  ASSERT_EQ(bytes.size(), 2000u);
  for (int64_t i = 0; i < 1000; ++i) {
    const double v = element_as_double(bytes.data(), i, DType::kBF16);
    EXPECT_TRUE(std::isfinite(v));
    EXPECT_LE(std::abs(v), 2.0);
  }
}

TEST(GpuBenchHostData, ElementsReadAsDoubles) {
  const auto bf16 = bf16_bytes({0x3F80, 0xC000, 0x3FC0});  // 1, -2, 1.5
  EXPECT_EQ(element_as_double(bf16.data(), 0, DType::kBF16), 1.0);
  EXPECT_EQ(element_as_double(bf16.data(), 1, DType::kBF16), -2.0);
  EXPECT_EQ(element_as_double(bf16.data(), 2, DType::kBF16), 1.5);
  const auto f16 = bf16_bytes({0x3C00, 0xB800});  // 1, -0.5
  EXPECT_EQ(element_as_double(f16.data(), 0, DType::kF16), 1.0);
  EXPECT_EQ(element_as_double(f16.data(), 1, DType::kF16), -0.5);
  const float f32[2] = {0.25f, -3.0f};
  EXPECT_EQ(element_as_double(f32, 1, DType::kF32), -3.0);
  EXPECT_THROW(element_as_double(f32, 0, DType::kI32), Error);
}

TEST(GpuBenchHostData, CountsNonFiniteElements) {
  // +inf, the all-ones poison (NaN), a quiet NaN, 1.0, -inf
  const auto bf16 = bf16_bytes({0x7F80, 0xFFFF, 0x7FC0, 0x3F80, 0xFF80});
  EXPECT_EQ(count_nonfinite(bf16.data(), 5, DType::kBF16), 4);
  const float f32[4] = {1.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                        0.0f};
  EXPECT_EQ(count_nonfinite(f32, 4, DType::kF32), 2);
  uint32_t poison = 0xFFFFFFFFu;
  float poisoned;
  std::memcpy(&poisoned, &poison, 4);
  EXPECT_EQ(count_nonfinite(&poisoned, 1, DType::kF32), 1);
}

TEST(GpuBenchHostData, RelativeL2ErrorAndLimits) {
  const float reference[4] = {1.0f, -2.0f, 3.0f, 4.0f};
  float result[4];
  for (int i = 0; i < 4; ++i) result[i] = reference[i] * 1.001f;
  const Accuracy close = compare_elements(result, reference, 4, DType::kF32);
  EXPECT_NEAR(close.relative_l2, 1e-3, 1e-6);
  EXPECT_EQ(close.mismatched_nonfinite, 0);
  EXPECT_TRUE(close.passes(1e-2));
  EXPECT_FALSE(close.passes(1e-5));
  EXPECT_EQ(compare_elements(reference, reference, 4, DType::kF32).relative_l2, 0.0);

  result[2] = std::numeric_limits<float>::quiet_NaN();
  const Accuracy with_nan = compare_elements(result, reference, 4, DType::kF32);
  EXPECT_EQ(with_nan.mismatched_nonfinite, 1);
  EXPECT_FALSE(with_nan.passes(1.0));

  const float nan_both[1] = {std::numeric_limits<float>::quiet_NaN()};
  EXPECT_FALSE(compare_elements(nan_both, nan_both, 1, DType::kF32).passes(1.0));
  const float inf_both[1] = {std::numeric_limits<float>::infinity()};
  EXPECT_TRUE(compare_elements(inf_both, inf_both, 1, DType::kF32).passes(0.0));

  EXPECT_EQ(relative_l2_limit(DType::kF32), 1e-5);
  EXPECT_EQ(relative_l2_limit(DType::kBF16), 1e-2);
  EXPECT_EQ(relative_l2_limit(DType::kF16), 1e-2);
}

TEST(GpuBenchRowSample, SpreadsRowsWithBothEnds) {
  const auto rows = sample_rows(8192, 64);
  ASSERT_EQ(rows.size(), 64u);
  EXPECT_EQ(rows.front(), 0);
  EXPECT_EQ(rows.back(), 8191);
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_GT(rows[i], rows[i - 1]);
  EXPECT_EQ(sample_rows(10, 64), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(sample_rows(5, 5), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(sample_rows(7, 3), (std::vector<int64_t>{0, 3, 6}));
  EXPECT_EQ(sample_rows(5, 1), (std::vector<int64_t>{0}));
  EXPECT_TRUE(sample_rows(0, 4).empty());
}

TEST(GpuBenchRowSample, GathersRowsInListOrder) {
  const int32_t matrix[6] = {1, 2, 3, 4, 5, 6};  // 3 rows of 2
  const auto gathered = gather_rows(matrix, 2, sizeof(int32_t), {2, 0});
  ASSERT_EQ(gathered.size(), 4 * sizeof(int32_t));
  int32_t values[4];
  std::memcpy(values, gathered.data(), sizeof values);
  EXPECT_EQ(values[0], 5);
  EXPECT_EQ(values[1], 6);
  EXPECT_EQ(values[2], 1);
  EXPECT_EQ(values[3], 2);
}

TEST(GpuBenchRowSample, CanonicalGraphsHaveIndependentRows) {
  for (const testing::CanonicalGraph& canonical : testing::canonical_graphs()) {
    for (DType dtype : {DType::kF32, DType::kBF16}) {
      std::string why;
      EXPECT_TRUE(rows_are_independent(canonical.build(8, 16, dtype), 8, 16, &why))
          << canonical.name << ": " << why;
    }
  }
}

TEST(GpuBenchRowSample, RecognizesGraphsWhoseRowsMix) {
  std::string why;
  {
    Graph g;  // a column sum broadcast back: every row depends on all rows
    ValueId x = build_input(g, "x", DType::kF32, {8, 16});
    ValueId column_sum = build_reduce(g, OpKind::kReduceSum, x, {0}, true);
    build_output(g, "y", build_binary(g, OpKind::kSub, x, column_sum));
    EXPECT_FALSE(rows_are_independent(g, 8, 16, &why));
    EXPECT_NE(why.find("reduce_sum"), std::string::npos) << why;
  }
  {
    Graph g;
    ValueId x = build_input(g, "x", DType::kF32, {16, 16});
    build_output(g, "y", build_permute(g, x, {1, 0}));
    EXPECT_FALSE(rows_are_independent(g, 16, 16, &why));
    EXPECT_NE(why.find("permute"), std::string::npos) << why;
  }
  {
    Graph g;
    ValueId x = build_input(g, "x", DType::kF32, {8, 16});
    build_output(g, "y", build_reduce(g, OpKind::kReduceSum, x, {1}, true));
    EXPECT_FALSE(rows_are_independent(g, 8, 16, &why));
    EXPECT_NE(why.find("output y"), std::string::npos) << why;
  }
  {
    Graph g;
    ValueId x = build_input(g, "x", DType::kF32, {8, 16});
    ValueId w = build_input(g, "w", DType::kF32, {8, 1});
    build_output(g, "y", build_binary(g, OpKind::kMul, x, w));
    EXPECT_FALSE(rows_are_independent(g, 8, 16, &why));
    EXPECT_NE(why.find("input w"), std::string::npos) << why;
  }
}

ContextHandle host_context() {
  fst_context_options* raw = nullptr;
  require_ok(fst_context_options_create(&raw), "fst_context_options_create");
  ContextOptionsHandle options(raw);
  require_ok(fst_context_options_set_backend(options.get(), FST_BACKEND_HOST),
             "fst_context_options_set_backend");
  fst_context* context = nullptr;
  require_ok(fst_context_create(options.get(), &context), "fst_context_create");
  return ContextHandle(context);
}

TEST(GpuBenchReferenceRows, SampledRowsEqualThoseOfTheWholeReference) {
  ContextHandle context = host_context();
  const int64_t rows = 16, cols = 32;
  for (const testing::CanonicalGraph& canonical : testing::canonical_graphs()) {
    for (DType dtype : {DType::kF32, DType::kBF16}) {
      GraphHandle graph = parse_graph_text(context.get(), print_graph(canonical.build(rows, cols, dtype)));
      const std::vector<TensorSpec> inputs = graph_inputs(graph.get());
      std::vector<std::vector<unsigned char>> host;
      for (size_t i = 0; i < inputs.size(); ++i) {
        host.push_back(random_elements(inputs[i].count(), static_cast<DType>(inputs[i].dtype), 11 + i));
      }
      const RowReference whole =
          reference_rows(context.get(), canonical.build, rows, cols, dtype, inputs, host, rows);
      const RowReference sample =
          reference_rows(context.get(), canonical.build, rows, cols, dtype, inputs, host, 5);
      ASSERT_TRUE(whole.ran && sample.ran) << canonical.name;
      EXPECT_TRUE(whole.rows.empty());
      EXPECT_EQ(sample.rows, (std::vector<int64_t>{0, 3, 7, 11, 15}));
      ASSERT_EQ(whole.outputs.size(), sample.outputs.size());
      for (size_t o = 0; o < whole.outputs.size(); ++o) {
        // Each row is computed from the same values in the same order: identical bits.
        EXPECT_EQ(gather_rows(whole.outputs[o].data(), cols, dtype_size(dtype), sample.rows),
                  sample.outputs[o])
            << canonical.name << " " << dtype_name(dtype) << " output " << o;
      }
    }
  }
}

Graph column_centered(int64_t rows, int64_t cols, DType dtype) {
  Graph g;
  ValueId x = build_input(g, "x", dtype, {rows, cols});
  build_output(g, "y", build_binary(g, OpKind::kSub, x, build_reduce(g, OpKind::kReduceMean, x, {0}, true)));
  return g;
}

TEST(GpuBenchReferenceRows, GraphsWhoseRowsMixAreEvaluatedWholeOrNotAtAll) {
  ContextHandle context = host_context();
  GraphHandle graph = parse_graph_text(context.get(), print_graph(column_centered(8, 4, DType::kF32)));
  const std::vector<TensorSpec> inputs = graph_inputs(graph.get());
  const std::vector<float> x = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                                17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
  std::vector<std::vector<unsigned char>> host(1);
  host[0].resize(x.size() * sizeof(float));
  std::memcpy(host[0].data(), x.data(), host[0].size());
  const RowReference whole =
      reference_rows(context.get(), column_centered, 8, 4, DType::kF32, inputs, host, 2);
  ASSERT_TRUE(whole.ran);
  EXPECT_TRUE(whole.rows.empty());  // no sampling: every row depends on all of them
  float y[32];
  ASSERT_EQ(whole.outputs.at(0).size(), sizeof y);
  std::memcpy(y, whole.outputs[0].data(), sizeof y);
  EXPECT_EQ(y[0], 1.0f - 15.0f);  // column 0 holds 1, 5, ..., 29: mean 15
  EXPECT_EQ(y[31], 32.0f - 18.0f);

  const RowReference large =
      reference_rows(context.get(), column_centered, 4096, 2048, DType::kF32, inputs, host, 64);
  EXPECT_FALSE(large.ran);
  EXPECT_NE(large.note.find("not checked"), std::string::npos) << large.note;
}

TEST(GpuBenchJson, WritesNestedValuesWithCommasAndEscapes) {
  JsonWriter json;
  json.begin_object();
  json.key("name").value("a \"quoted\"\nline\\");
  json.key("list").begin_array().value(1).value(2.5).value(true).null().end_array();
  json.key("nan").value(std::nan(""));
  json.key("empty").begin_object().end_object();
  json.key("big").value(uint64_t{18446744073709551615ull});
  json.end_object();
  EXPECT_EQ(json.text(),
            "{\"name\":\"a \\\"quoted\\\"\\nline\\\\\",\"list\":[1,2.5,true,null],\"nan\":null,\"empty\":{},"
            "\"big\":18446744073709551615}");
  EXPECT_EQ(json_quote(std::string(1, '\x01')), "\"\\u0001\"");
}

TEST(GpuBenchResults, ReportsBandwidthAndErrors) {
  CaseResult result;
  result.spec = {"layer_norm", 8, 16, DType::kBF16, {}};
  result.lower_bound_bytes = 2'000'000'000;
  result.timing.median_us = 1000;  // 2 GB in 1 ms
  EXPECT_DOUBLE_EQ(effective_gb_per_s(result), 2000.0);
  RunReport report;
  report.mode = "check";
  report.error = "no CUDA driver: \"libcuda.so.1\" missing";
  report.cases.push_back(result);
  const std::string text = results_json(report);
  EXPECT_NE(text.find("\"tool\":\"fstitch_bench_gpu\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"error\":\"no CUDA driver: \\\"libcuda.so.1\\\" missing\""), std::string::npos)
      << text;
  EXPECT_NE(text.find("\"dtype\":\"bf16\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"effective_gb_per_s\":2000"), std::string::npos) << text;
  EXPECT_NE(text.find("\"device\":null"), std::string::npos) << text;
  EXPECT_NE(text.find("\"overhead\":null"), std::string::npos) << text;
}

TEST(GpuBenchCases, ShapedCasesNameTheirShape) {
  const CaseSpec middle = shaped_case("middle_axis_sum", {64, 4096, 64}, DType::kF32);
  EXPECT_EQ(middle.rows, 64 * 4096);
  EXPECT_EQ(middle.cols, 64);
  EXPECT_EQ(case_label(middle), "middle_axis_sum 64x4096x64 f32");
  EXPECT_EQ(case_label(CaseSpec{"layer_norm", 8, 16, DType::kBF16, {}}), "layer_norm 8x16 bf16");
  EXPECT_TRUE(is_known_graph("bias_grad_column_sum"));
  EXPECT_TRUE(is_known_graph("rms_norm"));
  EXPECT_TRUE(is_known_graph("group_norm"));
  EXPECT_TRUE(is_known_graph("adamw_step"));
  EXPECT_TRUE(is_known_graph("lamb_step"));
  EXPECT_FALSE(is_known_graph("no_such_graph"));
  // An optimizer's dims are its tensor count.
  EXPECT_EQ(case_label(shaped_case("adamw_step", {100}, DType::kF32)), "adamw_step 100 f32");

  CaseResult result;
  result.spec = middle;
  RunReport report;
  report.cases.push_back(result);
  const std::string text = results_json(report);
  EXPECT_NE(text.find("\"rows\":262144,\"cols\":64,\"dims\":[64,4096,64]"), std::string::npos) << text;
}

TEST(GpuBenchCases, ShapedGraphsBuildAtTheirShapesInTheirDtypes) {
  for (const testing::ShapedGraph& graph : shaped_graphs()) {
    ASSERT_FALSE(graph.dtypes.empty()) << graph.name;
    ASSERT_EQ(graph.check_dims.size(), graph.dims.size()) << graph.name;
    for (DType dtype : graph.dtypes) {
      for (const Dims& dims : {graph.dims, graph.check_dims}) {
        const Graph built = graph.build(dims, dtype);
        EXPECT_FALSE(built.outputs().empty()) << graph.name << " " << testing::dims_text(dims);
      }
    }
  }
  for (const testing::ShapedGraph& graph : shaped_graphs()) {
    if (graph.name == "adamw_step" || graph.name == "lamb_step") {
      EXPECT_EQ(graph.build({100}, DType::kF32).inputs().size(), 400u);  // p, g, m and v of each tensor
    }
  }
}

TEST(GpuBenchReferenceRows, ShapedGraphsAreCheckedWholeUpToTheLimit) {
  ContextHandle context = host_context();
  for (const testing::ShapedGraph& reduction : shaped_graphs()) {
    // 64 channels: GroupNorm's 32 groups of two; a BatchNorm of four channels; three tensors
    // of an optimizer.
    const Dims dims = reduction.dims.size() == 2   ? Dims{8, 16}
                      : reduction.dims.size() == 3 ? Dims{2, 64, 4}
                      : reduction.dims.size() == 4 ? Dims{2, 4, 3, 5}
                                                   : Dims{3};
    const CaseSpec spec = shaped_case(reduction.name, dims, DType::kF32);
    const Graph built = reduction.build(dims, DType::kF32);
    std::string why;
    EXPECT_FALSE(rows_are_independent(built, spec.rows, spec.cols, &why)) << reduction.name;
    GraphHandle graph = parse_graph_text(context.get(), print_graph(built));
    const std::vector<TensorSpec> inputs = graph_inputs(graph.get());
    std::vector<std::vector<unsigned char>> host;
    for (size_t i = 0; i < inputs.size(); ++i)
      host.push_back(random_elements(inputs[i].count(), DType::kF32, 3 + i));
    auto build = [&](int64_t, int64_t, DType dtype) { return reduction.build(dims, dtype); };
    const RowReference whole =
        reference_rows(context.get(), build, spec.rows, spec.cols, DType::kF32, inputs, host, 4);
    EXPECT_TRUE(whole.ran) << reduction.name << ": " << whole.note;
    EXPECT_TRUE(whole.rows.empty());
    const RowReference refused =
        reference_rows(context.get(), build, spec.rows, spec.cols, DType::kF32, inputs, host, 4, 10);
    EXPECT_FALSE(refused.ran) << reduction.name;
    EXPECT_NE(refused.note.find("too large"), std::string::npos) << refused.note;
  }
}

TEST(GpuBenchTiming, SummarizesSamples) {
  const Timing odd = summarize({3, 1, 2});
  EXPECT_EQ(odd.runs, 3);
  EXPECT_EQ(odd.median_us, 2);
  EXPECT_EQ(odd.min_us, 1);
  EXPECT_EQ(odd.max_us, 3);
  EXPECT_EQ(summarize({4, 1, 3, 2}).median_us, 2.5);
  EXPECT_EQ(summarize({}).runs, 0);
}

TEST(GpuBenchRuntime, FailsCleanlyWithoutADriver) {
  ::setenv("FSTITCH_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  try {
    GpuRuntime runtime(0);
    ADD_FAILURE() << "a runtime started without a driver";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), StatusCode::kNoDriver);
    EXPECT_NE(std::string(e.what()).find("no CUDA driver"), std::string::npos) << e.what();
  }
  ::unsetenv("FSTITCH_CUDA_DRIVER");
}

}  // namespace
}  // namespace fstitch::bench_gpu
