// User-chosen names in the C API: messages quote them with escapes and cut them short,
// and uniqueness checks stay linear in the number of inputs and outputs.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <string>
#include <vector>

#include "common/capi_handles.hpp"
#include "common/host_context.hpp"
#include "fstitch.h"
#include "support/quote.hpp"

namespace fstitch::testing {
namespace {

GraphHandle new_graph(fst_context* context) {
  fst_graph* graph = nullptr;
  EXPECT_EQ(fst_graph_create(context, &graph), FST_OK);
  return GraphHandle(graph);
}

TEST(QuoteName, EscapesAndCuts) {
  EXPECT_EQ(quote_name("x"), "\"x\"");
  EXPECT_EQ(quote_name("a\nb\t\"c\"\\"), "\"a\\nb\\t\\\"c\\\"\\\\\"");
  EXPECT_EQ(quote_name(std::string("\x01\xff", 2)), "\"\\x01\\xff\"");
  EXPECT_EQ(quote_name(std::string(100, 'n'), 4), "\"nnnn... (100 bytes)\"");
}

// A name with a newline and a megabyte of text: the message stays one short line.
TEST(UserText, BadNamesAreEscapedAndCutInMessages) {
  ContextHandle context = testing::host_backend_context();
  GraphHandle graph = new_graph(context.get());
  const std::string hostile = "evil\nname" + std::string(1 << 20, 'x');
  const int64_t dims[] = {4};
  EXPECT_EQ(fst_input(graph.get(), hostile.c_str(), FST_F32, 1, dims), FST_VALUE_INVALID);
  const std::string message = fst_last_error_message();
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_NE(message.find("evil\\nname"), std::string::npos) << message;
  EXPECT_LT(message.size(), 400u) << message.size();
}

TEST(UserText, LongDuplicateNamesAreCutInMessages) {
  ContextHandle context = testing::host_backend_context();
  GraphHandle graph = new_graph(context.get());
  const std::string name(1 << 20, 'y');
  const int64_t dims[] = {4};
  const fst_value x = fst_input(graph.get(), name.c_str(), FST_F32, 1, dims);
  ASSERT_NE(x, FST_VALUE_INVALID);
  ASSERT_EQ(fst_output(graph.get(), name.c_str(), x), FST_OK);
  EXPECT_NE(fst_output(graph.get(), name.c_str(), x), FST_OK);
  EXPECT_LT(std::string(fst_last_error_message()).size(), 400u);
  EXPECT_EQ(fst_input(graph.get(), name.c_str(), FST_F32, 1, dims), FST_VALUE_INVALID);
  EXPECT_LT(std::string(fst_last_error_message()).size(), 400u);
}

// 100,000 inputs and outputs: a quadratic name check took minutes at this size, a linear one
// well under a second; the generous bound only keeps a regression from hanging the suite.
TEST(UserText, ManyInputsAndOutputsBuildAndParseInLinearTime) {
  constexpr int kCount = 100000;
  ContextHandle context = testing::host_backend_context();
  auto build = std::async(std::launch::async, [&] {
    GraphHandle graph = new_graph(context.get());
    const int64_t dims[] = {2};
    std::string text = "fstitch.graph 1\n";
    for (int i = 0; i < kCount; ++i) {
      const std::string name = "input_" + std::to_string(i);
      const fst_value v = fst_input(graph.get(), name.c_str(), FST_F32, 1, dims);
      if (v == FST_VALUE_INVALID ||
          fst_output(graph.get(), ("output_" + std::to_string(i)).c_str(), v) != FST_OK)
        return std::string("build failed at ") + std::to_string(i) + ": " + fst_last_error_message();
      text += "%" + std::to_string(i) + " = input \"" + name + "\" : f32[2]\n";
      text += "output \"o" + std::to_string(i) + "\" = %" + std::to_string(i) + "\n";
    }
    if (fst_input(graph.get(), "input_77", FST_F32, 1, dims) != FST_VALUE_INVALID)
      return std::string("dup input");
    fst_graph* parsed = nullptr;
    if (fst_graph_parse(context.get(), text.c_str(), text.size(), &parsed) != FST_OK)
      return std::string("parse failed: ") + fst_last_error_message();
    fst_graph_destroy(parsed);
    return std::string();
  });
  ASSERT_EQ(build.wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "building and parsing " << kCount << " inputs took over a minute";
  EXPECT_EQ(build.get(), "");
}

}  // namespace
}  // namespace fstitch::testing
