// Kernels are emitted as straight-line code per element and per row. Every value is a
// `const` compute-type variable, already rounded to its dtype. Values are requested at a
// flat index expression: "f" (the current element), "row" (the current row) or an index
// derived from them through broadcast/permute maps; results are memoized per scope.
#include "codegen/emit.hpp"

#include <algorithm>
#include <functional>
#include <locale>
#include <map>
#include <set>
#include <sstream>

#include "codegen/cuda_types.hpp"
#include "codegen/elementwise_expr.hpp"
#include "codegen/gelu_lookup.hpp"
#include "codegen/index_maps.hpp"
#include "codegen/prelude.hpp"
#include "codegen/vector_access.hpp"
#include "plan/cost_model.hpp"
#include "plan/gelu_evaluation.hpp"
#include "plan/op_class.hpp"
#include "plan/row_cache.hpp"
#include "support/error.hpp"

namespace fstitch {
namespace {

constexpr const char* kElement = "f";
constexpr const char* kRowIndex = "row";
// In row kernels: the element's column, its flat index over the reduced axes.
constexpr const char* kColumn = "c";
// Keys the vector of a loaded value read back from the shared row cache (never an index).
constexpr const char* kSharedCache = "shared";
// Replaced, once the kernel is emitted, by the test of the pointers its vector accesses use.
constexpr const char* kAlignedMarker = "@FST_ALIGNED_POINTERS@";

std::string num(int64_t v) {
  return std::to_string(v) + "LL";
}

// Bytes of one element of a type the emitter declares shared arrays of.
size_t shared_type_bytes(const std::string& type) {
  static const std::map<std::string, size_t> sizes = {
      {"unsigned char", 1}, {"signed char", 1}, {"unsigned short", 2},
      {"short", 2},         {"int", 4},         {"unsigned int", 4},
      {"float", 4},         {"long long", 8},   {"unsigned long long", 8},
      {"double", 8}};
  const auto found = sizes.find(type);
  if (found == sizes.end()) fail(StatusCode::kInternal, "codegen: a shared array of unknown type " + type);
  return found->second;
}

// A kernel parameter's declaration: a split's scratch as raw workspace bytes (counters as
// unsigned ints), a value as its storage type, const when only read, restrict unless it may
// share memory with another (an in-place update).
std::string param_declaration(const Graph& g, const KernelParam& p, const std::string& name) {
  if (p.is_scratch())
    return std::string(p.scratch == ParamScratch::kSplitCounters ? "unsigned int" : "unsigned char") +
           "* __restrict__ " + name;
  const char* qualifier = p.aliasing == ParamAliasing::kMayAlias ? "* " : "* __restrict__ ";
  return std::string(p.written ? "" : "const ") + storage_type(g.node(p.value).dtype) + qualifier + name;
}

struct ReduceCode {
  std::string acc_type;
  std::string identity;
  std::string combine(const std::string& a, const std::string& b) const { return fn(a, b); }
  std::string (*fn)(const std::string&, const std::string&) = nullptr;
  bool float_math = false;
};

// No minimum-blocks hint on grid-stride kernels: under one, ptxas was seen to spill
// kernels that need fewer registers than it allows. Their grid is sized from a register
// estimate that stays above what ptxas uses (plan/cost_model.cpp), and the launcher
// resizes it to the compiled occupancy. A column tile and a split row take the hint of
// the occupancy they planned: their grids are their work (tiles x split, rows x group),
// sized for that occupancy. Under the hint ptxas uses up to the registers it allows and
// the planned wave is the compiled one; without it ptxas (CUDA 13) held split rows of
// [64, 50257] f32 to 40 registers and spilled, where the hint's 48 or 64 spill nothing.
// A block of 1024 threads is the other exception: without a hint ptxas holds it to 32
// registers and spills a softmax row of 8192 f32 that fits in 44; one block per SM
// allows 64. A row read ahead takes the hint too: its next row's vectors are live across
// the whole row, and ptxas, left to its own register target, spilled a few bytes of such
// kernels at 56 or 64 registers (bias + residual + LayerNorm bf16 [97, 768] on sm_80). A
// packed launch's grid is fixed at its planned occupancy, which it takes as its hint. So does
// a kernel whose rows wait at a grid barrier: every block of its grid must be resident.
std::string launch_bounds(const KernelSpec& s, bool packed = false) {
  std::string bounds = "__launch_bounds__(" + std::to_string(s.block_threads);
  if (s.schedule == ScheduleKind::kColumnTile || s.schedule == ScheduleKind::kSplitRow ||
      s.prefetch == RowPrefetch::kNextRow || s.stages == RowStages::kRowsAfterTotals || packed) {
    bounds += ", " + std::to_string(std::max(1, s.planned_blocks_per_sm));
  } else if (s.block_threads >= 1024) {
    bounds += ", 1";
  }
  return bounds + ")";
}

// What the emitter writes: a kernel of its own, or one part of a packed launch as a device
// function the launch's kernel calls with the part's block index and grid.
enum class EmittedAs : uint8_t { kKernel, kPart };

class KernelEmitter {
 public:
  KernelEmitter(const Graph& g, const PlannedKernel& k, EmittedAs as = EmittedAs::kKernel)
      : g_(g), k_(k), s_(k.spec), as_(as) {
    if (as_ == EmittedAs::kPart) {
      block_ = "fst_block";
      grid_ = "fst_grid";
    }
    out_.imbue(std::locale::classic());  // a global locale would group the digits of numbers
    for (ValueId v : s_.members) members_.insert(v);
    for (ValueId v : s_.cached) cached_.insert(v);
    for (ValueId v : s_.inlined) inlined_.insert(v);
  }

  std::string emit() {
    signature();
    if (s_.gelu == GeluEvaluation::kBf16Table) {
      declare_shared("unsigned short", bf16_gelu_table_entries(), kBf16GeluShared);
      out_ << bf16_gelu_table_copy("  ");
    }
    if (s_.reduced_axes.empty()) {
      elementwise_body();
    } else if (s_.schedule == ScheduleKind::kColumnTile && s_.column.passes > 1) {
      column_passes_body();
    } else if (s_.schedule == ScheduleKind::kColumnTile) {
      column_tile_body();
    } else {
      row_body();
    }
    out_ << "}\n";
    if (as_ == EmittedAs::kKernel) out_ << "FST_HOST_ENTRY(" << k_.name << ")\n";
    std::string text = out_.str();
    if (s_.gelu == GeluEvaluation::kBf16Table) text = bf16_gelu_definitions() + text;
    const size_t marker = text.find(kAlignedMarker);
    if (marker != std::string::npos) {
      std::string any = "0ull";
      for (const std::string& p : aligned_ptrs_) any += " | (unsigned long long)" + p;
      text.replace(marker, std::string(kAlignedMarker).size(), "((" + any + ") & 15ull) == 0");
    }
    return text;
  }

 private:
  void line(const std::string& text) {
    out_ << std::string(static_cast<size_t>(indent_) * 2, ' ') << text << "\n";
  }

  void signature() {
    if (as_ == EmittedAs::kPart) {
      out_ << "static __device__ __forceinline__ void " << k_.name << "(";
    } else {
      out_ << "extern \"C\" __global__ void " << launch_bounds(s_) << " " << k_.name << "(";
    }
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const KernelParam& p = k_.params[i];
      const std::string name = "p" + std::to_string(i);
      out_ << (i ? ", " : "") << param_declaration(g_, p, name);
      if (p.is_scratch()) {  // raw workspace bytes, no graph value
        const bool counters = p.scratch == ParamScratch::kSplitCounters;
        (counters ? split_counters_ : split_partials_) = name;
        // A packed part's counters follow the previous parts' in the launch's shared slot.
        if (counters && s_.schedule == ScheduleKind::kSplitRow && s_.split.counter_offset > 0)
          split_counters_ = "(" + name + " + " + std::to_string(s_.split.counter_offset) + "u)";
        continue;
      }
      if (p.written) {
        store_ptrs_[p.stored_value()].push_back(name);
      } else {
        load_ptr_[p.value] = name;
      }
    }
    if (as_ == EmittedAs::kPart) {
      out_ << ", const unsigned int fst_block, const unsigned int fst_grid, unsigned char* const fst_shared";
    }
    out_ << ") {\n";
    indent_ = 1;
    if (as_ == EmittedAs::kPart) line("(void)fst_shared;");
  }

  // A static shared array. A packed part carves its arrays from the launch's one shared buffer
  // (fst_shared, 16-byte aligned), each at a 16-byte boundary from offset 0: a block runs one
  // part, so the parts overlay each other and the launch takes the largest part's bytes, not
  // their sum (shared_bytes() after emit()).
  void declare_shared(const std::string& type, int64_t count, const std::string& name) {
    if (as_ == EmittedAs::kKernel) {
      line("FST_SHARED(" + type + ", " + name + ", " + std::to_string(count) + ");");
      return;
    }
    line(type + "* const " + name + " = reinterpret_cast<" + type + "*>(fst_shared + " +
         std::to_string(shared_offset_) + ");");
    shared_offset_ += (static_cast<size_t>(count) * shared_type_bytes(type) + 15) / 16 * 16;
  }

 public:
  // The bytes of the launch's shared buffer a part's arrays take (0 for a kernel of its own).
  size_t shared_bytes() const { return shared_offset_; }

 private:
  // ---- values -----------------------------------------------------------------------

  std::string fresh(ValueId v) { return "v" + std::to_string(v) + "_" + std::to_string(counter_++); }

  std::string define(ValueId v, const std::string& expr) {
    std::string name = fresh(v);
    line("const " + std::string(compute_type(g_.node(v).dtype)) + " " + name + " = " + expr + ";");
    return name;
  }

  // A value of v's dtype computed as `expr` and rounded to it. A 16-bit value keeps its f32
  // before rounding beside it: a store converts that once (cvt and a NaN test) instead of
  // rounding in place and then taking the rounded float's bits, the same bits in about half
  // the instructions; the rounded float is dead code where only stores use it.
  std::string define_rounded(ValueId v, const std::string& expr) {
    const DType t = g_.node(v).dtype;
    if (t != DType::kBF16 && t != DType::kF16) return define(v, round_expr(t, expr));
    const std::string unrounded = "u" + std::to_string(v) + "_" + std::to_string(counter_++);
    line("const float " + unrounded + " = " + expr + ";");
    const std::string name =
        define(v, result_has_canonical_nan(g_.node(v).op) ? round_arithmetic_expr(t, unrounded)
                                                          : round_expr(t, unrounded));
    unrounded_[name] = {unrounded, t};
    return name;
  }

  // The f32 a 16-bit value named `value` was rounded from, or empty.
  std::string unrounded_of(DType t, const std::string& value) const {
    const auto it = unrounded_.find(value);
    return it != unrounded_.end() && it->second.second == t ? it->second.first : std::string();
  }

  // The storage bits of `value` (of dtype t) as stored.
  std::string stored_bits(DType t, const std::string& value) const {
    const std::string unrounded = unrounded_of(t, value);
    if (!unrounded.empty()) return store_rounded_expr(t, unrounded);
    return store_value_expr(t, value);
  }

  // "(a != a) | (b != b) | ...": whether any of `lanes` is a NaN, tested once for a vector.
  static std::string any_nan(const std::vector<std::string>& lanes) {
    std::string test;
    for (const std::string& l : lanes) test += (test.empty() ? "" : " | ") + ("(" + l + " != " + l + ")");
    return test;
  }

  // A vector store's lane of a 16-bit value that keeps its f32 before rounding: the lane
  // writes that f32 (r<v>[lane]) instead of its bits, so the words of the vector convert
  // two lanes at once (fst_f32x2_to_bf16x2, one cvt). False when the lane has no such f32.
  bool keep_unrounded_lane(ValueId v, int lane, const std::string& value) {
    const DType t = g_.node(v).dtype;
    const std::string unrounded = unrounded_of(t, value);
    if (unrounded.empty()) return false;
    line("r" + std::to_string(v) + "[" + std::to_string(lane) + "] = " + unrounded + ";");
    unrounded_lanes_.insert({v, lane});
    return true;
  }
  // The declarations of the f32 lane arrays the stores of `stored` wrote.
  void declare_unrounded_lanes(const std::vector<ValueId>& stored, int V) {
    for (ValueId v : stored) {
      const auto it = unrounded_lanes_.lower_bound({v, 0});
      if (it != unrounded_lanes_.end() && it->first == v)
        line("float r" + std::to_string(v) + "[" + std::to_string(V) + "];");
    }
  }
  // The storage bits of lane `lane` of vector-stored v, from its bit array `bits`.
  std::string lane_bits(ValueId v, int lane, const std::string& bits) const {
    if (!unrounded_lanes_.count({v, lane})) return bits + "[" + std::to_string(lane) + "]";
    return "(unsigned)" +
           store_rounded_expr(g_.node(v).dtype, "r" + std::to_string(v) + "[" + std::to_string(lane) + "]");
  }
  // The words of a vector store of v (V lanes, bit array `bits`) into `var`. When every lane
  // of a 16-bit store kept its f32, the pairs convert with one cvt each and one test of all
  // lanes for a NaN redoes them the exact way (the hardware's NaN has no payload): per
  // eight lanes four cvt, four tests and one branch, not eight conversions with a NaN rule
  // each.
  std::vector<std::string> packed_store_words(ValueId v, const std::string& var, int V,
                                              const std::string& bits) {
    const DType t = g_.node(v).dtype;
    std::vector<std::string> lanes;
    bool all_unrounded = dtype_size(t) == 2 && V % 2 == 0;
    for (int lane = 0; lane < V; ++lane) {
      lanes.push_back(lane_bits(v, lane, bits));
      all_unrounded = all_unrounded && unrounded_lanes_.count({v, lane});
    }
    if (!all_unrounded) return pack_vector_words(var, t, V, lanes);
    const std::string fast = t == DType::kBF16 ? "fst_cvt_bf16x2" : "fst_cvt_f16x2";
    const std::string exact = t == DType::kBF16 ? "fst_f32x2_to_bf16x2" : "fst_f32x2_to_f16x2";
    const std::string r = "r" + std::to_string(v);
    auto lane = [&](int j) { return r + "[" + std::to_string(j) + "]"; };
    std::vector<std::string> words, floats;
    for (int j = 0; j < V; ++j) floats.push_back(lane(j));
    for (int w = 0; w < V / 2; ++w)
      words.push_back(vector_word(var, V * 2, w) + " = " + fast + "(" + lane(2 * w) + ", " + lane(2 * w + 1) +
                      ");");
    words.push_back("if (__builtin_expect(" + any_nan(floats) + ", 0)) {");
    for (int w = 0; w < V / 2; ++w)
      words.push_back("  " + vector_word(var, V * 2, w) + " = " + exact + "(" + lane(2 * w) + ", " +
                      lane(2 * w + 1) + ");");
    words.push_back("}");
    return words;
  }

  // The f32 lanes of a vector of V f16 values in word variable `var`, into the array
  // `floats` (`var`f by default): a plain cvt each, one test of all lanes for a NaN, and the
  // exact conversion (which keeps a NaN's sign and payload) only when one is. About 1.5
  // instructions a lane instead of 6.
  void convert_f16_vector(const std::string& var, int V, std::string floats = "") {
    auto bits = [&](int j) { return storage_from_bits(DType::kF16, vector_element_bits(var, 2, 2 * V, j)); };
    if (floats.empty()) {
      floats = var + "f";
      f16_vector_floats_.insert(var);
    }
    line("float " + floats + "[" + std::to_string(V) + "];");
    std::vector<std::string> lanes;
    for (int j = 0; j < V; ++j) {
      lanes.push_back(floats + "[" + std::to_string(j) + "]");
      line(lanes.back() + " = fst_cvt_f16_to_f32(" + bits(j) + ");");
    }
    line("if (__builtin_expect(" + any_nan(lanes) + ", 0)) {");
    for (int j = 0; j < V; ++j)
      line("  " + floats + "[" + std::to_string(j) + "] = fst_f16_to_f32(" + bits(j) + ");");
    line("}");
  }

  // Whether a row kernel's vector steps convert their f16 vectors whole: the converted
  // lanes of all its f16 row vectors take registers, at most half of what a thread may use
  // at the kernel's occupancy (bias + residual + LayerNorm f16 [100, 8191], with five f16
  // vectors at 64 registers, spilled with them).
  bool converts_f16_row_vectors() const {
    int f16_vectors = 0;
    for (const auto& entry : row_vectors_)
      f16_vectors += g_.node(entry.first.first).dtype == DType::kF16 ? 1 : 0;
    const int cap =
        std::min(255, 65536 / std::max(1, s_.block_threads * std::max(1, s_.planned_blocks_per_sm)));
    return f16_vectors * s_.vector_width * 2 <= cap;
  }

  // The f32 array a row kernel's vector step converts f16 row vector `key` into.
  static std::string row_vector_floats(const std::pair<ValueId, std::string>& key) {
    const char* suffix = key.second == kColumn ? "c" : key.second == kSharedCache ? "s" : "";
    return "h" + std::to_string(key.first) + suffix;
  }

  bool is_member(ValueId v) const { return members_.count(v) != 0; }

  // The operand's index for a consumer evaluated at `idx`.
  std::string operand_index(ValueId v, const std::string& idx, ValueId operand) {
    const Node& n = g_.node(v);
    const Node& o = g_.node(operand);
    switch (n.op) {
      case OpKind::kBroadcast:
        if (idx == kElement && vector_lane_ >= 0) {
          const std::string lane = lane_broadcast_index(v, vector_lane_);
          if (!lane.empty()) return lane;
        }
        if (idx == kElement && is_member(operand) && s_.role(operand) == ValueRole::kRow &&
            row_shaped_operand(o.dims)) {
          return kRowIndex;
        }
        if (idx == kElement && !is_member(operand) && !s_.reduced_axes.empty() &&
            row_shaped_operand(o.dims)) {
          return kRowIndex;
        }
        // Broadcast over the rows (gamma, beta, a bias, a column total after its grid
        // barrier): read at the column the loop has (row loops have one; a column tile indexes
        // its elements otherwise).
        if (idx == kElement && !s_.reduced_axes.empty() && s_.schedule != ScheduleKind::kColumnTile &&
            column_shaped_operand(o.dims) &&
            (!is_member(operand) || s_.role(operand) == ValueRole::kIndexed ||
             s_.role(operand) == ValueRole::kColumnTotal)) {
          return kColumn;
        }
        return broadcast_index(n.dims, o.dims, idx);
      case OpKind::kPermute:
        return permute_index(n.dims, o.dims, n.axes, idx);
      case OpKind::kSlice:
        return slice_index(n.dims, o.dims, n.starts, n.steps, idx);
      default:
        return idx;  // elementwise ops and reshape keep the flat index
    }
  }

  // Broadcast from an aligned row shape: the operand's flat index is the row index.
  bool row_shaped_operand(const Dims& dims) const { return spans_only(dims, /*reduced=*/false); }

  // Broadcast from the reduced axes alone (dim 1 on every kept axis, right-aligned): the
  // operand's flat index is the column c, the flat index over the reduced axes.
  bool column_shaped_operand(const Dims& dims) const { return spans_only(dims, /*reduced=*/true); }

  // `dims`, right-aligned with the domain, equals it on the reduced axes (reduced) or on the
  // kept axes (!reduced) and is 1 on the others.
  bool spans_only(const Dims& dims, bool reduced_axes) const {
    if (dims.size() > s_.domain.size()) return false;
    const size_t offset = s_.domain.size() - dims.size();
    for (size_t i = 0; i < s_.domain.size(); ++i) {
      bool reduced = false;
      for (int64_t a : s_.reduced_axes) reduced = reduced || a == static_cast<int64_t>(i);
      const int64_t d = i < offset ? 1 : dims[i - offset];
      if (d != (reduced == reduced_axes ? s_.domain[i] : 1)) return false;
    }
    return true;
  }

  // The value of v at flat index idx, as a variable name or literal.
  std::string value_at(ValueId v, const std::string& idx) {
    const Node& n = g_.node(v);
    if (n.op == OpKind::kConstant) return literal(n.dtype, n.value);
    const auto key = std::make_pair(v, idx);
    auto memo = scope_.find(key);
    if (memo != scope_.end()) return memo->second;
    std::string result;
    if (idx == kElement && from_kept_row(v)) {
      result = kept_value(v);
    } else if (inlined_.count(v)) {
      request_operands_first(v, idx);
      result = compute(v, idx);
    } else if (!is_member(v)) {
      auto p = load_ptr_.find(v);
      if (p == load_ptr_.end())
        fail(StatusCode::kInternal, "codegen: no parameter for %" + std::to_string(v));
      if (cached_.count(v) && idx == kElement && cache_ready_.count(v)) {
        const std::string kept = kept_load(v);  // kept from an earlier pass: no global load
        scope_[key] = kept;
        return kept;
      }
      // The element as its storage type holds it, then converted to the compute type.
      std::string stored = p->second + "[" + idx + "]";
      std::string converted;  // the lane's f32 where its f16 vector was converted whole
      auto lane_float = [&](const std::string& var) {
        return f16_vector_floats_.count(var) ? var + "f[" + std::to_string(vector_lane_) + "]"
                                             : std::string();
      };
      if (idx == kElement && vector_lane_ >= 0 && vector_words_.count(v)) {
        stored = storage_from_bits(n.dtype, element_bits(v, vector_lane_));
        converted = lane_float(vector_words_.at(v));
      }
      std::string broadcast_var;
      const std::string broadcast_bits = lane_broadcast_bits(v, idx, &broadcast_var);
      if (!broadcast_bits.empty()) {
        stored = storage_from_bits(n.dtype, broadcast_bits);
        converted = lane_float(broadcast_var);
      }
      const auto rv = row_vectors_.find(key);
      bool from_row_vector = false;
      if (vector_lane_ >= 0 && rv != row_vectors_.end()) {
        const int size = static_cast<int>(dtype_size(n.dtype));
        stored = storage_from_bits(
            n.dtype, vector_element_bits(rv->second, size, size * s_.vector_width, vector_lane_));
        row_vectors_used_.insert(key);
        from_row_vector = true;
        if (n.dtype == DType::kF16 && converts_f16_row_vectors()) {
          converted = row_vector_floats(rv->first) + "[" + std::to_string(vector_lane_) + "]";
          f16_step_vectors_.insert(rv->first);
        }
      }
      std::string e = from_storage_expr(n.dtype, stored);
      if (!converted.empty()) e = converted;
      if (idx == kRowIndex && !in_element_loop_)
        e = "(row_ok ? " + e + " : " + literal(n.dtype, Scalar{}) + ")";
      if (cached_.count(v) && idx == kElement && s_.cache == RowCache::kShared)
        return fill_shared_cache(v, stored, from_row_vector, e);
      if (cached_.count(v) && idx == kElement) return cached_value(v, e);
      result = define(v, e);
    } else if (s_.role(v) == ValueRole::kColumnTotal) {
      result = column_total_after_barrier(v, idx);
    } else if (s_.role(v) == ValueRole::kRow && !s_.pure(v) && idx != kRowIndex && idx != kElement) {
      fail(StatusCode::kInternal, "codegen: row value %" + std::to_string(v) + " requested at another row");
    } else if (s_.role(v) == ValueRole::kRow && !s_.pure(v)) {
      auto r = row_vars_.find(v);
      if (r == row_vars_.end())
        fail(StatusCode::kInternal, "codegen: row value %" + std::to_string(v) + " not ready");
      return r->second;
    } else {
      if (cached_.count(v) && idx == kElement && cache_ready_.count(v)) return cache_slot(v);
      request_operands_first(v, idx);
      result = compute(v, idx);
      if (cached_.count(v) && idx == kElement) {
        line(cache_slot(v) + " = " + result + ";");
        cache_ready_.insert(v);
      }
    }
    scope_[key] = result;
    return result;
  }

  // ---- emission depth -----------------------------------------------------------------
  // compute(v, idx) asks for its operands through value_at, which computes them the same way:
  // a chain of n operations would recurse n deep and overflow the stack on long chains. This
  // requests v's operand closure first, bottom-up with an explicit stack, in the order the
  // recursion would (operands left to right, each before its consumer): compute then finds
  // every operand in scope_, emission stays a few frames deep, and the text is unchanged.
  // Pad, concat and take read their operands inside branches: the walk stops at them.
  struct OperandRequest {
    ValueId value;
    std::string index;
  };

  // The operands compute(v, idx) requests at the same scope, in its order.
  std::vector<OperandRequest> direct_requests(ValueId v, const std::string& idx) {
    const Node& n = g_.node(v);
    std::vector<OperandRequest> requests;
    switch (op_family(n.op)) {
      case OpFamily::kUnary:
      case OpFamily::kBinary:
      case OpFamily::kSelect:
      case OpFamily::kBroadcast:
      case OpFamily::kReshape:
      case OpFamily::kPermute:
      case OpFamily::kSlice:
        for (ValueId o : n.operands) requests.push_back({o, operand_index(v, idx, o)});
        break;
      case OpFamily::kCast:
        requests.push_back({n.operands[0], idx});
        break;
      default:
        break;
    }
    return requests;
  }

  // Whether value_at(v, idx) would call compute: not a constant, a load, a ready row value, a
  // kept cache entry or a value already in scope.
  bool computes_here(ValueId v, const std::string& idx) const {
    if (g_.node(v).op == OpKind::kConstant || scope_.count(std::make_pair(v, idx))) return false;
    if (inlined_.count(v)) return true;
    if (!is_member(v)) return false;
    if (s_.role(v) == ValueRole::kRow && !s_.pure(v)) return false;
    if (s_.role(v) == ValueRole::kColumnTotal) return false;  // read after its grid barrier
    if (idx == kElement && from_kept_row(v)) return false;    // from its kept row
    return !(cached_.count(v) && idx == kElement && cache_ready_.count(v));
  }

  void request_operands_first(ValueId v, const std::string& idx) {
    struct Frame {
      OperandRequest request;
      std::vector<OperandRequest> operands;
      size_t next = 0;
    };
    std::vector<Frame> stack;
    stack.push_back({{v, idx}, direct_requests(v, idx)});
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.next == top.operands.size()) {
        const OperandRequest done = std::move(top.request);
        stack.pop_back();
        if (!stack.empty()) value_at(done.value, done.index);  // its operands are in scope
        continue;
      }
      OperandRequest o = top.operands[top.next++];
      if (computes_here(o.value, o.index)) {
        std::vector<OperandRequest> operands = direct_requests(o.value, o.index);
        stack.push_back({std::move(o), std::move(operands)});
      } else {
        value_at(o.value, o.index);
      }
    }
  }

  // Where a cached element value lives for the current element: a register array indexed by
  // the element's step j, or the shared-memory buffer indexed by the column c.
  std::string cache_slot(ValueId v) const {
    // A block of a split row keeps its slice, from column c0.
    // A column tile's thread keeps slot j of each of its rows at j x block + thread: the
    // threads of a warp touch consecutive words.
    if (s_.cache == RowCache::kShared && s_.schedule == ScheduleKind::kColumnTile)
      return shared_cache_buffer(v) + "[j * " + std::to_string(s_.block_threads) + " + (int)threadIdx.x]";
    if (s_.cache == RowCache::kShared) {
      const std::string column = split_row() ? "c - c0" : "c";
      return shared_cache_buffer(v) + "[" + column + (shifted_rows() ? " + rs_shift]" : "]");
    }
    return "cache" + std::to_string(v) + "[j]";
  }

  // A loaded value kept by an earlier pass, for the current element: its register slot, or
  // its storage bits in the shared row cache converted as the load converts them (from the
  // vector of the current step when the row moves in vectors).
  std::string kept_load(ValueId v) {
    if (s_.cache != RowCache::kShared) return cache_slot(v);
    const DType t = g_.node(v).dtype;
    const auto key = std::make_pair(v, std::string(kSharedCache));
    const auto rv = row_vectors_.find(key);
    if (vector_lane_ >= 0 && rv != row_vectors_.end()) {
      const int size = static_cast<int>(dtype_size(t));
      row_vectors_used_.insert(key);
      if (t == DType::kF16 && converts_f16_row_vectors()) {
        f16_step_vectors_.insert(key);
        return define(v, row_vector_floats(key) + "[" + std::to_string(vector_lane_) + "]");
      }
      return define(v, from_storage_expr(t, storage_from_bits(t, vector_element_bits(rv->second, size,
                                                                                     size * s_.vector_width,
                                                                                     vector_lane_))));
    }
    return define(v, from_storage_expr(t, cache_slot(v)));
  }

  // The first pass that loads v keeps its storage bits in the shared row cache: the whole
  // vector once the step's elements are emitted (vector_lanes), or this element's bits.
  std::string fill_shared_cache(ValueId v, const std::string& stored, bool from_row_vector,
                                const std::string& vector_value) {
    const DType t = g_.node(v).dtype;
    std::string value;
    if (from_row_vector) {
      shared_vector_stores_.insert(v);
      value = define(v, vector_value);
    } else {
      const std::string bits = "s" + std::to_string(v) + "_" + std::to_string(counter_++);
      line("const " + std::string(storage_type(t)) + " " + bits + " = " + stored + ";");
      line(cache_slot(v) + " = " + bits + ";");
      value = define(v, from_storage_expr(t, bits));
    }
    cache_ready_.insert(v);
    scope_[std::make_pair(v, std::string(kElement))] = value;
    return value;
  }

  // The buffer of the shared row cache that holds cached value v.
  // The partials of reduction `v` in a split's partials scratch, at `offset` bytes, typed as
  // its accumulator (whose size the plan laid the scratch out with).
  std::string partials_at(ValueId v, uint64_t offset) const {
    const std::string acc = reduce_code(g_.node(v)).acc_type;
    const size_t size = acc == "double" || acc == "long long" ? 8 : 4;
    if (size != accumulator_bytes(g_.node(v).op, g_.node(v).dtype))
      fail(StatusCode::kInternal, "codegen: accumulator size differs from the plan's");
    return "reinterpret_cast<" + acc + "*>(" + split_partials_ + " + " + std::to_string(offset) + "ull)";
  }

  std::string shared_cache_buffer(ValueId v) const {
    const auto it = std::lower_bound(s_.cached.begin(), s_.cached.end(), v);
    return "fst_row_cache" + std::to_string(s_.cache_buffer[static_cast<size_t>(it - s_.cached.begin())]);
  }

  std::string cached_value(ValueId v, const std::string& load) {
    const std::string slot = cache_slot(v);
    if (!cache_ready_.count(v)) {
      line(slot + " = " + load + ";");
      cache_ready_.insert(v);
    } else if (!cache_loaded_this_pass_.count(v)) {
      // Loaded in an earlier pass: the register copy is already there.
    }
    cache_loaded_this_pass_.insert(v);
    scope_[std::make_pair(v, std::string(kElement))] = slot;
    return slot;
  }

  std::string compute(ValueId v, const std::string& idx) {
    const Node& n = g_.node(v);
    switch (op_family(n.op)) {
      case OpFamily::kUnary:
      case OpFamily::kBinary: {
        std::vector<std::string> a;
        for (ValueId o : n.operands) a.push_back(value_at(o, operand_index(v, idx, o)));
        // The table's values are already bf16.
        if (s_.gelu == GeluEvaluation::kBf16Table && is_bf16_gelu(g_, v))
          return define(v, "fst_gelu_bf16(" + a[0] + ", " + kBf16GeluShared + ")");
        // Rounded to 16 bits by every use: the precision that rounding needs.
        if (std::binary_search(s_.gelu_to_16bit.begin(), s_.gelu_to_16bit.end(), v))
          return define(v, "fst_gelu_f32_for_16bit(" + a[0] + ")");
        const DType operand_type = g_.node(n.operands[0]).dtype;
        std::string e = elementwise_expr(n, operand_type, a);
        return op_yields_bool(n.op) ? define(v, e) : define_rounded(v, e);
      }
      case OpFamily::kSelect: {
        std::vector<std::string> a;
        for (ValueId o : n.operands) a.push_back(value_at(o, operand_index(v, idx, o)));
        return define(v, "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")");
      }
      case OpFamily::kCast: {
        ValueId o = n.operands[0];
        const DType from = g_.node(o).dtype;
        if ((n.dtype == DType::kBF16 || n.dtype == DType::kF16) && from != DType::kF64)
          return define_rounded(v, "(float)(" + value_at(o, idx) + ")");  // cast_expr's rounding
        return define(v, cast_expr(from, n.dtype, value_at(o, idx)));
      }
      case OpFamily::kBroadcast:
      case OpFamily::kReshape:
      case OpFamily::kPermute:
      case OpFamily::kSlice: {
        ValueId o = n.operands[0];
        return value_at(o, operand_index(v, idx, o));
      }
      case OpFamily::kPad:
        return compute_pad(v, idx);
      case OpFamily::kConcat:
        return compute_concat(v, idx);
      case OpFamily::kTake:
        return compute_take(v, idx);
      case OpFamily::kIota: {
        const Dims strides = row_major_strides(n.dims);
        const size_t axis = static_cast<size_t>(n.axis);
        std::string e = "(" + idx + ")";
        if (strides[axis] != 1) e = "(" + e + " / " + num(strides[axis]) + ")";
        if (axis != 0) e = "(" + e + " % " + num(n.dims[axis]) + ")";
        return define(v, round_expr(n.dtype, std::string("(") + compute_type(n.dtype) + ")" + e));
      }
      default:
        fail(StatusCode::kInternal, std::string("codegen: cannot compute ") + op_name(n.op) + " here");
    }
  }

  // ---- data movement that chooses between operand elements --------------------------
  // A pad or a concat reads its operands inside branches, each at an index within that
  // operand; what a branch defines is forgotten when it closes (scope_ is restored), so no
  // value escapes it. Inside a branch no value is requested at the current element or row,
  // so the row caches are untouched there. A take reads at an index clamped into x and
  // selects.

  std::string index_var(const std::string& expr) {
    const std::string name = "k" + std::to_string(counter_++);
    line("const long long " + name + " = " + expr + ";");
    return name;
  }

  // Emits `if (condition) { result = value of o at index; }` around the operand's code.
  void assign_in_branch(const std::string& opening, const std::string& result, ValueId o,
                        const std::string& index) {
    line(opening);
    ++indent_;
    auto saved = scope_;
    const std::string value = value_at(o, index);
    line(result + " = " + value + ";");
    scope_ = std::move(saved);
    --indent_;
  }

  std::string compute_pad(ValueId v, const std::string& idx) {
    const Node& n = g_.node(v);
    const ValueId o = n.operands[0];
    const Dims& od = g_.node(o).dims;
    std::vector<std::string> coords;
    std::string inside;
    for (size_t i = 0; i < od.size(); ++i) {
      if (n.pad_low[i] == 0 && n.pad_high[i] == 0) {
        coords.push_back(coordinate(n.dims, i, idx));
        continue;
      }
      const std::string k = index_var(coordinate(n.dims, i, idx) + " - " + num(n.pad_low[i]));
      inside += std::string(inside.empty() ? "" : " && ") + k + " >= 0LL && " + k + " < " + num(od[i]);
      coords.push_back(k);
    }
    if (inside.empty()) return value_at(o, idx);  // nothing padded: the same flat index
    const std::string result = fresh(v);
    line(std::string(compute_type(n.dtype)) + " " + result + " = " + literal(n.dtype, n.value) + ";");
    assign_in_branch("if (" + inside + ") {", result, o, flat_index(od, coords));
    line("}");
    return result;
  }

  std::string compute_concat(ValueId v, const std::string& idx) {
    const Node& n = g_.node(v);
    const auto a = static_cast<size_t>(n.axis);
    if (n.operands.size() == 1) return value_at(n.operands[0], idx);
    std::vector<std::string> coords;
    for (size_t i = 0; i < n.dims.size(); ++i) coords.push_back(i == a ? "" : coordinate(n.dims, i, idx));
    const std::string c = index_var(coordinate(n.dims, a, idx));
    const std::string result = fresh(v);
    line(std::string(compute_type(n.dtype)) + " " + result + ";");
    int64_t offset = 0;
    for (size_t k = 0; k < n.operands.size(); ++k) {
      const ValueId o = n.operands[k];
      const Dims& od = g_.node(o).dims;
      coords[a] = offset == 0 ? c : "(" + c + " - " + num(offset) + ")";
      offset += od[a];
      const bool last = k + 1 == n.operands.size();
      const std::string opening =
          last ? "} else {" : (k == 0 ? "if (" : "} else if (") + c + " < " + num(offset) + ") {";
      assign_in_branch(opening, result, o, flat_index(od, coords));
    }
    line("}");
    return result;
  }

  std::string compute_take(ValueId v, const std::string& idx) {
    const Node& n = g_.node(v);
    const ValueId x = n.operands[0], indices = n.operands[1];
    const Dims& xd = g_.node(x).dims;
    const Dims& id = g_.node(indices).dims;
    const auto a = static_cast<size_t>(n.axis);
    std::vector<std::string> index_coords;
    for (size_t i = 0; i < id.size(); ++i) index_coords.push_back(coordinate(n.dims, a + i, idx));
    const std::string i = value_at(indices, flat_index(id, index_coords));
    const std::string k =
        index_var("(long long)" + i + " < 0LL ? (long long)" + i + " + " + num(xd[a]) + " : (long long)" + i);
    const std::string ok = "(" + k + " >= 0LL && " + k + " < " + num(xd[a]) + ")";
    std::vector<std::string> coords;
    for (size_t d = 0; d < a; ++d) coords.push_back(coordinate(n.dims, d, idx));
    coords.push_back("(" + ok + " ? " + k + " : 0LL)");
    for (size_t d = a + 1; d < xd.size(); ++d) coords.push_back(coordinate(n.dims, d - 1 + id.size(), idx));
    const std::string value = value_at(x, flat_index(xd, coords));
    return define(v, "(" + ok + " ? " + value + " : " + literal(n.dtype, Scalar{}) + ")");
  }

  void store(ValueId v, const std::string& idx, const std::string& value) {
    auto p = store_ptrs_.find(v);
    if (p == store_ptrs_.end()) return;  // consumed by nobody after this kernel
    const auto bits = row_vector_stores_.find(v);
    if (bits != row_vector_stores_.end() && vector_lane_ >= 0 && idx == kElement) {
      const DType t = g_.node(v).dtype;
      if (keep_unrounded_lane(v, vector_lane_, value)) return;
      line(bits->second + "[" + std::to_string(vector_lane_) +
           "] = " + bits_from_storage(t, stored_bits(t, value)) + ";");
      return;
    }
    for (const std::string& ptr : p->second) {
      line(ptr + "[" + idx + "] = " + stored_bits(g_.node(v).dtype, value) + ";");
    }
  }

  // The element values of the stored values (empty for a row kernel's row values; a permuted
  // element's is its operand's at the element), all computed before any is stored: an output
  // that updates an input in place overwrites an element only after every read of it.
  std::vector<std::string> stored_element_values() {
    std::vector<std::string> values;
    for (ValueId v : s_.stored) {
      if (permuted_element(v)) {
        values.push_back(stored_in_this_loop(v) ? value_at(g_.node(v).operands[0], kElement) : std::string());
        continue;
      }
      const bool element = s_.reduced_axes.empty() || s_.role(v) == ValueRole::kElement;
      values.push_back(element && (s_.reduced_axes.empty() || stored_in_this_loop(v)) ? value_at(v, kElement)
                                                                                      : std::string());
    }
    return values;
  }

  // Only a kernel with a reduction has roles for what it stores (a copy kernel stores values
  // that are not its members).
  bool permuted_element(ValueId v) const {
    return !s_.reduced_axes.empty() && s_.role(v) == ValueRole::kPermutedElement;
  }

  // Where the element at flat index f of its operand goes in a permuted value: the operand's
  // coordinate on axis perm[i] is the value's on axis i.
  std::string permuted_store_index(ValueId v) {
    const Node& n = g_.node(v);
    std::vector<int64_t> inverse(n.axes.size());
    for (size_t i = 0; i < n.axes.size(); ++i)
      inverse[static_cast<size_t>(n.axes[i])] = static_cast<int64_t>(i);
    return index_var(permute_index(g_.node(n.operands[0]).dims, n.dims, inverse, kElement));
  }

  // A value's index where it is stored in the element pass: the element's, or through its
  // permutation.
  std::string element_store_index(ValueId v) {
    return permuted_element(v) ? permuted_store_index(v) : std::string(kElement);
  }

  void store_element_values() {
    const std::vector<std::string> values = stored_element_values();
    for (size_t i = 0; i < s_.stored.size(); ++i) {
      if (!values[i].empty()) store(s_.stored[i], element_store_index(s_.stored[i]), values[i]);
    }
  }

#include "codegen/elementwise_body.inc"
#include "codegen/row_body.inc"
#include "codegen/row_element_loops.inc"

#include "codegen/column_passes_body.inc"
#include "codegen/column_tile_body.inc"

  const Graph& g_;
  const PlannedKernel& k_;
  const KernelSpec& s_;
  const EmittedAs as_;
  // The block's index and the grid's size in the kernel's own terms: a packed part's blocks
  // are a range of the launch's.
  std::string block_ = "blockIdx.x";
  std::string grid_ = "gridDim.x";
  std::ostringstream out_;
  int indent_ = 0;
  int counter_ = 0;
  int exchanges_in_row_ = 0;  // block-wide exchanges emitted so far in this row (row_body.inc)
  size_t shared_offset_ = 0;  // a part's bytes of the launch's shared buffer (declare_shared)
  bool in_element_loop_ = false;
  std::set<ValueId> members_;
  std::set<ValueId> cached_;
  std::set<ValueId> inlined_;
  std::map<ValueId, std::string> vector_words_;  // vector-loaded values of the current vector step
  int vector_lane_ = -1;                         // element of the vector step being emitted
  int vector_width_ = 1;
  std::set<ValueId> cache_ready_;
  std::set<ValueId> cache_loaded_this_pass_;
  std::map<ValueId, std::string> load_ptr_;
  std::map<ValueId, std::vector<std::string>> store_ptrs_;
  std::map<std::pair<ValueId, std::string>, std::string> scope_;
  std::map<ValueId, std::string> row_vars_;
  // 16-bit values defined by define_rounded: the name of the f32 each was rounded from, and
  // its dtype.
  std::map<std::string, std::pair<std::string, DType>> unrounded_;
  std::set<std::pair<ValueId, int>> unrounded_lanes_;  // (value, lane) of keep_unrounded_lane
  std::set<std::string> f16_vector_floats_;            // word variables of convert_f16_vector
  // The f16 row vectors the lanes of the current vector step read as converted floats.
  std::set<std::pair<ValueId, std::string>> f16_step_vectors_;
  // Row kernels with vector_width > 1: the vectors a pass may read, keyed by (value, index:
  // kElement or kColumn), each with its word variable; those the pass being emitted reads;
  // the bit arrays of the values the current step stores as vectors; the pointers whose
  // alignment selects the vector path.
  std::map<std::pair<ValueId, std::string>, std::string> row_vectors_;
  std::set<std::pair<ValueId, std::string>> row_vectors_used_;
  std::map<ValueId, std::string> row_vector_stores_;
  // Loaded values whose vector of the current step goes into the shared row cache.
  std::set<ValueId> shared_vector_stores_;
  std::set<std::string> aligned_ptrs_;
  // Elementwise vector steps: the operand index at the step's first element of each
  // broadcast whose lanes read consecutive (or one) operand indices (name, expression, the
  // operand's element count), the broadcasts using them, the lane indices "(ebK + j)" of the
  // contiguous ones, and the vectors loaded at a base, keyed by (loaded value, base).
  struct LaneBase {
    std::string name, index;
    int64_t elements = 0;
  };
  struct LaneBroadcast {
    size_t base = 0;
    bool contiguous = false;
  };
  std::vector<LaneBase> lane_broadcast_bases_;
  std::map<ValueId, LaneBroadcast> lane_broadcasts_;
  std::map<std::string, size_t> lane_broadcast_indices_;
  std::map<std::pair<ValueId, size_t>, std::string> lane_broadcast_vectors_;
  bool storing_elements_ = false;
  // Reading the next row ahead: whether the pass being emitted is a first pass taking its
  // vectors from the pf arrays, the vectors it took (emit_row_prefetch), and the row whose
  // flat indices vector steps compute ("row", or "pf_row" for the next row's loads).
  bool prefetch_pass_ = false;
  std::set<std::pair<ValueId, std::string>> prefetch_keys_;
  std::string row_name_ = kRowIndex;
  bool index32_ = false;                         // every index of the kernel fits in int
  std::string ix_ = "long long";                 // the type of row, c and f
  std::string split_partials_, split_counters_;  // scratch parameters of a split column tile or row
};

}  // namespace

std::string emit_kernel(const Graph& graph, const PlannedKernel& kernel) {
  if (!kernel.packed()) return KernelEmitter(graph, kernel).emit();
  // A packed launch: each part a device function over its range of blocks, and the kernel
  // that sends each block to its part.
  std::string text;
  std::ostringstream call;
  call.imbue(std::locale::classic());
  size_t shared = 0;
  for (size_t j = 0; j < kernel.parts.size(); ++j) {
    const KernelPart& part = kernel.parts[j];
    PlannedKernel alone;
    alone.name = kernel.name + "_part" + std::to_string(j);
    alone.spec = part.spec;
    for (size_t p : part.params) alone.params.push_back(kernel.params.at(p));
    KernelEmitter emitter(graph, alone, EmittedAs::kPart);
    text += emitter.emit();
    shared = std::max(shared, emitter.shared_bytes());
    const int64_t end = part.first_block + part.spec.grid_blocks;
    call << "  " << (j == 0 ? "if" : "} else if") << " (blockIdx.x < " << end << "u) {\n    " << alone.name
         << "(";
    for (size_t p : part.params) call << "p" << p << ", ";
    call << "blockIdx.x" << (part.first_block ? " - " + std::to_string(part.first_block) + "u" : "") << ", "
         << part.spec.grid_blocks << "u, fst_shared);\n";
  }
  call << "  }\n";
  // One shared buffer for all parts, as large as the largest part's arrays.
  const std::string buffer = shared == 0
                                 ? "  unsigned char* const fst_shared = nullptr;\n"
                                 : "  FST_SHARED(uint4, fst_packed_shared, " + std::to_string(shared / 16) +
                                       ");\n  unsigned char* const fst_shared = reinterpret_cast<unsigned "
                                       "char*>(fst_packed_shared);\n";
  std::ostringstream out;
  out.imbue(std::locale::classic());
  out << text << "extern \"C\" __global__ void " << launch_bounds(kernel.spec, true) << " " << kernel.name
      << "(";
  for (size_t i = 0; i < kernel.params.size(); ++i)
    out << (i ? ", " : "") << param_declaration(graph, kernel.params[i], "p" + std::to_string(i));
  out << ") {\n" << buffer << call.str() << "}\nFST_HOST_ENTRY(" << kernel.name << ")\n";
  return out.str();
}

std::string emit_module(const Graph& graph, const FusionPlan& plan) {
  std::string text = kernel_prelude();
  for (const PlannedKernel& k : plan.kernels) {
    text += "\n";
    text += emit_kernel(graph, k);
  }
  return text;
}

}  // namespace fstitch
