#include "api_program.hpp"

#include <algorithm>
#include <climits>

namespace fstitch::fuzz {
namespace {

// Most dims are small so graphs stay cheap; a few are bad or huge.
constexpr int64_t kSmallDims[] = {1, 1, 2, 3, 4, 5, 7, 8, 16, 33};
constexpr int64_t kBadDims[] = {0,         -1,        -7,        INT64_MAX,    INT64_MIN,
                                1LL << 31, 1LL << 40, 1LL << 62, 3037000500LL, -1};
constexpr fst_dtype kDtypes[] = {FST_F32, FST_F32, FST_F16, FST_BF16, FST_F64,
                                 FST_I8,  FST_I32, FST_I64, FST_U8,   FST_BOOL};
constexpr int kBadEnumCodes[] = {0, -1, 10, 13, 22, 99, INT_MAX, INT_MIN};

}  // namespace

ApiProgram::~ApiProgram() {
  destroy_all();
}

void ApiProgram::run() {
  for (size_t steps = 0; steps < kMaxSteps && !in_.empty(); ++steps) step();
}

void ApiProgram::step() {
  const uint8_t op = in_.byte();
  // Builders get most of the bytes; everything else a share each.
  switch (op % 45) {
    case 0:
    case 1:
    case 2:
      return call_input(pick_graph_slot());
    case 3:
    case 4:
      return call_constant(pick_graph_slot());
    case 5:
    case 6:
    case 7:
      return call_unary(pick_graph_slot());
    case 8:
    case 9:
    case 10:
      return call_binary(pick_graph_slot());
    case 11:
      return call_select(pick_graph_slot());
    case 12:
      return call_cast(pick_graph_slot());
    case 13:
      return call_broadcast(pick_graph_slot());
    case 14:
    case 15:
      return call_reduce(pick_graph_slot());
    case 16:
      return call_reshape(pick_graph_slot());
    case 17:
      return call_permute(pick_graph_slot());
    case 18:
      return call_iota(pick_graph_slot());
    case 19:
      return call_opaque(pick_graph_slot());
    case 20:
    case 21:
      return call_output(pick_graph_slot());
    case 22:
      return query_value(pick_graph_slot());
    case 23:
      return query_graph(pick_graph_slot());
    case 24:
      return verify_graph(pick_graph_slot());
    case 25:
      return print_round_trip(pick_graph_slot());
    case 26:
      return evaluate(pick_graph_slot());
    case 27:
      return fuse(pick_graph_slot());
    case 28:
      return query_fusion();
    case 29:
      return query_kernel();
    case 30:
      return create_graph(static_cast<int>(in_.below(graphs_.size())));
    case 31:
      return destroy_graph(static_cast<int>(in_.below(graphs_.size())));
    case 32:
      return context_options_call();
    case 33:
      return create_context();
    case 34:
      return destroy_context();
    case 35:
      return query_context();
    case 36:
      return fuse_options_call();
    case 37:
      return destroy_fusion();
    case 38:
      return parse_text(static_cast<int>(in_.below(graphs_.size())));
    case 39:
      return call_slice(pick_graph_slot());
    case 40:
      return call_concat(pick_graph_slot());
    case 41:
      return call_pad(pick_graph_slot());
    case 42:
      return call_take(pick_graph_slot());
    case 43:
      return call_split(pick_graph_slot());
    default:
      return misc_call();
  }
}

int ApiProgram::pick_graph_slot() {
  const int wanted = static_cast<int>(in_.below(graphs_.size()));
  for (size_t k = 0; k < graphs_.size(); ++k) {
    const int slot = static_cast<int>((static_cast<size_t>(wanted) + k) % graphs_.size());
    if (graphs_[static_cast<size_t>(slot)].graph != nullptr) return slot;
  }
  create_graph(wanted);
  GraphSlot& g = graphs_[static_cast<size_t>(wanted)];
  if (g.graph == nullptr) {
    // The call above may have been a failing one: builders need a graph to build on.
    fst_context* context = nullptr;
    for (ContextSlot& c : contexts_) context = context != nullptr ? context : c.context;
    fst_context* temporary = nullptr;
    if (context == nullptr) {
      check_status("fst_context_create", fst_context_create(nullptr, &temporary), Expectation::succeed());
      context = temporary;
    }
    check_status("fst_graph_create", fst_graph_create(context, &g.graph), Expectation::succeed());
    fst_context_destroy(temporary);  // the graph keeps its own reference
  }
  return wanted;
}

fst_context* ApiProgram::pick_context_or_null() {
  const size_t k = in_.below(contexts_.size() + 1);
  if (k < contexts_.size() && contexts_[k].context != nullptr) return contexts_[k].context;
  for (ContextSlot& c : contexts_) {
    if (c.context != nullptr) return c.context;
  }
  if (in_.chance(16)) return nullptr;
  create_context();
  for (ContextSlot& c : contexts_) {
    if (c.context != nullptr) return c.context;
  }
  return nullptr;
}

PickedValue ApiProgram::pick_value(int slot) {
  const GraphSlot& g = graphs_[static_cast<size_t>(slot)];
  const uint8_t kind = in_.byte();
  PickedValue picked;
  if (kind < 216 && !g.values.empty()) {
    // Recent values mostly, so chains grow deep.
    const size_t back = in_.below(std::min<size_t>(g.values.size(), 12));
    const size_t index = in_.chance(200) ? g.values.size() - 1 - back : in_.below(g.values.size());
    picked.value = g.values[index].value;
    picked.type = g.values[index].type;
    picked.origin = ValueOrigin::kThisGraph;
    return picked;
  }
  switch (kind % 5) {
    case 0:
      picked.origin = ValueOrigin::kInvalid;
      return picked;
    case 1:
      for (size_t k = 0; k < graphs_.size(); ++k) {
        const GraphSlot& other = graphs_[k];
        if (static_cast<int>(k) != slot && other.graph != nullptr && !other.values.empty()) {
          picked.value = other.values[in_.below(other.values.size())].value;
          picked.origin = ValueOrigin::kOtherGraph;
          return picked;
        }
      }
      break;
    case 2:
      if (!destroyed_values_.empty()) {
        picked.value = destroyed_values_[in_.below(destroyed_values_.size())];
        picked.origin = ValueOrigin::kDestroyed;
        return picked;
      }
      break;
    case 3:
      if (!g.values.empty()) {
        picked.value = (g.values.front().value & 0xffffffff00000000ULL) | 0xfffffff0ULL;
        picked.origin = ValueOrigin::kOutOfRange;
        return picked;
      }
      break;
    default:
      break;
  }
  picked.value = in_.bits(8);
  picked.origin = picked.value == FST_VALUE_INVALID ? ValueOrigin::kInvalid : ValueOrigin::kArbitrary;
  return picked;
}

fst_dtype ApiProgram::pick_dtype() {
  if (in_.chance(8)) return static_cast<fst_dtype>(in_.pick(kBadEnumCodes));
  return in_.pick(kDtypes);
}

std::string ApiProgram::pick_io_name(int slot, bool for_output) {
  static const char* const kNames[] = {"x",   "y",           "w",     "b",    "x y",      "a.b-c_1", "",
                                       "q\"", "back\\slash", "tab\t", "\x7f", "\xc3\xa9", "#",       "%0"};
  const GraphSlot& g = graphs_[static_cast<size_t>(slot)];
  const auto& used = for_output ? g.output_names : g.input_names;
  const uint8_t kind = in_.byte();
  if (kind < 40 && !used.empty()) return used[in_.below(used.size())];  // a duplicate
  if (kind < 48) return std::string(300, 'n');
  if (kind < 140) return in_.pick(kNames);
  return (for_output ? "out" : "in") + std::to_string(in_.below(64));
}

DimList ApiProgram::pick_dims(int slot) {
  const GraphSlot& g = graphs_[static_cast<size_t>(slot)];
  DimList dims;
  const uint8_t kind = in_.byte();
  if (kind < 128 && !g.values.empty()) {
    // Related to an existing value, so broadcasts and reshapes often fit.
    dims = g.values[g.values.size() - 1 - in_.below(std::min<size_t>(g.values.size(), 8))].type.dims;
    switch (in_.below(6)) {
      case 0:
        if (!dims.empty()) dims[in_.below(dims.size())] = 1;
        break;
      case 1:
        if (dims.size() < FST_MAX_RANK) dims.insert(dims.begin(), in_.pick(kSmallDims));
        break;
      case 2:
        if (!dims.empty()) dims.erase(dims.begin());
        break;
      case 3:
        std::reverse(dims.begin(), dims.end());
        break;
      default:
        break;
    }
  } else {
    const size_t rank = in_.chance(16) ? in_.below(FST_MAX_RANK + 1) : in_.below(4);
    for (size_t i = 0; i < rank; ++i) dims.push_back(in_.pick(kSmallDims));
  }
  if (in_.chance(24) && !dims.empty()) dims[in_.below(dims.size())] = in_.pick(kBadDims);
  if (in_.chance(6)) dims.assign(FST_MAX_RANK + 1, 1);
  return dims;
}

// Usually the dims' own count; sometimes a rank the array does not back (the library must
// reject a rank above FST_MAX_RANK before reading the array).
size_t ApiProgram::pick_rank(const DimList& dims) {
  if (in_.chance(4)) return SIZE_MAX;
  if (in_.chance(4)) return FST_MAX_RANK + 1 + in_.below(1000);
  return dims.size();
}

void ApiProgram::destroy_all() {
  // The order is chosen by the input: every handle keeps what it needs alive.
  const uint8_t order = in_.byte();
  auto destroy_fusions = [&] {
    for (FusionSlot& f : fusions_) {
      fst_fusion_destroy(f.fusion);
      f = FusionSlot{};
    }
  };
  auto destroy_graphs = [&] {
    for (size_t k = 0; k < graphs_.size(); ++k) destroy_graph(static_cast<int>(k));
  };
  auto destroy_contexts = [&] {
    for (ContextSlot& c : contexts_) {
      fst_context_destroy(c.context);
      c = ContextSlot{};
    }
  };
  auto destroy_options = [&] {
    fst_context_options_destroy(context_options_);
    context_options_ = nullptr;
    fst_fuse_options_destroy(fuse_options_);
    fuse_options_ = nullptr;
  };
  switch (order % 3) {
    case 0:
      destroy_fusions();
      destroy_graphs();
      destroy_contexts();
      break;
    case 1:
      destroy_contexts();
      destroy_graphs();
      destroy_fusions();
      break;
    default:
      destroy_graphs();
      destroy_contexts();
      destroy_fusions();
      break;
  }
  destroy_options();
}

}  // namespace fstitch::fuzz
