// Fuzz target for the graph text parser (docs/text-format.md), through the C++ entry
// parse_graph and the C API fst_graph_parse, which must agree. Text that does not parse
// gives a clean status and a "line L, column C: " message. Text that parses must print,
// parse back and print again identically; the graph is verified, and when it is small it
// is evaluated by the reference evaluator before and after the round trip with identical
// results, and fused with a policy chosen from the input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "contract.hpp"
#include "fstitch.h"
#include "fuzz_environment.hpp"
#include "graph_checks.hpp"
#include "ir/text.hpp"
#include "support/error.hpp"

namespace fstitch::fuzz {
namespace {

fst_context* host_context() {
  static fst_context* context = [] {
    fst_context_options* options = nullptr;
    fst_context_options_create(&options);
    fst_context_options_set_backend(options, FST_BACKEND_HOST);
    fst_context* created = nullptr;
    if (fst_context_create(options, &created) != FST_OK) violation("cannot create a host context");
    fst_context_options_destroy(options);
    return created;
  }();
  return context;
}

// What parsing a text gave: a status and, on failure, the message.
struct ParseResult {
  fst_status status = FST_OK;
  std::string message;
  std::string printed;  // print_graph of the result, on success
};

bool is_parse_failure_status(StatusCode code) {
  return code == StatusCode::kParse || code == StatusCode::kShape || code == StatusCode::kDtype ||
         code == StatusCode::kInvalidArgument || code == StatusCode::kUnsupported;
}

// "line L, column C: " with L in 1..lines and C at least 1, then some explanation.
void check_position_prefix(const std::string& message, size_t lines) {
  unsigned long long line = 0;
  unsigned long long column = 0;
  int consumed = 0;
  if (std::sscanf(message.c_str(), "line %llu, column %llu: %n", &line, &column, &consumed) != 2 ||
      consumed == 0 || line < 1 || line > lines || column < 1 ||
      static_cast<size_t>(consumed) >= message.size()) {
    violation("parse error message without a valid \"line L, column C: \" position (" +
              std::to_string(lines) + " lines): \"" + message + "\"");
  }
}

ParseResult parse_with_cpp(std::string_view text) {
  ParseResult result;
  try {
    result.printed = print_graph(parse_graph(text));
  } catch (const Error& e) {
    if (!is_parse_failure_status(e.code())) {
      violation("parse_graph threw status " + std::to_string(static_cast<int>(e.code())) + ": " + e.what());
    }
    result.status = static_cast<fst_status>(e.code());
    result.message = e.what();
  } catch (const std::exception& e) {
    violation(std::string("parse_graph threw a non-fstitch exception: ") + e.what());
  }
  return result;
}

void check_c_parse_agrees(const ParseResult& cpp, fst_status status, fst_graph* graph, fst_graph* sentinel) {
  if (status != cpp.status) {
    violation(std::string("fst_graph_parse returned ") + fst_status_string(status) + " but parse_graph " +
              fst_status_string(cpp.status) + " (" + cpp.message + ")");
  }
  if (status == FST_OK) return;
  check_failure("fst_graph_parse", status);
  check_untouched("fst_graph_parse", "out_graph", graph, sentinel);
  if (fst_last_error_message() != "fst_graph_parse: " + cpp.message) {
    violation("fst_graph_parse says \"" + std::string(fst_last_error_message()) + "\" but parse_graph \"" +
              cpp.message + "\"");
  }
}

void check_parsed_graph(const uint8_t* data, size_t size, const ParseResult& cpp, fst_graph* graph) {
  GraphPtr owned(graph);
  GraphPtr reparsed = check_print_round_trip(host_context(), graph);
  char* text = nullptr;
  check_status("fst_graph_print", fst_graph_print(graph, &text), Expectation::succeed());
  if (cpp.printed != text) violation("fst_graph_print and print_graph differ on one parse");
  fst_string_free(text);

  const fst_status verified = fst_graph_verify(graph);
  if (verified != FST_OK) check_failure("fst_graph_verify", verified);
  const fst_status reverified = fst_graph_verify(reparsed.get());
  if (reverified != verified) {
    violation(std::string("fst_graph_verify gives ") + fst_status_string(verified) + " before and " +
              fst_status_string(reverified) + " after the print round trip");
  }
  if (verified != FST_OK) return;

  if (cheap_to_evaluate(graph)) {
    if (evaluate_on_fixed_inputs(graph) != evaluate_on_fixed_inputs(reparsed.get())) {
      violation("the reference evaluator gives different outputs before and after the print round trip");
    }
  }
  fst_fuse_options* options = nullptr;
  check_status("fst_fuse_options_create", fst_fuse_options_create(&options), Expectation::succeed());
  const auto policy = static_cast<fst_fusion_policy>(size > 0 ? data[size / 2] % 3 : 0);
  check_status("fst_fuse_options_set_policy", fst_fuse_options_set_policy(options, policy),
               Expectation::succeed());
  fst_fusion* fusion = nullptr;
  const Expectation expect = fuse_expectation(graph);
  const fst_status fused = fst_fuse(graph, options, &fusion);
  fst_fuse_options_destroy(options);
  if (expect.kind == Expectation::Kind::kUnknown && fused != FST_OK) {
    check_status("fst_fuse", fused, Expectation::fail({FST_ERROR_OUT_OF_MEMORY}));
    return;
  }
  check_status("fst_fuse", fused, expect);
  size_t inputs = 0;
  size_t outputs = 0;
  fst_graph_input_count(graph, &inputs);
  fst_graph_output_count(graph, &outputs);
  check_fusion_queries(fusion, inputs, outputs);
  fst_fusion_destroy(fusion);
}

}  // namespace
}  // namespace fstitch::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fstitch::fuzz::set_fuzz_environment();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fstitch::fuzz;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const ParseResult cpp = parse_with_cpp(text);
  if (cpp.status != FST_OK) {
    size_t lines = 1;
    for (char c : text) lines += c == '\n';
    check_position_prefix(cpp.message, lines);
  }

  fst_graph* const sentinel = reinterpret_cast<fst_graph*>(0x1);
  fst_graph* graph = sentinel;
  const fst_status status = fst_graph_parse(host_context(), text.data(), text.size(), &graph);
  check_c_parse_agrees(cpp, status, graph, sentinel);

  // A NUL-terminated copy read with length (size_t)-1 parses the same, when it has no NUL.
  if (std::memchr(data, 0, size) == nullptr) {
    const std::string terminated(text);
    fst_graph* again = sentinel;
    const fst_status status_again =
        fst_graph_parse(host_context(), terminated.c_str(), static_cast<size_t>(-1), &again);
    check_c_parse_agrees(cpp, status_again, again, sentinel);
    if (status_again == FST_OK) fst_graph_destroy(again);
  }
  if (status == FST_OK) check_parsed_graph(data, size, cpp, graph);
  return 0;
}
