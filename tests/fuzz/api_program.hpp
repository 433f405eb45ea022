// ApiProgram: interprets fuzz bytes as a sequence of public C API calls on a few contexts,
// graphs, fusions and option handles, with arguments chosen by the bytes (NULL handles,
// out-of-range enums, bad dims and axes, values of other or destroyed graphs, duplicate
// names), and checks every call against the documented contract (contract.hpp) and the
// builders' documented rules (api_model.hpp). Shapes stay small so calls stay cheap; nothing
// is compiled or run (a host compile costs about a second): fusion runs and kernel launches
// are only called with arguments they must reject before compiling.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "api_model.hpp"
#include "fstitch.h"
#include "fuzz_input.hpp"

namespace fstitch::fuzz {

// Where a value handed to a call comes from, which decides what the call must do with it.
enum class ValueOrigin {
  kThisGraph,   // a live value of the graph the call builds on; its type is known
  kInvalid,     // FST_VALUE_INVALID
  kOtherGraph,  // a value of another live graph
  kDestroyed,   // a value of a graph destroyed earlier
  kOutOfRange,  // this graph's tag with an index past its values
  kArbitrary,   // 64 bits from the input: may or may not name a value
};

struct PickedValue {
  fst_value value = FST_VALUE_INVALID;
  ValueOrigin origin = ValueOrigin::kInvalid;
  ValueType type;  // for kThisGraph
};

struct KnownValue {
  fst_value value;
  ValueType type;
};

struct GraphSlot {
  fst_graph* graph = nullptr;
  fst_status error = FST_OK;  // the sticky builder error, as observed
  std::vector<KnownValue> values;
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  bool has_opaque = false;
};

struct FusionSlot {
  fst_fusion* fusion = nullptr;
  size_t inputs = 0;
  size_t outputs = 0;
  bool has_opaque = false;
  int graph_slot = -1;  // the graph it was made from while that graph lives, else -1
};

struct ContextOptionsShadow {
  fst_backend backend = FST_BACKEND_HOST;  // FSTITCH_BACKEND=host in the fuzz environment
  std::string cache_dir = "off";           // FSTITCH_CACHE_DIR=off
};

struct ContextSlot {
  fst_context* context = nullptr;
  fst_backend backend = FST_BACKEND_HOST;
  std::string cache_dir;
};

class ApiProgram {
 public:
  explicit ApiProgram(FuzzInput& input) : in_(input) {}
  ~ApiProgram();
  ApiProgram(const ApiProgram&) = delete;
  ApiProgram& operator=(const ApiProgram&) = delete;

  void run();

 private:
  static constexpr size_t kMaxSteps = 256;
  static constexpr size_t kMaxFusesPerInput = 4;
  static constexpr size_t kMaxRoundTripsPerInput = 4;
  static constexpr size_t kMaxEvaluationsPerInput = 4;
  static constexpr size_t kMaxValuesPerGraph = 160;

  void step();

  // Picking arguments.
  int pick_graph_slot();  // a slot with a live graph, creating one if none lives
  fst_context* pick_context_or_null();
  PickedValue pick_value(int slot);
  fst_dtype pick_dtype();
  std::string pick_io_name(int slot, bool for_output);
  DimList pick_dims(int slot);
  size_t pick_rank(const DimList& dims);

  // Builders (api_builders.cpp).
  void call_input(int slot);
  void call_constant(int slot);
  void call_constant_tensor(int slot);
  void call_unary(int slot);
  void call_binary(int slot);
  void call_select(int slot);
  void call_cast(int slot);
  void call_broadcast(int slot);
  void call_reduce(int slot);
  void call_reshape(int slot);
  void call_permute(int slot);
  void call_iota(int slot);
  void call_opaque(int slot);
  void call_output(int slot);
  void call_slice(int slot);
  void call_concat(int slot);
  void call_pad(int slot);
  void call_take(int slot);
  void call_split(int slot);
  // Checks a builder's result: sticky errors, the last error, and the result's type.
  void after_builder(int slot, const char* function, fst_value result, Expectation expect,
                     const std::optional<ValueType>& type, fst_status error_before,
                     const std::string& message_before);
  void expect_operand(Expectation& expect, const PickedValue& v) const;

  // Graph-level calls (api_graph_calls.cpp).
  void create_graph(int slot);
  void destroy_graph(int slot);
  void query_value(int slot);
  void query_graph(int slot);
  void verify_graph(int slot);
  void print_round_trip(int slot);
  void evaluate(int slot);
  void parse_text(int slot);

  // Contexts, options, fusions, kernels (api_fusion_calls.cpp).
  void context_options_call();
  void create_context();
  void destroy_context();
  void query_context();
  void fuse_options_call();
  void fuse(int slot);
  void destroy_fusion();
  void query_fusion();
  void query_kernel();
  void call_fusion_run(const FusionSlot& f);
  void call_kernel_launch(const fst_kernel* kernel);
  void misc_call();

  void destroy_all();

  FuzzInput& in_;
  std::array<ContextSlot, 2> contexts_{};
  std::array<GraphSlot, 3> graphs_{};
  std::array<FusionSlot, 2> fusions_{};
  fst_context_options* context_options_ = nullptr;
  ContextOptionsShadow options_shadow_;
  fst_fuse_options* fuse_options_ = nullptr;
  std::vector<fst_value> destroyed_values_;
  size_t fuses_ = 0;
  size_t round_trips_ = 0;
  size_t evaluations_ = 0;
};

}  // namespace fstitch::fuzz
