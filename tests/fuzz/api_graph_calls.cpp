// The graph-level calls of ApiProgram: lifetime, queries, verify, print, parse, evaluate.
#include <algorithm>
#include <cstring>
#include <set>

#include "api_program.hpp"
#include "graph_checks.hpp"

namespace fstitch::fuzz {

void ApiProgram::create_graph(int slot) {
  GraphSlot& g = graphs_[static_cast<size_t>(slot)];
  if (g.graph != nullptr) destroy_graph(slot);
  fst_context* context = pick_context_or_null();
  fst_graph* const sentinel = reinterpret_cast<fst_graph*>(0x1);
  fst_graph* graph = sentinel;
  clear_last_error();
  if (in_.chance(4)) {
    check_status("fst_graph_create", fst_graph_create(context, nullptr),
                 Expectation::fail({FST_ERROR_INVALID_ARGUMENT}));
    return;
  }
  const fst_status status = fst_graph_create(context, &graph);
  check_status("fst_graph_create", status,
               context == nullptr ? Expectation::fail({FST_ERROR_INVALID_ARGUMENT}) : Expectation::succeed());
  if (status != FST_OK) {
    check_untouched("fst_graph_create", "out_graph", graph, sentinel);
    return;
  }
  g = GraphSlot{};
  g.graph = graph;
}

void ApiProgram::destroy_graph(int slot) {
  GraphSlot& g = graphs_[static_cast<size_t>(slot)];
  if (g.graph == nullptr) return;
  for (const KnownValue& v : g.values) {
    if (destroyed_values_.size() < 64) destroyed_values_.push_back(v.value);
  }
  for (FusionSlot& f : fusions_) {
    if (f.graph_slot == slot) f.graph_slot = -1;
  }
  fst_graph_destroy(g.graph);
  g = GraphSlot{};
}

void ApiProgram::query_value(int slot) {
  const GraphSlot& g = graphs_[static_cast<size_t>(slot)];
  const PickedValue v = pick_value(slot);
  Expectation expect;
  expect_operand(expect, v);
  const bool null_graph = in_.chance(8);
  if (null_graph) expect = Expectation::fail({FST_ERROR_INVALID_ARGUMENT});
  const fst_graph* graph = null_graph ? nullptr : g.graph;

  const fst_dtype dtype_sentinel = static_cast<fst_dtype>(0x5a5a);
  fst_dtype dtype = dtype_sentinel;
  clear_last_error();
  fst_status status = fst_value_dtype(graph, v.value, &dtype);
  check_status("fst_value_dtype", status, expect);
  if (status != FST_OK)
    check_untouched("fst_value_dtype", "out_dtype", dtype, dtype_sentinel);
  else if (v.origin == ValueOrigin::kThisGraph && dtype != v.type.dtype)
    violation("fst_value_dtype disagrees with the dtype the value was built with");

  size_t rank = 0x5a5a;
  clear_last_error();
  status = fst_value_rank(graph, v.value, &rank);
  check_status("fst_value_rank", status, expect);
  if (status != FST_OK) check_untouched("fst_value_rank", "out_rank", rank, size_t{0x5a5a});

  // A capacity below the rank is refused and the array left alone.
  const size_t capacity = in_.below(FST_MAX_RANK + 1);
  int64_t dims[FST_MAX_RANK + 1];
  std::fill(dims, dims + FST_MAX_RANK + 1, INT64_C(0x5a5a5a5a));
  Expectation dims_expect = expect;
  if (v.origin == ValueOrigin::kThisGraph && capacity < v.type.dims.size())
    dims_expect.fault(FST_ERROR_INVALID_ARGUMENT);
  clear_last_error();
  status = fst_value_dims(graph, v.value, capacity, dims);
  check_status("fst_value_dims", status, dims_expect);
  if (status != FST_OK) {
    for (int64_t d : dims) check_untouched("fst_value_dims", "out_dims", d, INT64_C(0x5a5a5a5a));
  } else if (v.origin == ValueOrigin::kThisGraph) {
    if (!std::equal(v.type.dims.begin(), v.type.dims.end(), dims))
      violation("fst_value_dims disagrees with the dims the value was built with");
    for (size_t i = v.type.dims.size(); i <= FST_MAX_RANK; ++i)
      check_untouched("fst_value_dims", "out_dims past the rank", dims[i], INT64_C(0x5a5a5a5a));
  }
}

void ApiProgram::query_graph(int slot) {
  const GraphSlot& g = graphs_[static_cast<size_t>(slot)];
  const fst_graph* graph = in_.chance(8) ? nullptr : g.graph;
  const Expectation expect =
      graph == nullptr ? Expectation::fail({FST_ERROR_INVALID_ARGUMENT}) : Expectation::succeed();

  const fst_status status = fst_graph_status(graph);
  if (graph == nullptr) {
    check_status("fst_graph_status", status, expect);
    if (std::strcmp(fst_graph_error_message(nullptr), "") != 0)
      violation("fst_graph_error_message(NULL) is not \"\"");
  } else {
    if (status != g.error) violation("fst_graph_status differs from the first builder error");
    if ((status == FST_OK) != (*fst_graph_error_message(graph) == '\0'))
      violation("fst_graph_error_message is empty exactly when the graph is not in error");
  }

  struct Listing {
    const char* count_function;
    const char* item_function;
    fst_status (*count)(const fst_graph*, size_t*);
    fst_status (*item)(const fst_graph*, size_t, fst_value*, const char**);
    const std::vector<std::string>* names;
  };
  const Listing listings[] = {
      {"fst_graph_input_count", "fst_graph_input", fst_graph_input_count, fst_graph_input, &g.input_names},
      {"fst_graph_output_count", "fst_graph_output", fst_graph_output_count, fst_graph_output,
       &g.output_names},
  };
  for (const Listing& listing : listings) {
    size_t count = 0x5a5a;
    clear_last_error();
    const fst_status count_status = listing.count(graph, &count);
    check_status(listing.count_function, count_status, expect);
    if (count_status != FST_OK) {
      check_untouched(listing.count_function, "out_count", count, size_t{0x5a5a});
      continue;
    }
    if (count != listing.names->size())
      violation(std::string(listing.count_function) + " says " + std::to_string(count) + ", but " +
                std::to_string(listing.names->size()) + " were added");
    const size_t index = in_.below(count + 2);
    fst_value value = 0x5a5a;
    const char* name = reinterpret_cast<const char*>(0x1);
    clear_last_error();
    const fst_status item_status = listing.item(graph, index, &value, in_.chance(64) ? nullptr : &name);
    check_status(listing.item_function, item_status,
                 index < count ? Expectation::succeed() : Expectation::fail({FST_ERROR_INVALID_ARGUMENT}));
    if (item_status != FST_OK) {
      check_untouched(listing.item_function, "out_value", value, fst_value{0x5a5a});
      check_untouched(listing.item_function, "out_name", name, reinterpret_cast<const char*>(0x1));
    } else if (name != reinterpret_cast<const char*>(0x1) && (*listing.names)[index] != name) {
      violation(std::string(listing.item_function) + " names item " + std::to_string(index) + " \"" + name +
                "\" instead of \"" + (*listing.names)[index] + "\"");
    }
  }
  size_t values = 0x5a5a;
  clear_last_error();
  const fst_status values_status = fst_graph_value_count(graph, &values);
  check_status("fst_graph_value_count", values_status, expect);
  // A broadcast to the shape a value already has returns that value, so count distinct ones.
  std::set<fst_value> distinct;
  for (const KnownValue& v : g.values) distinct.insert(v.value);
  if (values_status == FST_OK && values < distinct.size())
    violation("fst_graph_value_count is below the number of values built");
}

void ApiProgram::verify_graph(int slot) {
  const GraphSlot& g = graphs_[static_cast<size_t>(slot)];
  Expectation expect;
  if (g.error != FST_OK)
    expect = Expectation::fail({g.error});
  else if (g.output_names.empty())
    expect = Expectation::fail({FST_ERROR_INVALID_ARGUMENT});
  clear_last_error();
  check_status("fst_graph_verify", fst_graph_verify(g.graph), expect);
}

void ApiProgram::print_round_trip(int slot) {
  const GraphSlot& g = graphs_[static_cast<size_t>(slot)];
  const bool null_graph = in_.chance(8);
  if (g.error != FST_OK || null_graph) {
    char* const sentinel = reinterpret_cast<char*>(0x1);
    char* text = sentinel;
    clear_last_error();
    const fst_status status = fst_graph_print(null_graph ? nullptr : g.graph, &text);
    check_status("fst_graph_print", status,
                 Expectation::fail({null_graph ? FST_ERROR_INVALID_ARGUMENT : g.error}));
    check_untouched("fst_graph_print", "out_text", text, sentinel);
    return;
  }
  if (round_trips_++ >= kMaxRoundTripsPerInput) return;
  fst_context* context = pick_context_or_null();
  if (context == nullptr) return;
  GraphPtr parsed = check_print_round_trip(context, g.graph);
  size_t inputs = 0;
  fst_graph_input_count(parsed.get(), &inputs);
  if (inputs != g.input_names.size()) violation("the parsed print has another number of inputs");
}

void ApiProgram::evaluate(int slot) {
  const GraphSlot& g = graphs_[static_cast<size_t>(slot)];
  const bool runnable = g.error == FST_OK && !g.output_names.empty() && !g.has_opaque;
  if (runnable && in_.chance(200) && evaluations_ < kMaxEvaluationsPerInput && cheap_to_evaluate(g.graph)) {
    ++evaluations_;
    evaluate_on_fixed_inputs(g.graph);
    return;
  }
  // Arguments the call must refuse: a wrong count, or a NULL array, before touching a buffer.
  Expectation expect = Expectation::fail({FST_ERROR_INVALID_ARGUMENT});
  if (g.error != FST_OK) expect = Expectation::fail({g.error});
  size_t ninputs = g.input_names.size();
  size_t noutputs = g.output_names.size();
  const void* const* inputs = nullptr;
  void* const* outputs = nullptr;
  static const void* const kSomeInputs[16] = {};
  static void* const kSomeOutputs[16] = {};
  switch (in_.below(3)) {
    case 0:
      ninputs += 1 + in_.below(3);
      inputs = kSomeInputs;
      outputs = kSomeOutputs;
      break;
    case 1:
      noutputs += 1 + in_.below(3);
      inputs = kSomeInputs;
      outputs = kSomeOutputs;
      break;
    default:
      // NULL arrays or NULL buffers with the right counts.
      inputs = in_.chance(128) ? nullptr : kSomeInputs;
      outputs = in_.chance(128) ? nullptr : kSomeOutputs;
      if (ninputs == 0 && noutputs == 0) noutputs = 1;
      if (ninputs > 16 || noutputs > 16) return;
      break;
  }
  clear_last_error();
  check_status("fst_graph_evaluate_reference",
               fst_graph_evaluate_reference(g.graph, inputs, ninputs, outputs, noutputs), expect);
}

void ApiProgram::parse_text(int slot) {
  // Text from the input bytes, or the print of another graph with one byte changed.
  std::string text;
  const int source = static_cast<int>(in_.below(graphs_.size()));
  const GraphSlot& other = graphs_[static_cast<size_t>(source)];
  if (other.graph != nullptr && other.error == FST_OK && in_.chance(200)) {
    char* printed = nullptr;
    check_status("fst_graph_print", fst_graph_print(other.graph, &printed), Expectation::succeed());
    text = printed;
    fst_string_free(printed);
    if (in_.chance(128) && !text.empty()) text[in_.below(text.size())] = static_cast<char>(in_.byte());
  } else {
    text.resize(in_.below(64));
    for (char& c : text) c = static_cast<char>(in_.byte());
  }
  fst_context* context = pick_context_or_null();
  fst_graph* const sentinel = reinterpret_cast<fst_graph*>(0x1);
  fst_graph* graph = sentinel;
  clear_last_error();
  const fst_status status = fst_graph_parse(context, text.data(), text.size(), &graph);
  if (context == nullptr) {
    check_status("fst_graph_parse", status, Expectation::fail({FST_ERROR_INVALID_ARGUMENT}));
  } else {
    check_status("fst_graph_parse", status, Expectation::unknown());
  }
  if (status != FST_OK) {
    check_untouched("fst_graph_parse", "out_graph", graph, sentinel);
    return;
  }
  // The parsed graph joins the program: its inputs and outputs are what it knows of it.
  destroy_graph(slot);
  GraphSlot& g = graphs_[static_cast<size_t>(slot)];
  g.graph = graph;
  size_t count = 0;
  check_status("fst_graph_input_count", fst_graph_input_count(graph, &count), Expectation::succeed());
  for (size_t i = 0; i < count; ++i) {
    KnownValue known{};
    const char* name = nullptr;
    check_status("fst_graph_input", fst_graph_input(graph, i, &known.value, &name), Expectation::succeed());
    g.input_names.push_back(name);
    size_t rank = 0;
    int64_t dims[FST_MAX_RANK];
    fst_value_dtype(graph, known.value, &known.type.dtype);
    fst_value_rank(graph, known.value, &rank);
    fst_value_dims(graph, known.value, FST_MAX_RANK, dims);
    known.type.dims.assign(dims, dims + rank);
    g.values.push_back(known);
  }
  check_status("fst_graph_output_count", fst_graph_output_count(graph, &count), Expectation::succeed());
  for (size_t i = 0; i < count; ++i) {
    fst_value value = FST_VALUE_INVALID;
    const char* name = nullptr;
    check_status("fst_graph_output", fst_graph_output(graph, i, &value, &name), Expectation::succeed());
    g.output_names.push_back(name);
  }
  g.has_opaque = text.find("opaque") != std::string::npos;
}

}  // namespace fstitch::fuzz
