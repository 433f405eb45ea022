// Constants in generated kernels, end to end through the C API on the host backend and
// through NVRTC: decimal text that means the same in every process locale, NaNs that keep
// their sign, and casts of infinities that compile.
#include <gtest/gtest.h>

#include <clocale>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <locale>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <unistd.h>

#include "common/backend_run.hpp"
#include "common/capi_handles.hpp"
#include "fstitch.h"

namespace fstitch::testing {
namespace {

namespace fs = std::filesystem;

ContextHandle host_context() {
  ContextOptionsHandle options;
  fst_context_options* raw_options = nullptr;
  EXPECT_EQ(fst_context_options_create(&raw_options), FST_OK);
  options.reset(raw_options);
  fst_context_options_set_backend(options.get(), FST_BACKEND_HOST);
  fst_context* context = nullptr;
  EXPECT_EQ(fst_context_create(options.get(), &context), FST_OK) << fst_last_error_message();
  return ContextHandle(context);
}

GraphHandle parse(fst_context* context, const std::string& text) {
  fst_graph* graph = nullptr;
  EXPECT_EQ(fst_graph_parse(context, text.c_str(), text.size(), &graph), FST_OK) << fst_last_error_message();
  return GraphHandle(graph);
}

FusionHandle fuse(fst_graph* graph) {
  fst_fusion* fusion = nullptr;
  EXPECT_EQ(fst_fuse(graph, nullptr, &fusion), FST_OK) << fst_last_error_message();
  return FusionHandle(fusion);
}

std::string all_sources(const fst_fusion* fusion) {
  size_t count = 0;
  EXPECT_EQ(fst_fusion_kernel_count(fusion, &count), FST_OK);
  std::string text;
  for (size_t i = 0; i < count; ++i) {
    const fst_kernel* kernel = nullptr;
    const char* source = nullptr;
    EXPECT_EQ(fst_fusion_kernel(fusion, i, &kernel), FST_OK);
    EXPECT_EQ(fst_kernel_source(kernel, &source), FST_OK);
    text += source;
  }
  return text;
}

// Every kernel's PTX from NVRTC (sm_90, the default target without a device), or nothing
// when NVRTC is missing on this machine.
std::optional<std::string> all_ptx(const fst_fusion* fusion) {
  size_t count = 0;
  EXPECT_EQ(fst_fusion_kernel_count(fusion, &count), FST_OK);
  std::string text;
  for (size_t i = 0; i < count; ++i) {
    const fst_kernel* kernel = nullptr;
    const char* ptx = nullptr;
    EXPECT_EQ(fst_fusion_kernel(fusion, i, &kernel), FST_OK);
    const fst_status status = fst_kernel_ptx(kernel, &ptx);
    if (status == FST_ERROR_NO_COMPILER) return std::nullopt;
    EXPECT_EQ(status, FST_OK) << fst_last_error_message();
    if (status != FST_OK) return std::nullopt;
    text += ptx;
  }
  return text;
}

uint32_t float_bits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

// The process locale switched to one whose decimal separator is a comma for the guard's
// lifetime, through both setlocale and the global C++ locale (what a framework that calls
// setlocale(LC_ALL, "") or std::locale::global(std::locale("")) gets). An installed one
// is used when there is one; otherwise one is compiled with localedef into a private folder
// found through LOCPATH.
class DecimalCommaLocale {
 public:
  DecimalCommaLocale() : previous_(std::locale()) {
    for (const char* name : {"de_DE.UTF-8", "fr_FR.UTF-8", "pt_BR.UTF-8", "ru_RU.UTF-8"}) {
      if (activate(name)) return;
    }
    const fs::path folder = fs::temp_directory_path() / ("fstitch-locale-" + std::to_string(getpid()));
    fs::create_directories(folder);
    const std::string command =
        "localedef -i de_DE -f UTF-8 '" + (folder / "de_DE.UTF-8").string() + "' >/dev/null 2>&1";
    if (std::system(command.c_str()) == 0) {
      setenv("LOCPATH", folder.c_str(), 1);
      if (activate("de_DE.UTF-8")) {
        folder_ = folder;
        return;
      }
    }
    fs::remove_all(folder);
  }
  ~DecimalCommaLocale() {
    std::locale::global(previous_);
    std::setlocale(LC_ALL, "C");
    if (!folder_.empty()) {
      unsetenv("LOCPATH");
      std::error_code ignored;
      fs::remove_all(folder_, ignored);
    }
  }
  bool active() const { return !name_.empty(); }
  const std::string& name() const { return name_; }

 private:
  bool activate(const char* name) {
    try {
      std::locale::global(std::locale(name));
    } catch (const std::runtime_error&) {
      return false;
    }
    std::setlocale(LC_ALL, name);
    if (std::strcmp(std::localeconv()->decimal_point, ",") != 0) return false;
    name_ = name;
    return true;
  }

  std::locale previous_;
  std::string name_;
  fs::path folder_;
};

// x * 0.25 + 1.5, a double scaled and cast to i64 (fst_f2i bounds are decimal text too),
// and an integer large enough to be grouped by a locale that groups digits.
constexpr const char* kScaledGraph = R"(fstitch.graph 1
%0 = input "x" : f32[4,8]
%1 = constant 0.25 : f32
%2 = broadcast %1 : f32[4,8]
%3 = mul %0, %2 : f32[4,8]
%4 = constant 1.5 : f32
%5 = broadcast %4 : f32[4,8]
%6 = add %3, %5 : f32[4,8]
%7 = cast %0 : f64[4,8]
%8 = constant 1234567.5 : f64
%9 = broadcast %8 : f64[4,8]
%10 = mul %7, %9 : f64[4,8]
%11 = cast %10 : i64[4,8]
%12 = input "n" : i32[4,8]
%13 = constant 1234567 : i32
%14 = broadcast %13 : i32[4,8]
%15 = add %12, %14 : i32[4,8]
output "y" = %6
output "k" = %11
output "m" = %15
)";

TEST(GeneratedConstants, MeanTheSameUnderADecimalCommaLocale) {
  DecimalCommaLocale locale;
  ASSERT_TRUE(locale.active()) << "no decimal-comma locale is installed and localedef could not build one "
                                  "(tools/install-deps installs Debian's locales package)";
  ContextHandle context = host_context();
  GraphHandle graph = parse(context.get(), kScaledGraph);
  FusionHandle fusion = fuse(graph.get());
  ASSERT_TRUE(fusion) << fst_last_error_message();

  const std::string source = all_sources(fusion.get());
  EXPECT_NE(source.find("(0.25f)"), std::string::npos) << source;
  EXPECT_NE(source.find("(1234567.5)"), std::string::npos) << source;
  EXPECT_NE(source.find("1234567"), std::string::npos) << source;
  EXPECT_FALSE(std::regex_search(source, std::regex("[0-9],[0-9]"))) << "a decimal comma in:\n" << source;

  char* dump = nullptr;
  ASSERT_EQ(fst_fusion_dump(fusion.get(), &dump), FST_OK);
  const std::string dump_text = dump;
  fst_string_free(dump);
  EXPECT_TRUE(std::regex_search(dump_text, std::regex("estimated time [0-9]+\\.[0-9][0-9] us"))) << dump_text;

  // NVRTC reads the same text: 0.25f is 0f3E800000 in PTX, 1.5f is 0f3FC00000.
  if (const std::optional<std::string> ptx = all_ptx(fusion.get())) {
    EXPECT_NE(ptx->find("0f3E800000"), std::string::npos) << *ptx;
    EXPECT_NE(ptx->find("0f3FC00000"), std::string::npos) << *ptx;
  }

  std::vector<float> x(32), y(32, -1.0f), y_ref(32);
  std::vector<int32_t> n(32), m(32), m_ref(32);
  std::vector<int64_t> k(32), k_ref(32);
  for (int i = 0; i < 32; ++i) {
    x[i] = 0.5f * static_cast<float>(i) - 7.25f;
    n[i] = 1000 * i - 9000;
  }
  ASSERT_EQ(run_on_backend(fusion.get(), {{x.data(), 128}, {n.data(), 128}},
                           {{y.data(), 128}, {k.data(), 256}, {m.data(), 128}}),
            FST_OK)
      << fst_last_error_message();
  const void* inputs[] = {x.data(), n.data()};
  void* reference[] = {y_ref.data(), k_ref.data(), m_ref.data()};
  ASSERT_EQ(fst_graph_evaluate_reference(graph.get(), inputs, 2, reference, 3), FST_OK);
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(y[i], y_ref[i]) << i;
    EXPECT_EQ(y[i], x[i] * 0.25f + 1.5f) << i;
    EXPECT_EQ(k[i], k_ref[i]) << i;
    EXPECT_EQ(m[i], n[i] + 1234567) << i;
  }
}

// A -nan constant keeps its sign bit in every float dtype, as the reference evaluator does.
TEST(GeneratedConstants, NegativeNanKeepsItsSign) {
  ContextHandle context = host_context();
  for (const char* dtype : {"f32", "f64", "f16", "bf16"}) {
    SCOPED_TRACE(dtype);
    const std::string t = dtype;
    const std::string text = "fstitch.graph 1\n%0 = input \"x\" : " + t + "[2,4]\n%1 = constant -nan : " + t +
                             "\n%2 = broadcast %1 : " + t + "[2,4]\n%3 = constant nan : " + t +
                             "\n%4 = broadcast %3 : " + t + "[2,4]\n%5 = gt %0, %0 : bool[2,4]\n" +
                             "%6 = select %5, %0, %2 : " + t + "[2,4]\n%7 = select %5, %0, %4 : " + t +
                             "[2,4]\noutput \"negative\" = %6\noutput \"positive\" = %7\n";
    GraphHandle graph = parse(context.get(), text);
    FusionHandle fusion = fuse(graph.get());
    ASSERT_TRUE(fusion) << fst_last_error_message();
    const size_t element = t == "f64" ? 8 : t == "f32" ? 4 : 2;
    std::vector<unsigned char> x(8 * element, 0x11), negative(8 * element, 0), positive(8 * element, 0);
    std::vector<unsigned char> negative_ref(8 * element), positive_ref(8 * element);
    ASSERT_EQ(run_on_backend(fusion.get(), {{x.data(), x.size()}},
                             {{negative.data(), negative.size()}, {positive.data(), positive.size()}}),
              FST_OK)
        << fst_last_error_message();
    const void* inputs[] = {x.data()};
    void* reference[] = {negative_ref.data(), positive_ref.data()};
    ASSERT_EQ(fst_graph_evaluate_reference(graph.get(), inputs, 1, reference, 2), FST_OK);
    EXPECT_EQ(negative, negative_ref);
    EXPECT_EQ(positive, positive_ref);
    // The sign bit is the top bit of the last (little-endian) byte of each element.
    for (size_t i = 0; i < 8; ++i) {
      EXPECT_EQ(negative[i * element + element - 1] & 0x80, 0x80) << i;
      EXPECT_EQ(positive[i * element + element - 1] & 0x80, 0x00) << i;
    }
  }
  EXPECT_EQ(float_bits(-std::numeric_limits<float>::quiet_NaN()), 0xffc00000u);
}

// Casting an infinite f64 constant to i64 saturates, and its code compiles on the host and
// with NVRTC (a fixed-size format buffer once cut the call off).
TEST(GeneratedConstants, InfiniteConstantsCastToEveryIntegerType) {
  ContextHandle context = host_context();
  for (const char* dtype : {"i64", "i32", "i8", "u8"}) {
    SCOPED_TRACE(dtype);
    const std::string t = dtype;
    const std::string text =
        "fstitch.graph 1\n%0 = input \"x\" : " + t + "[4]\n%1 = constant -inf : f64\n%2 = cast %1 : " + t +
        "\n%3 = broadcast %2 : " + t + "[4]\n%4 = add %0, %3 : " + t + "[4]\n%5 = constant inf : f64\n" +
        "%6 = cast %5 : " + t + "\n%7 = broadcast %6 : " + t + "[4]\n%8 = sub %0, %7 : " + t +
        "[4]\noutput \"low\" = %4\noutput \"high\" = %8\n";
    GraphHandle graph = parse(context.get(), text);
    FusionHandle fusion = fuse(graph.get());
    ASSERT_TRUE(fusion) << fst_last_error_message();
    (void)all_ptx(fusion.get());
    const size_t element = t == "i64" ? 8 : t == "i32" ? 4 : 1;
    std::vector<unsigned char> x(4 * element, 0), low(4 * element, 0xee), high(4 * element, 0xee);
    std::vector<unsigned char> low_ref(4 * element), high_ref(4 * element);
    ASSERT_EQ(run_on_backend(fusion.get(), {{x.data(), x.size()}},
                             {{low.data(), low.size()}, {high.data(), high.size()}}),
              FST_OK)
        << fst_last_error_message();
    const void* inputs[] = {x.data()};
    void* reference[] = {low_ref.data(), high_ref.data()};
    ASSERT_EQ(fst_graph_evaluate_reference(graph.get(), inputs, 1, reference, 2), FST_OK);
    EXPECT_EQ(low, low_ref);
    EXPECT_EQ(high, high_ref);
  }
}

}  // namespace
}  // namespace fstitch::testing
