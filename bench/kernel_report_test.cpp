// Tests of the static kernel report's pieces: occupancy and waves, finding and running the
// disassembler, the JSON reader and the measured times of a results file. The SASS parser's
// tests are in sass_summary_test.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/canonical_graphs.hpp"
#include "disassembler.hpp"
#include "json_reader.hpp"
#include "launch_estimate.hpp"
#include "measured_times.hpp"
#include "occupancy.hpp"
#include "plan/arch.hpp"
#include "plan/cost_model.hpp"
#include "plan/launch_grid.hpp"

namespace fstitch::bench {
namespace {

SmLimits h100() {
  return sm_limits(*arch_params(90));
}

// The launch the report shows: at the planned occupancy and estimated registers it is the
// plan itself; at the compiled kernel's higher occupancy, one wave of it (here more blocks
// than planned), estimated with the same formulas.
TEST(LaunchEstimate, IsThePlanAtThePlannedOccupancyAndAWaveAtTheRealOne) {
  const Graph g = testing::softmax_scale_mask(8192, 4096, DType::kBF16);
  FusionOptions options;
  options.target_sm = 90;
  const FusionPlan plan = plan_fusion(g, options);
  const ArchParams arch = *arch_params(90);
  for (const PlannedKernel& k : plan.kernels) {
    const KernelSpec& s = k.spec;
    const LaunchEstimate same = estimate_launch(arch, g, k, s.registers_estimate, s.planned_blocks_per_sm);
    EXPECT_EQ(same.grid, s.grid_blocks);
    EXPECT_DOUBLE_EQ(same.est_seconds, s.est_seconds);
    // 34 registers, as ptxas compiles this kernel: more blocks fit than the estimate allowed.
    const int real = occupancy(sm_limits(arch), s.block_threads, 34, 0).blocks_per_sm;
    ASSERT_GT(real, s.planned_blocks_per_sm);
    const LaunchEstimate launched = estimate_launch(arch, g, k, 34, real);
    EXPECT_EQ(launched.grid, grid_for_occupancy(s, real, arch.sm_count));
    EXPECT_GT(launched.grid, s.grid_blocks);
    KernelSpec by_hand = s;
    by_hand.registers_estimate = 34;
    by_hand.grid_blocks = launched.grid;
    EXPECT_DOUBLE_EQ(launched.est_seconds,
                     estimate_kernel_at_occupancy(arch, g, by_hand, real).total_seconds);
    // Not one block fits: the plan stays.
    const LaunchEstimate none = estimate_launch(arch, g, k, 300, 0);
    EXPECT_EQ(none.grid, s.grid_blocks);
    EXPECT_DOUBLE_EQ(none.est_seconds, s.est_seconds);
  }
}

TEST(Occupancy, ThreadsLimitSmallKernels) {
  const Occupancy o = occupancy(h100(), 256, 32, 0);
  EXPECT_EQ(o.blocks_per_sm, 8);  // 2048 threads / 256
  EXPECT_EQ(o.limiter, "threads");
  EXPECT_DOUBLE_EQ(o.warp_occupancy, 1.0);
}

TEST(Occupancy, RegistersAreAllocatedPerWarpInUnitsOf256) {
  // 72 registers: 2304 per warp, 28 warps fit in 65536, so 3 blocks of 8 warps.
  const Occupancy o = occupancy(h100(), 256, 72, 0);
  EXPECT_EQ(o.blocks_per_sm, 3);
  EXPECT_EQ(o.limiter, "registers");
  EXPECT_DOUBLE_EQ(o.warp_occupancy, 24.0 / 64.0);
  // 33 registers round up to 1280 per warp as 40 do: 51 warps, 6 blocks of 8.
  EXPECT_EQ(occupancy(h100(), 256, 33, 0).blocks_per_sm, 6);
  EXPECT_EQ(occupancy(h100(), 256, 40, 0).blocks_per_sm, 6);
}

TEST(Occupancy, SharedMemoryCountsTheReservedKilobytePerBlock) {
  // 228 KiB per SM; 56 KiB + 1 KiB reserved per block: 4 blocks.
  const Occupancy o = occupancy(h100(), 128, 16, 56 * 1024);
  EXPECT_EQ(o.blocks_per_sm, 4);
  EXPECT_EQ(o.limiter, "shared");
  const Occupancy a100 = occupancy(sm_limits(*arch_params(80)), 128, 16, 56 * 1024);
  EXPECT_EQ(a100.blocks_per_sm, 2);  // 164 KiB per SM
}

TEST(Occupancy, TinyBlocksHitTheBlockLimit) {
  const Occupancy o = occupancy(h100(), 32, 16, 0);
  EXPECT_EQ(o.blocks_per_sm, 32);
  EXPECT_EQ(o.limiter, "blocks");
  EXPECT_DOUBLE_EQ(o.warp_occupancy, 0.5);
}

TEST(Occupancy, AKernelThatCannotFitSaysSo) {
  const Occupancy o = occupancy(h100(), 1024, 16, 300 * 1024);
  EXPECT_EQ(o.blocks_per_sm, 0);
  EXPECT_EQ(o.limiter, "none fit (shared)");
  EXPECT_EQ(occupancy(h100(), 0, 16, 0).blocks_per_sm, 0);
}

TEST(Waves, WholeAndPartialWaves) {
  const Waves whole = waves(132 * 8 * 2, 132, 8);
  EXPECT_DOUBLE_EQ(whole.waves, 2.0);
  EXPECT_DOUBLE_EQ(whole.last_wave, 1.0);
  const Waves partial = waves(132 * 8 + 264, 132, 8);
  EXPECT_DOUBLE_EQ(partial.waves, 1.25);
  EXPECT_DOUBLE_EQ(partial.last_wave, 0.25);
  EXPECT_DOUBLE_EQ(waves(100, 132, 0).waves, 0.0);
}

// A folder with a stand-in disassembler: a script that prints its arguments and the size of
// the file it is given, or fails when that file holds "bad".
class StandInDisassembler : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("fstitch-disasm-test-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    write_script("nvdisasm");
    write_script("cuobjdump");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void write_script(const std::string& name) {
    const std::filesystem::path path = dir_ / name;
    std::ofstream(path) << "#!/bin/sh\n"
                           "if [ \"$1\" = --version ]; then echo 'Cuda compilation tools, release 99.1, "
                           "V99.1.0'; exit 0; fi\n"
                           "last=\"\"; for a in \"$@\"; do last=$a; done\n"
                           "if grep -q bad \"$last\"; then echo 'cannot read the ELF' >&2; exit 3; fi\n"
                           "echo \"$(basename \"$0\") $1 $(wc -c <\"$last\") bytes\"\n";
    chmod(path.c_str(), 0755);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

TEST_F(StandInDisassembler, RunsTheToolOnTheCubin) {
  std::string why;
  const std::optional<Disassembler> nvdisasm = Disassembler::find(path("nvdisasm"), &why);
  ASSERT_TRUE(nvdisasm) << why;
  EXPECT_EQ(nvdisasm->kind(), "nvdisasm");
  EXPECT_EQ(nvdisasm->version(), "Cuda compilation tools, release 99.1, V99.1.0");
  EXPECT_EQ(nvdisasm->disassemble({1, 2, 3, 4, 5}), "nvdisasm -c 5 bytes\n");
  const std::optional<Disassembler> cuobjdump = Disassembler::find(path("cuobjdump"), &why);
  ASSERT_TRUE(cuobjdump) << why;
  EXPECT_EQ(cuobjdump->kind(), "cuobjdump");
  EXPECT_EQ(cuobjdump->disassemble({1, 2}), "cuobjdump -sass 2 bytes\n");
}

TEST_F(StandInDisassembler, AFailingToolThrowsWithItsOutput) {
  std::string why;
  const std::optional<Disassembler> nvdisasm = Disassembler::find(path("nvdisasm"), &why);
  ASSERT_TRUE(nvdisasm) << why;
  const std::vector<uint8_t> bad = {'b', 'a', 'd'};
  try {
    nvdisasm->disassemble(bad);
    ADD_FAILURE() << "a failing disassembler did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("exit status 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cannot read the ELF"), std::string::npos) << e.what();
  }
}

TEST_F(StandInDisassembler, FindsTheToolOnPathOrSaysWhatItTried) {
  const char* old_path = std::getenv("PATH");
  const std::string saved = old_path == nullptr ? "" : old_path;
  ::unsetenv("FSTITCH_NVDISASM");
  ::setenv("PATH", dir_.c_str(), 1);
  std::string why;
  const std::optional<Disassembler> found = Disassembler::find("", &why);
  ::setenv("PATH", (dir_ / "empty").c_str(), 1);
  const std::optional<Disassembler> none_on_path = Disassembler::find("", &why);
  ::setenv("PATH", saved.c_str(), 1);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->path(), path("nvdisasm"));
  EXPECT_FALSE(none_on_path);
  EXPECT_NE(why.find("nvdisasm on PATH (not found)"), std::string::npos) << why;

  EXPECT_FALSE(Disassembler::find(path("missing"), &why));
  EXPECT_NE(why.find("--disassembler " + path("missing") + " (not executable)"), std::string::npos) << why;
  EXPECT_FALSE(Disassembler::find("none", &why));
  EXPECT_EQ(why, "none found");
}

TEST(JsonReader, ReadsTheValuesOfAResultsFile) {
  const JsonValue v = parse_json(R"({"a": [1, -2.5e3, true, null], "s": "x\"\u00e9\n", "o": {}})");
  ASSERT_EQ(v.type, JsonValue::Type::kObject);
  const JsonValue* a = v.get("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->items.size(), 4u);
  EXPECT_DOUBLE_EQ(a->items[1].number, -2500.0);
  EXPECT_TRUE(a->items[2].boolean);
  EXPECT_EQ(a->items[3].type, JsonValue::Type::kNull);
  EXPECT_EQ(v.get("s")->string, "x\"\xc3\xa9\n");
  EXPECT_EQ(v.get("o")->type, JsonValue::Type::kObject);
  EXPECT_EQ(v.get("missing"), nullptr);
}

TEST(JsonReader, RejectsBrokenText) {
  EXPECT_THROW(parse_json("{\"a\": }"), std::runtime_error);
  EXPECT_THROW(parse_json("[1, 2"), std::runtime_error);
  EXPECT_THROW(parse_json("{} x"), std::runtime_error);
  EXPECT_THROW(parse_json("\"open"), std::runtime_error);
  EXPECT_THROW(parse_json(std::string(100, '[')), std::runtime_error);
}

TEST(MeasuredTimes, KeysCasesByGraphShapeAndDtype) {
  const MeasuredRun run = parse_measured(R"({
    "mode": "full", "error": null,
    "device": {"name": "NVIDIA H200"},
    "copy": {"gb_per_s": 4000.5},
    "cases": [
      {"graph": "layer_norm", "rows": 8192, "cols": 4096, "dtype": "bf16", "ok": true, "kernels": 1,
       "timing": {"runs": 50, "median_us": 41.5}},
      {"graph": "middle_axis_sum", "rows": 262144, "cols": 64, "dims": [64, 4096, 64], "dtype": "f32",
       "ok": false, "kernels": 1, "timing": {"runs": 50, "median_us": 30}},
      {"graph": "softmax_scale_mask", "rows": 8192, "cols": 4096, "dtype": "f32", "ok": false,
       "error": "boom", "timing": {"runs": 0, "median_us": 0}}
    ]})");
  ASSERT_TRUE(run.loaded) << run.error;
  EXPECT_EQ(run.device, "NVIDIA H200");
  EXPECT_DOUBLE_EQ(run.copy_gb_per_s, 4000.5);
  ASSERT_EQ(run.cases.size(), 2u);  // the untimed case is left out
  const MeasuredCase& ln = run.cases.at(measured_key("layer_norm", "8192x4096", "bf16"));
  EXPECT_DOUBLE_EQ(ln.median_us, 41.5);
  EXPECT_TRUE(ln.ok);
  EXPECT_EQ(ln.kernels, 1);
  EXPECT_FALSE(run.cases.at(measured_key("middle_axis_sum", "64x4096x64", "f32")).ok);
}

// The report plans the sm_90 kernels for the GPU a measured run names, so its estimates
// are of the device the times come from.
TEST(MeasuredTimes, AGpuNameNamesItsDeviceModel) {
  EXPECT_EQ(device_model_of("NVIDIA H200"), "h200");
  EXPECT_EQ(device_model_of("NVIDIA H100 80GB HBM3"), "h100");
  EXPECT_EQ(device_model_of("NVIDIA A100-SXM4-80GB"), "a100");
  EXPECT_EQ(device_model_of("nvidia h200 nvl"), "h200");
  EXPECT_EQ(device_model_of("NVIDIA GeForce RTX 4090"), "");
  EXPECT_EQ(device_model_of(""), "");
  for (const char* name : {"NVIDIA H200", "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"})
    EXPECT_TRUE(arch_params_for_device(device_model_of(name)).has_value()) << name;
}

TEST(MeasuredTimes, ABrokenOrEmptyRunIsReportedNotThrown) {
  EXPECT_FALSE(parse_measured("not json").loaded);
  const MeasuredRun no_gpu = parse_measured(R"({"error": "no CUDA driver: x", "cases": []})");
  EXPECT_FALSE(no_gpu.loaded);
  EXPECT_NE(no_gpu.error.find("no CUDA driver"), std::string::npos);
  EXPECT_FALSE(parse_measured(R"({"cases": [{"rows": 1}]})").loaded);
  const MeasuredRun missing = read_measured("/nonexistent/bench.json");
  EXPECT_FALSE(missing.loaded);
  EXPECT_NE(missing.error.find("cannot read"), std::string::npos);
}

}  // namespace
}  // namespace fstitch::bench
