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
#include "codegen/index_maps.hpp"
#include "codegen/prelude.hpp"
#include "codegen/vector_access.hpp"
#include "support/error.hpp"

namespace fstitch {
namespace {

constexpr const char* kElement = "f";
constexpr const char* kRowIndex = "row";
// In row kernels: the element's column, its flat index over the reduced axes.
constexpr const char* kColumn = "c";
// Replaced, once the kernel is emitted, by the test of the pointers its vector accesses use.
constexpr const char* kAlignedMarker = "@FST_ALIGNED_POINTERS@";

std::string num(int64_t v) {
  return std::to_string(v) + "LL";
}

struct ReduceCode {
  std::string acc_type;
  std::string identity;
  std::string combine(const std::string& a, const std::string& b) const { return fn(a, b); }
  std::string (*fn)(const std::string&, const std::string&) = nullptr;
  bool float_math = false;
};

class KernelEmitter {
 public:
  KernelEmitter(const Graph& g, const PlannedKernel& k) : g_(g), k_(k), s_(k.spec) {
    out_.imbue(std::locale::classic());  // a global locale would group the digits of numbers
    for (ValueId v : s_.members) members_.insert(v);
    for (ValueId v : s_.cached) cached_.insert(v);
    for (ValueId v : s_.inlined) inlined_.insert(v);
  }

  std::string emit() {
    signature();
    if (s_.reduced_axes.empty()) {
      elementwise_body();
    } else if (s_.schedule == ScheduleKind::kColumnTile) {
      column_tile_body();
    } else {
      row_body();
    }
    out_ << "}\nFST_HOST_ENTRY(" << k_.name << ")\n";
    std::string text = out_.str();
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
    // No minimum-blocks hint: under one, ptxas was seen to spill kernels that need fewer
    // registers than it allows. The grid is sized from a register estimate that stays above
    // what ptxas uses (plan/cost_model.cpp), so the occupancy planned is there.
    out_ << "extern \"C\" __global__ void __launch_bounds__(" << s_.block_threads;
    out_ << ") " << k_.name << "(";
    for (size_t i = 0; i < k_.params.size(); ++i) {
      const KernelParam& p = k_.params[i];
      const std::string name = "p" + std::to_string(i);
      if (p.is_scratch()) {  // raw workspace bytes, no graph value
        const bool counters = p.scratch == ParamScratch::kSplitCounters;
        out_ << (i ? ", " : "") << (counters ? "unsigned int" : "unsigned char") << "* __restrict__ " << name;
        (counters ? split_counters_ : split_partials_) = name;
        continue;
      }
      const DType t = g_.node(p.value).dtype;
      // A parameter that may share memory with another (an in-place update) is not restrict.
      const char* qualifier = p.aliasing == ParamAliasing::kMayAlias ? "* " : "* __restrict__ ";
      out_ << (i ? ", " : "") << (p.written ? "" : "const ") << storage_type(t) << qualifier << name;
      if (p.written) {
        store_ptrs_[p.stored_value()].push_back(name);
      } else {
        load_ptr_[p.value] = name;
      }
    }
    out_ << ") {\n";
    indent_ = 1;
  }

  // ---- values -----------------------------------------------------------------------

  std::string fresh(ValueId v) { return "v" + std::to_string(v) + "_" + std::to_string(counter_++); }

  std::string define(ValueId v, const std::string& expr) {
    std::string name = fresh(v);
    line("const " + std::string(compute_type(g_.node(v).dtype)) + " " + name + " = " + expr + ";");
    return name;
  }

  bool is_member(ValueId v) const { return members_.count(v) != 0; }

  // The operand's index for a consumer evaluated at `idx`.
  std::string operand_index(ValueId v, const std::string& idx, ValueId operand) {
    const Node& n = g_.node(v);
    const Node& o = g_.node(operand);
    switch (n.op) {
      case OpKind::kBroadcast:
        if (idx == kElement && is_member(operand) && s_.role(operand) == ValueRole::kRow &&
            row_shaped_operand(o.dims)) {
          return kRowIndex;
        }
        if (idx == kElement && !is_member(operand) && !s_.reduced_axes.empty() &&
            row_shaped_operand(o.dims)) {
          return kRowIndex;
        }
        // Broadcast over the rows (gamma, beta, a bias): read at the column the loop has (row
        // loops have one; a column tile indexes its elements otherwise).
        if (idx == kElement && !s_.reduced_axes.empty() && s_.schedule != ScheduleKind::kColumnTile &&
            column_shaped_operand(o.dims) &&
            (!is_member(operand) || s_.role(operand) == ValueRole::kIndexed)) {
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

  bool row_shaped_operand(const Dims& dims) const {
    // Broadcast from an aligned row shape: the operand's flat index is the row index.
    if (dims.size() > s_.domain.size()) return false;
    const size_t offset = s_.domain.size() - dims.size();
    for (size_t i = 0; i < s_.domain.size(); ++i) {
      bool reduced = false;
      for (int64_t a : s_.reduced_axes) reduced = reduced || a == static_cast<int64_t>(i);
      const int64_t d = i < offset ? 1 : dims[i - offset];
      if (reduced ? d != 1 : d != s_.domain[i]) return false;
    }
    return true;
  }

  // Broadcast from the reduced axes alone (dim 1 on every kept axis, right-aligned): the
  // operand's flat index is the column c, the flat index over the reduced axes.
  bool column_shaped_operand(const Dims& dims) const {
    if (dims.size() > s_.domain.size()) return false;
    const size_t offset = s_.domain.size() - dims.size();
    for (size_t i = 0; i < s_.domain.size(); ++i) {
      bool reduced = false;
      for (int64_t a : s_.reduced_axes) reduced = reduced || a == static_cast<int64_t>(i);
      const int64_t d = i < offset ? 1 : dims[i - offset];
      if (reduced ? d != s_.domain[i] : d != 1) return false;
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
    if (inlined_.count(v)) {
      result = compute(v, idx);
    } else if (!is_member(v)) {
      auto p = load_ptr_.find(v);
      if (p == load_ptr_.end())
        fail(StatusCode::kInternal, "codegen: no parameter for %" + std::to_string(v));
      if (cached_.count(v) && idx == kElement && cache_ready_.count(v)) {
        scope_[key] = cache_slot(v);  // kept from an earlier pass: no load
        return cache_slot(v);
      }
      std::string e = load_expr(n.dtype, p->second, idx);
      if (idx == kElement && vector_lane_ >= 0 && vector_words_.count(v)) {
        e = from_storage_expr(n.dtype, storage_from_bits(n.dtype, element_bits(v, vector_lane_)));
      }
      const auto rv = row_vectors_.find(key);
      if (vector_lane_ >= 0 && rv != row_vectors_.end()) {
        const int size = static_cast<int>(dtype_size(n.dtype));
        e = from_storage_expr(
            n.dtype, storage_from_bits(n.dtype, vector_element_bits(rv->second, size, size * s_.vector_width,
                                                                    vector_lane_)));
        row_vectors_used_.insert(key);
      }
      if (idx == kRowIndex && !in_element_loop_)
        e = "(row_ok ? " + e + " : " + literal(n.dtype, Scalar{}) + ")";
      if (cached_.count(v) && idx == kElement) return cached_value(v, e);
      result = define(v, e);
    } else if (s_.role(v) == ValueRole::kRow && !s_.pure(v) && idx != kRowIndex && idx != kElement) {
      fail(StatusCode::kInternal, "codegen: row value %" + std::to_string(v) + " requested at another row");
    } else if (s_.role(v) == ValueRole::kRow && !s_.pure(v)) {
      auto r = row_vars_.find(v);
      if (r == row_vars_.end())
        fail(StatusCode::kInternal, "codegen: row value %" + std::to_string(v) + " not ready");
      return r->second;
    } else {
      if (cached_.count(v) && idx == kElement && cache_ready_.count(v)) return cache_slot(v);
      result = compute(v, idx);
      if (cached_.count(v) && idx == kElement) {
        line(cache_slot(v) + " = " + result + ";");
        cache_ready_.insert(v);
      }
    }
    scope_[key] = result;
    return result;
  }

  // Where a cached element value lives for the current element: a register array indexed by
  // the element's step j, or the shared-memory buffer indexed by the column c.
  std::string cache_slot(ValueId v) const {
    if (s_.cache == RowCache::kShared) {
      const auto it = std::lower_bound(s_.cached.begin(), s_.cached.end(), v);
      const size_t k = static_cast<size_t>(it - s_.cached.begin());
      return "fst_row_cache" + std::to_string(s_.cache_buffer[k]) + "[c]";
    }
    return "cache" + std::to_string(v) + "[j]";
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
        const DType operand_type = g_.node(n.operands[0]).dtype;
        std::string e = elementwise_expr(n, operand_type, a);
        return define(v, op_yields_bool(n.op) ? e : round_expr(n.dtype, e));
      }
      case OpFamily::kSelect: {
        std::vector<std::string> a;
        for (ValueId o : n.operands) a.push_back(value_at(o, operand_index(v, idx, o)));
        return define(v, "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")");
      }
      case OpFamily::kCast: {
        ValueId o = n.operands[0];
        return define(v, cast_expr(g_.node(o).dtype, n.dtype, value_at(o, idx)));
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
      line(bits->second + "[" + std::to_string(vector_lane_) +
           "] = " + bits_from_storage(t, store_value_expr(t, value)) + ";");
      return;
    }
    for (const std::string& ptr : p->second) {
      line(ptr + "[" + idx + "] = " + store_value_expr(g_.node(v).dtype, value) + ";");
    }
  }

  // The element values of the stored values (empty for a row kernel's row values), all
  // computed before any is stored: an output that updates an input in place overwrites an
  // element only after every read of it.
  std::vector<std::string> stored_element_values() {
    std::vector<std::string> values;
    for (ValueId v : s_.stored) {
      const bool element = s_.reduced_axes.empty() || s_.role(v) == ValueRole::kElement;
      values.push_back(element ? value_at(v, kElement) : std::string());
    }
    return values;
  }

  void store_element_values() {
    const std::vector<std::string> values = stored_element_values();
    for (size_t i = 0; i < s_.stored.size(); ++i) {
      if (!values[i].empty()) store(s_.stored[i], kElement, values[i]);
    }
  }

  // ---- elementwise schedule ---------------------------------------------------------

  void elementwise_body() {
    const int64_t n = element_count(s_.domain);
    line("const long long n = " + num(n) + ";");
    line("const long long gtid = (long long)blockIdx.x * blockDim.x + threadIdx.x;");
    line("const long long stride = (long long)gridDim.x * blockDim.x;");
    // 16-byte accesses: each thread takes V consecutive elements, V set by the widest
    // element among the element-shaped loads and the stores. Values whose V elements span
    // fewer than 4 bytes stay scalar. Pointers not 16-byte aligned take the scalar loop.
    size_t widest = 0;
    std::vector<ValueId> vector_loads;
    // The domain is flat: a value of its element count is an element value whatever its dims.
    auto element_shaped = [&](ValueId v) { return element_count(g_.node(v).dims) == n; };
    for (ValueId v : s_.loaded) {
      if (element_shaped(v)) widest = std::max(widest, dtype_size(g_.node(v).dtype));
    }
    for (ValueId v : s_.stored) widest = std::max(widest, dtype_size(g_.node(v).dtype));
    const int V = widest == 0 ? 1 : static_cast<int>(16 / widest);
    vector_width_ = V;
    std::vector<std::string> aligned_ptrs;
    if (V >= 2 && n >= V) {
      for (ValueId v : s_.loaded) {
        if (element_shaped(v) && V * dtype_size(g_.node(v).dtype) >= 4) {
          vector_loads.push_back(v);
          aligned_ptrs.push_back(load_ptr_.at(v));
        }
      }
      for (ValueId v : s_.stored) {
        if (V * dtype_size(g_.node(v).dtype) < 4 || !store_ptrs_.count(v)) continue;
        for (const std::string& p : store_ptrs_.at(v)) aligned_ptrs.push_back(p);
      }
    }
    if (!aligned_ptrs.empty()) {
      std::string any = "0ull";
      for (const std::string& p : aligned_ptrs) any += " | (unsigned long long)" + p;
      line("const bool aligned = ((" + any + ") & 15ull) == 0;");
      line("const long long nvec = aligned ? n / " + std::to_string(V) + " : 0;");
      line("for (long long q = gtid; q < nvec; q += stride) {");
      ++indent_;
      line("const long long base = q * " + std::to_string(V) + ";");
      for (ValueId v : vector_loads) {
        const int bytes = V * static_cast<int>(dtype_size(g_.node(v).dtype));
        const std::string name = "w" + std::to_string(v);
        line("const " + vector_type(bytes) + " " + name + " = *reinterpret_cast<const " + vector_type(bytes) +
             "*>(" + load_ptr_.at(v) + " + base);");
        vector_words_[v] = name;
      }
      std::vector<ValueId> vector_stores;
      for (ValueId v : s_.stored) {
        if (V * dtype_size(g_.node(v).dtype) >= 4 && store_ptrs_.count(v)) {
          vector_stores.push_back(v);
          line("unsigned long long b" + std::to_string(v) + "[" + std::to_string(V) + "];");
        }
      }
      in_element_loop_ = true;
      for (int j = 0; j < V; ++j) {
        line("{");
        ++indent_;
        line("const long long f = base + " + std::to_string(j) + ";");
        auto saved = scope_;
        vector_lane_ = j;
        const std::vector<std::string> values = stored_element_values();
        for (size_t i = 0; i < s_.stored.size(); ++i) {
          const ValueId v = s_.stored[i];
          if (std::find(vector_stores.begin(), vector_stores.end(), v) != vector_stores.end()) {
            const DType t = g_.node(v).dtype;
            line("b" + std::to_string(v) + "[" + std::to_string(j) +
                 "] = " + bits_from_storage(t, store_value_expr(t, values[i])) + ";");
          } else {
            store(v, kElement, values[i]);
          }
        }
        vector_lane_ = -1;
        scope_ = std::move(saved);
        --indent_;
        line("}");
      }
      in_element_loop_ = false;
      for (ValueId v : vector_stores) {
        const int size = static_cast<int>(dtype_size(g_.node(v).dtype));
        const int bytes = V * size;
        const std::string word_var = "o" + std::to_string(v);
        line(vector_type(bytes) + " " + word_var + ";");
        const int words = bytes / 4;
        for (int w = 0; w < words; ++w) {
          std::string expr;
          for (int j = 0; j < V; ++j) {
            const std::string b = "b" + std::to_string(v) + "[" + std::to_string(j) + "]";
            if (size == 8) {
              if (j * 2 == w) expr = "(unsigned)" + b;
              if (j * 2 + 1 == w) expr = "(unsigned)(" + b + " >> 32)";
            } else if ((j * size) / 4 == w) {
              const int shift = ((j * size) % 4) * 8;
              const std::string part =
                  "((unsigned)" + b + (shift ? " << " + std::to_string(shift) : "") + ")";
              expr += (expr.empty() ? "" : " | ") + part;
            }
          }
          line(vector_word(word_var, bytes, w) + " = " + expr + ";");
        }
        for (const std::string& p : store_ptrs_.at(v)) {
          line("*reinterpret_cast<" + vector_type(bytes) + "*>(" + p + " + base) = " + word_var + ";");
        }
      }
      vector_words_.clear();
      --indent_;
      line("}");
      line("for (long long f = nvec * " + std::to_string(V) + " + gtid; f < n; f += stride) {");
    } else {
      line("for (long long f = gtid; f < n; f += stride) {");
    }
    ++indent_;
    in_element_loop_ = true;
    store_element_values();
    in_element_loop_ = false;
    --indent_;
    line("}");
  }

  // The raw bits of element j of a vector-loaded value.
  std::string element_bits(ValueId v, int j) const {
    const int size = static_cast<int>(dtype_size(g_.node(v).dtype));
    return vector_element_bits(vector_words_.at(v), size, vector_bytes_of(v), j);
  }

  int vector_bytes_of(ValueId v) const {
    return vector_width_ * static_cast<int>(dtype_size(g_.node(v).dtype));
  }

  // ---- row schedules ----------------------------------------------------------------

  // An index constant of the kernel's index type.
  std::string inum(int64_t v) const { return index32_ ? std::to_string(v) : num(v); }

  // 32-bit indices when every tensor the kernel touches, and the domain, has fewer than
  // 2^31 - 1024 elements (the rows a block runs past the last one stay in range too).
  bool fits_32bit_indices() const {
    constexpr int64_t kLimit = (int64_t{1} << 31) - 1024;
    auto fits = [&](ValueId v) { return element_count(g_.node(v).dims) < kLimit; };
    if (element_count(s_.domain) >= kLimit) return false;
    for (const KernelParam& p : k_.params) {
      if (!fits(p.value)) return false;
    }
    for (ValueId v : s_.members) {
      if (!fits(v)) return false;
    }
    for (ValueId v : s_.inlined) {
      if (!fits(v)) return false;
    }
    return true;
  }

  ReduceCode reduce_code(const Node& n) const {
    const DType t = n.dtype;
    ReduceCode rc;
    const bool fp = is_float(t);
    rc.float_math = fp;
    const bool dbl = computes_in_double(t);
    switch (n.op) {
      case OpKind::kReduceSum:
      case OpKind::kReduceMean:
        rc.acc_type = fp ? (dbl ? "double" : "float") : "long long";
        rc.identity = fp ? (dbl ? "0.0" : "0.0f") : "0LL";
        rc.fn =
            fp ? +[](const std::string& a, const std::string& b) { return "(" + a + " + " + b + ")"; }
               : +[](const std::string& a, const std::string& b) {
                   return "(long long)((unsigned long long)(" + a + ") + (unsigned long long)(" + b + "))";
                 };
        break;
      case OpKind::kReduceProd:
        rc.acc_type = fp ? (dbl ? "double" : "float") : "long long";
        rc.identity = fp ? (dbl ? "1.0" : "1.0f") : "1LL";
        rc.fn =
            fp ? +[](const std::string& a, const std::string& b) { return "(" + a + " * " + b + ")"; }
               : +[](const std::string& a, const std::string& b) {
                   return "(long long)((unsigned long long)(" + a + ") * (unsigned long long)(" + b + "))";
                 };
        break;
      case OpKind::kReduceMax:
      case OpKind::kReduceMin: {
        const bool is_max = n.op == OpKind::kReduceMax;
        rc.acc_type = compute_type(t);
        if (fp) {
          rc.identity = dbl ? (is_max ? "__longlong_as_double((long long)0xfff0000000000000ULL)"
                                      : "__longlong_as_double(0x7ff0000000000000LL)")
                            : (is_max ? "__int_as_float((int)0xff800000u)" : "__int_as_float(0x7f800000)");
          if (dbl) {
            rc.fn = is_max ? +[](const std::string& a,
                                 const std::string& b) { return "fst_maxd(" + a + ", " + b + ")"; }
                           : +[](const std::string& a, const std::string& b) {
                               return "fst_mind(" + a + ", " + b + ")";
                             };
          } else {
            rc.fn = is_max ? +[](const std::string& a,
                                 const std::string& b) { return "fst_maxf(" + a + ", " + b + ")"; }
                           : +[](const std::string& a, const std::string& b) {
                               return "fst_minf(" + a + ", " + b + ")";
                             };
          }
        } else {
          rc.identity = literal(t, Scalar{0, is_max ? integer_min(t) : integer_max(t)});
          rc.fn =
              is_max ? +[](const std::string& a,
                           const std::string& b) { return "(" + a + " > " + b + " ? " + a + " : " + b + ")"; }
                     : +[](const std::string& a, const std::string& b) {
                         return "(" + a + " < " + b + " ? " + a + " : " + b + ")";
                       };
        }
        break;
      }
      default:
        fail(StatusCode::kInternal, "codegen: not a reduction");
    }
    return rc;
  }

  std::string element_index_expr() const {
    if (s_.contiguous_rows) return "row * " + inum(s_.cols) + " + c";
    // Unravel row over the kept axes and c over the reduced axes.
    const Dims strides = row_major_strides(s_.domain);
    Dims kept, kept_strides, red, red_strides;
    for (size_t i = 0; i < s_.domain.size(); ++i) {
      bool reduced = false;
      for (int64_t a : s_.reduced_axes) reduced = reduced || a == static_cast<int64_t>(i);
      (reduced ? red : kept).push_back(s_.domain[i]);
      (reduced ? red_strides : kept_strides).push_back(strides[i]);
    }
    auto part = [this](const std::string& var, const Dims& dims, const Dims& dstrides) {
      const Dims local = row_major_strides(dims);
      std::string sum;
      for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] == 1) continue;
        std::string coord = var;
        if (local[i] != 1) coord = "(" + coord + " / " + inum(local[i]) + ")";
        if (i != 0) coord = "(" + coord + " % " + inum(dims[i]) + ")";
        sum += (sum.empty() ? "" : " + ") + coord + " * " + inum(dstrides[i]);
      }
      return sum.empty() ? inum(0) : sum;
    };
    return part("row", kept, kept_strides) + " + " + part("c", red, red_strides);
  }

  void emit_row_values(int level) {
    for (ValueId v : s_.members) {
      if (s_.role(v) != ValueRole::kRow || s_.level(v) != level) continue;
      if (op_family(g_.node(v).op) == OpFamily::kReduce) continue;  // finalized after its pass
      const std::string value = s_.pure(v) ? value_at(v, kRowIndex) : compute(v, kRowIndex);
      row_vars_[v] = value;
      scope_[std::make_pair(v, std::string(kRowIndex))] = value;
    }
    store_row_values(level);
  }

  void store_row_values(int level) {
    for (ValueId v : s_.stored) {
      if (s_.role(v) != ValueRole::kRow || s_.level(v) != level) continue;
      line("if (row_ok && lane == 0) {");
      ++indent_;
      store(v, kRowIndex, row_vars_.count(v) ? row_vars_[v] : value_at(v, kRowIndex));
      --indent_;
      line("}");
    }
  }

  void allreduce(const ReduceCode& rc, const std::string& acc) {
    const int T = s_.threads_per_row;
    if (T == 1) return;
    const int warp_width = T < 32 ? T : 32;
    // One shuffle per step, outside the combine: every lane must reach the same call.
    line("for (int o = " + std::to_string(warp_width / 2) + "; o > 0; o >>= 1) {");
    line("  const " + rc.acc_type + " other = __shfl_xor_sync(0xffffffffu, " + acc + ", o);");
    line("  " + acc + " = " + rc.combine(acc, "other") + ";");
    line("}");
    if (T <= 32) return;
    const std::string smem = "fst_red_" + smem_suffix(rc.acc_type);
    line("if (lane % 32 == 0) " + smem + "[lane / 32] = " + acc + ";");
    line("__syncthreads();");
    line(acc + " = " + smem + "[0];");
    line("for (int w = 1; w < " + std::to_string(T / 32) + "; ++w) " + acc + " = " +
         rc.combine(acc, smem + "[w]") + ";");
    line("__syncthreads();");
  }

  static std::string smem_suffix(const std::string& type) {
    if (type == "float") return "f";
    if (type == "double") return "d";
    if (type == "long long") return "l";
    return "i";
  }

  // ---- row element loops ------------------------------------------------------------
  // A pass visits the thread's elements of its row. With vector_width V > 1 the thread owns
  // the vectors lane, lane + T... of V consecutive elements; each vector is read with one
  // access (or, where a pointer is not aligned to 16 bytes, assembled from scalar reads), so
  // both paths visit the same elements in the same order and give the same bits. The row
  // guard is tested once per row; full tiles carry no per-element guard, a tail step does.

  bool unrolled_cache() const { return s_.cache == RowCache::kRegisters && !s_.cached.empty(); }

  // The body at one element whose c (and j) the caller has defined.
  void element_step(const std::function<void()>& body) {
    line("const " + ix_ + " f = " + element_index_expr() + ";");
    auto saved = scope_;
    in_element_loop_ = true;
    cache_loaded_this_pass_.clear();
    body();
    in_element_loop_ = false;
    scope_ = std::move(saved);
  }

  void element_loop(const std::function<void()>& body) {
    line("if (row_ok) {");
    ++indent_;
    if (s_.vector_width > 1) {
      vector_element_loop(body);
    } else {
      scalar_element_loop(body);
    }
    --indent_;
    line("}");
  }

  void scalar_element_loop(const std::function<void()>& body) {
    const std::string T = std::to_string(s_.threads_per_row);
    if (!unrolled_cache()) {
      line("for (" + ix_ + " c = lane; c < " + inum(s_.cols) + "; c += " + T + ") {");
      ++indent_;
      element_step(body);
      --indent_;
      line("}");
      return;
    }
    // The row cache is indexed by the step j: unrolled, so it stays in registers.
    const int64_t full = s_.cols / s_.threads_per_row;  // steps where every thread has an element
    const std::set<ValueId> ready = cache_ready_;
    if (full > 0) {
      line("#pragma unroll");
      line("for (int j = 0; j < " + std::to_string(full) + "; ++j) {");
      ++indent_;
      line("const " + ix_ + " c = lane + j * " + T + ";");
      element_step(body);
      --indent_;
      line("}");
    }
    if (s_.elems_per_thread > full) {  // the tail: one more step for the first cols % T threads
      cache_ready_ = ready;            // the tail fills the caches for its elements too
      line("{");
      ++indent_;
      line("const int j = " + std::to_string(full) + ";");
      line("const " + ix_ + " c = lane + j * " + T + ";");
      line("if (c < " + inum(s_.cols) + ") {");
      ++indent_;
      element_step(body);
      --indent_;
      line("}");
      --indent_;
      line("}");
    }
  }

  // Emits what `emit` writes into a string instead of the kernel text.
  std::string capture(const std::function<void()>& emit) {
    std::ostringstream text;
    text.imbue(std::locale::classic());
    std::swap(out_, text);
    emit();
    std::swap(out_, text);
    return text.str();
  }

  // The word variables of the vectors a pass reads, named for step `k` of an unrolled pass
  // (arrays over the steps) or for the single step of a strided one.
  void name_row_vectors(bool per_step) {
    for (auto& [key, var] : row_vectors_) {
      var = std::string(key.second == kColumn ? "wc" : "w") + std::to_string(key.first) +
            (per_step ? "[k]" : "");
    }
  }

  // Reads the vectors the pass uses at the step whose cb / fb are defined: whole vectors
  // when every pointer is aligned, else the same words from scalar reads.
  void load_row_vectors(bool aligned) {
    for (const auto& key : row_vectors_used_) {
      const ValueId v = key.first;
      const DType t = g_.node(v).dtype;
      const int bytes = s_.vector_width * static_cast<int>(dtype_size(t));
      const std::string& var = row_vectors_.at(key);
      const std::string& ptr = load_ptr_.at(v);
      const std::string offset = key.second == kColumn ? "cb" : "fb";
      if (aligned) {
        aligned_ptrs_.insert(ptr);
        line(var + " = *reinterpret_cast<const " + vector_type(bytes) + "*>(" + ptr + " + " + offset + ");");
      } else {
        for (const std::string& l : pack_vector_words(var, t, s_.vector_width,
                                                      bits_of_scalar_loads(t, s_.vector_width, ptr, offset)))
          line(l);
      }
    }
  }

  void define_vector_base(const std::string& q) {
    line("const " + ix_ + " cb = " + q + " * " + std::to_string(s_.vector_width) + ";");
    line("const " + ix_ + " fb = row * " + inum(s_.cols) + " + cb;");
  }

  // The elements of one vector step (cb, fb and, unrolled, k defined), then the vector
  // stores of what they computed.
  void vector_lanes(bool per_step, const std::function<void()>& body) {
    const int V = s_.vector_width;
    std::vector<ValueId> stores;
    if (storing_elements_) {
      for (ValueId v : s_.stored) {
        const int bytes = V * static_cast<int>(dtype_size(g_.node(v).dtype));
        if (s_.role(v) != ValueRole::kElement || !store_ptrs_.count(v) || bytes < 4 || bytes > 16) continue;
        stores.push_back(v);
        const std::string bits = "b" + std::to_string(v);
        row_vector_stores_[v] = bits;
        line(std::string(bytes / V == 8 ? "unsigned long long " : "unsigned ") + bits + "[" +
             std::to_string(V) + "];");
      }
    }
    // Each element fills the caches for itself: every lane starts from the same state.
    const std::set<ValueId> ready = cache_ready_;
    for (int lane = 0; lane < V; ++lane) {
      cache_ready_ = ready;
      line("{");
      ++indent_;
      line("const " + ix_ + " c = cb + " + std::to_string(lane) + ";");
      if (per_step) line("const int j = k * " + std::to_string(V) + " + " + std::to_string(lane) + ";");
      vector_lane_ = lane;
      element_step(body);
      vector_lane_ = -1;
      --indent_;
      line("}");
    }
    for (ValueId v : stores) {
      const DType t = g_.node(v).dtype;
      const int bytes = V * static_cast<int>(dtype_size(t));
      const std::string bits = row_vector_stores_.at(v), word_var = "o" + std::to_string(v);
      std::vector<std::string> lane_bits;
      for (int lane = 0; lane < V; ++lane) lane_bits.push_back(bits + "[" + std::to_string(lane) + "]");
      line(vector_type(bytes) + " " + word_var + ";");
      for (const std::string& l : pack_vector_words(word_var, t, V, lane_bits)) line(l);
      line("if (aligned) {");
      for (const std::string& p : store_ptrs_.at(v)) {
        aligned_ptrs_.insert(p);
        line("  *reinterpret_cast<" + vector_type(bytes) + "*>(" + p + " + fb) = " + word_var + ";");
      }
      line("} else {");
      for (const std::string& p : store_ptrs_.at(v)) {
        for (int lane = 0; lane < V; ++lane)
          line("  " + p + "[fb + " + std::to_string(lane) + "] = " + storage_from_bits(t, lane_bits[lane]) +
               ";");
      }
      line("}");
    }
    row_vector_stores_.clear();
  }

  void vector_element_loop(const std::function<void()>& body) {
    const int64_t T = s_.threads_per_row;
    const int64_t vectors = s_.cols / s_.vector_width;
    const std::string Ts = std::to_string(T);
    row_vectors_used_.clear();
    if (!unrolled_cache()) {
      name_row_vectors(false);
      line("for (" + ix_ + " q = lane; q < " + inum(vectors) + "; q += " + Ts + ") {");
      ++indent_;
      define_vector_base("q");
      const std::string lanes = capture([&] { vector_lanes(false, body); });
      for (const auto& key : row_vectors_used_) {
        const int bytes = s_.vector_width * static_cast<int>(dtype_size(g_.node(key.first).dtype));
        line(vector_type(bytes) + " " + row_vectors_.at(key) + ";");
      }
      if (!row_vectors_used_.empty()) {
        line("if (aligned) {");
        ++indent_;
        load_row_vectors(true);
        --indent_;
        line("} else {");
        ++indent_;
        load_row_vectors(false);
        --indent_;
        line("}");
      }
      out_ << lanes;
      --indent_;
      line("}");
      return;
    }
    // The row cache is indexed by j = k * V + lane: unrolled, so it stays in registers. All
    // vectors of the pass are read first, then computed on.
    name_row_vectors(true);
    const int64_t full = vectors / T, steps = (vectors + T - 1) / T;
    const std::set<ValueId> ready = cache_ready_;
    const std::string compute = capture([&] {
      if (full > 0) {
        line("#pragma unroll");
        line("for (int k = 0; k < " + std::to_string(full) + "; ++k) {");
        ++indent_;
        define_vector_base("(lane + k * " + Ts + ")");
        vector_lanes(true, body);
        --indent_;
        line("}");
      }
      if (steps > full) {  // the tail: one more vector for the first vectors % T threads
        cache_ready_ = ready;
        tail_step([&] {
          define_vector_base("(lane + k * " + Ts + ")");
          vector_lanes(true, body);
        });
      }
    });
    for (const auto& key : row_vectors_used_) {
      const int bytes = s_.vector_width * static_cast<int>(dtype_size(g_.node(key.first).dtype));
      line(vector_type(bytes) + " w" + std::string(key.second == kColumn ? "c" : "") +
           std::to_string(key.first) + "[" + std::to_string(steps) + "];");
    }
    for (bool aligned : {true, false}) {
      if (row_vectors_used_.empty()) break;  // the pass reads from the caches only
      line(aligned ? "if (aligned) {" : "} else {");
      ++indent_;
      if (full > 0) {
        line("#pragma unroll");
        line("for (int k = 0; k < " + std::to_string(full) + "; ++k) {");
        ++indent_;
        define_vector_base("(lane + k * " + Ts + ")");
        load_row_vectors(aligned);
        --indent_;
        line("}");
      }
      if (steps > full) {
        tail_step([&] {
          define_vector_base("(lane + k * " + Ts + ")");
          load_row_vectors(aligned);
        });
      }
      --indent_;
    }
    if (!row_vectors_used_.empty()) line("}");
    out_ << compute;
  }

  // The last, partial vector step k = vectors / T, taken by the threads that have a vector.
  void tail_step(const std::function<void()>& emit) {
    const int64_t T = s_.threads_per_row;
    const int64_t vectors = s_.cols / s_.vector_width;
    line("{");
    ++indent_;
    line("const int k = " + std::to_string(vectors / T) + ";");
    line("if (lane + k * " + std::to_string(T) + " < " + inum(vectors) + ") {");
    ++indent_;
    emit();
    --indent_;
    line("}");
    --indent_;
    line("}");
  }

  void row_body() {
    const int T = s_.threads_per_row;
    const int B = s_.block_threads;
    const int64_t rows_per_block = B / T;
    // Shared scratch for block-wide reductions, declared unconditionally at the top.
    std::set<std::string> smem_types;
    if (T > 32) {
      for (ValueId v : s_.members) {
        if (op_family(g_.node(v).op) == OpFamily::kReduce)
          smem_types.insert(reduce_code(g_.node(v)).acc_type);
      }
    }
    for (const std::string& type : smem_types)
      line("FST_SHARED(" + type + ", fst_red_" + smem_suffix(type) + ", 32);");
    if (s_.cache == RowCache::kShared && s_.dynamic_shared_bytes > 0) {
      // Past the static limit: the buffers are carved from dynamic shared memory, each at a
      // 16-byte boundary (the launch passes s_.dynamic_shared_bytes).
      line("FST_DYNAMIC_SHARED(double, fst_dynamic_shared);");
      size_t offset = 0;
      for (size_t b = 0; b < s_.shared_buffer_types.size(); ++b) {
        const DType t = s_.shared_buffer_types[b];
        const std::string type = compute_type(t);
        line(type + "* const fst_row_cache" + std::to_string(b) + " = reinterpret_cast<" + type +
             "*>(reinterpret_cast<unsigned char*>(fst_dynamic_shared) + " + std::to_string(offset) + ");");
        const size_t element_bytes = t == DType::kF64 || t == DType::kI64 ? 8 : 4;
        offset += (static_cast<size_t>(s_.cols) * element_bytes + 15) / 16 * 16;
      }
    } else if (s_.cache == RowCache::kShared) {
      for (size_t b = 0; b < s_.shared_buffer_types.size(); ++b) {
        line("FST_SHARED(" + std::string(compute_type(s_.shared_buffer_types[b])) + ", fst_row_cache" +
             std::to_string(b) + ", " + std::to_string(s_.cols) + ");");
      }
    }
    index32_ = fits_32bit_indices();
    ix_ = index32_ ? "int" : "long long";
    if (s_.vector_width > 1) {
      line(std::string("const bool aligned = ") + kAlignedMarker + ";");
      const int V = s_.vector_width;
      for (ValueId v : s_.loaded) {
        const Dims& dims = g_.node(v).dims;
        const int bytes = V * static_cast<int>(dtype_size(g_.node(v).dtype));
        if (bytes < 4 || bytes > 16) continue;
        if (dims == s_.domain) row_vectors_[std::make_pair(v, std::string(kElement))] = "";
        if (column_shaped_operand(dims)) row_vectors_[std::make_pair(v, std::string(kColumn))] = "";
      }
    }
    line("const int lane = threadIdx.x % " + std::to_string(T) + ";");
    line("const int slot = threadIdx.x / " + std::to_string(T) + ";");
    line("for (long long row_base = (long long)blockIdx.x * " + num(rows_per_block) + "; row_base < " +
         num(s_.rows) + "; row_base += (long long)gridDim.x * " + num(rows_per_block) + ") {");
    ++indent_;
    line("const " + ix_ + " row = (" + ix_ + ")(row_base + slot);");
    line("const bool row_ok = row < " + inum(s_.rows) + ";");
    line("(void)row_ok;");
    if (s_.cache == RowCache::kRegisters) {
      for (ValueId v : s_.cached) {
        line(std::string(compute_type(g_.node(v).dtype)) + " cache" + std::to_string(v) + "[" +
             std::to_string(s_.elems_per_thread) + "];");
      }
    }
    emit_row_values(0);
    for (int pass = 0; pass < s_.phases; ++pass) {
      std::vector<ValueId> reduces;
      for (ValueId v : s_.members) {
        if (op_family(g_.node(v).op) == OpFamily::kReduce && s_.level(v) == pass + 1) reduces.push_back(v);
      }
      for (ValueId v : reduces) {
        ReduceCode rc = reduce_code(g_.node(v));
        line(rc.acc_type + " acc" + std::to_string(v) + " = " + rc.identity + ";");
      }
      element_loop([&] {
        for (ValueId v : reduces) {
          ReduceCode rc = reduce_code(g_.node(v));
          const std::string x = value_at(g_.node(v).operands[0], kElement);
          const std::string acc = "acc" + std::to_string(v);
          line(acc + " = " + rc.combine(acc, "(" + rc.acc_type + ")" + x) + ";");
        }
      });
      for (ValueId v : reduces) {
        const Node& n = g_.node(v);
        ReduceCode rc = reduce_code(n);
        const std::string acc = "acc" + std::to_string(v);
        allreduce(rc, acc);
        std::string result = acc;
        if (n.op == OpKind::kReduceMean) {
          const bool dbl = computes_in_double(n.dtype);
          const bool power_of_two = (s_.cols & (s_.cols - 1)) == 0;
          // Dividing by 2^k and multiplying by 2^-k round the same exact quotient: identical
          // results. Any other divisor stays a division (its reciprocal would round twice).
          result = power_of_two ? "(" + acc + " * " +
                                      literal(dbl ? DType::kF64 : DType::kF32,
                                              Scalar{1.0 / static_cast<double>(s_.cols), 0}) +
                                      ")"
                                : "(" + acc + " / " + (dbl ? "(double)" : "(float)") + num(s_.cols) + ")";
        }
        const std::string name = "r" + std::to_string(v);
        line("const " + std::string(compute_type(n.dtype)) + " " + name + " = " +
             round_expr(n.dtype, "(" + std::string(compute_type(n.dtype)) + ")" + result) + ";");
        row_vars_[v] = name;
        scope_[std::make_pair(v, std::string(kRowIndex))] = name;
      }
      emit_row_values(pass + 1);
    }
    bool stores_elements = false;
    for (ValueId v : s_.stored) stores_elements = stores_elements || s_.role(v) == ValueRole::kElement;
    if (stores_elements) {
      storing_elements_ = true;
      element_loop([&] { store_element_values(); });
      storing_elements_ = false;
    }
    --indent_;
    line("}");
  }

#include "codegen/column_tile_body.inc"

  const Graph& g_;
  const PlannedKernel& k_;
  const KernelSpec& s_;
  std::ostringstream out_;
  int indent_ = 0;
  int counter_ = 0;
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
  // Row kernels with vector_width > 1: the vectors a pass may read, keyed by (value, index:
  // kElement or kColumn), each with its word variable; those the pass being emitted reads;
  // the bit arrays of the values the current step stores as vectors; the pointers whose
  // alignment selects the vector path.
  std::map<std::pair<ValueId, std::string>, std::string> row_vectors_;
  std::set<std::pair<ValueId, std::string>> row_vectors_used_;
  std::map<ValueId, std::string> row_vector_stores_;
  std::set<std::string> aligned_ptrs_;
  bool storing_elements_ = false;
  bool index32_ = false;                         // every index of the kernel fits in int
  std::string ix_ = "long long";                 // the type of row, c and f
  std::string split_partials_, split_counters_;  // scratch parameters of a split column tile
};

}  // namespace

std::string emit_kernel(const Graph& graph, const PlannedKernel& kernel) {
  return KernelEmitter(graph, kernel).emit();
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
