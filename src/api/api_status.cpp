// Version, status names, the thread's last error, dtype helpers, fst_value encoding.
#include <mutex>
#include <unordered_set>

#include "api/handles.hpp"
#include "ir/dtype.hpp"
#include "support/quote.hpp"

static_assert(static_cast<int>(fstitch::StatusCode::kInternal) == FST_ERROR_INTERNAL, "status codes diverge");
static_assert(static_cast<int>(fstitch::StatusCode::kParse) == FST_ERROR_PARSE, "status codes diverge");
static_assert(static_cast<int>(fstitch::DType::kBool) == FST_BOOL, "dtype codes diverge");
static_assert(static_cast<int>(fstitch::DType::kF32) == FST_F32, "dtype codes diverge");
static_assert(fstitch::kMaxRank == FST_MAX_RANK, "max rank diverges");

namespace {

thread_local std::string t_last_message;
thread_local fst_status t_last_status = FST_OK;

#define FST_STRINGIFY2(x) #x
#define FST_STRINGIFY(x) FST_STRINGIFY2(x)
constexpr const char kVersionString[] = FST_STRINGIFY(FST_VERSION_MAJOR) "." FST_STRINGIFY(
    FST_VERSION_MINOR) "." FST_STRINGIFY(FST_VERSION_PATCH);

}  // namespace

namespace fstitch::api {

fst_status set_last_error(fst_status status, const std::string& message) {
  try {
    t_last_message = message;
  } catch (...) {
    t_last_message.clear();  // out of memory while recording: keep the status at least
  }
  t_last_status = status;
  return status;
}

namespace {

// The serials held by live graphs and fusions.
struct SerialPool {
  std::mutex mutex;
  std::unordered_set<uint32_t> held;
  uint32_t next = 1;
  ~SerialPool() { destroyed = true; }
  // Set when static destruction has run: a graph the program destroys later (from its own
  // static destructors) then has nothing to return its serial to.
  static inline bool destroyed = false;
};

SerialPool& serial_pool() {
  static SerialPool pool;
  return pool;
}

}  // namespace

std::shared_ptr<const GraphSerial> GraphSerial::acquire() {
  SerialPool& pool = serial_pool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  // Every graph costs far more than the 4 bytes a held serial does, so memory runs out long
  // before 2^32 - 1 serials are held at once: the search ends.
  while (pool.next == 0 || pool.held.count(pool.next) != 0) ++pool.next;
  const uint32_t value = pool.next++;
  pool.held.insert(value);
  try {
    return std::shared_ptr<const GraphSerial>(new GraphSerial(value));
  } catch (...) {
    pool.held.erase(value);
    throw;
  }
}

GraphSerial::~GraphSerial() {
  if (SerialPool::destroyed) return;
  SerialPool& pool = serial_pool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  pool.held.erase(value_);
}

void set_next_graph_serial_for_testing(uint32_t next) {
  SerialPool& pool = serial_pool();
  std::lock_guard<std::mutex> lock(pool.mutex);
  pool.next = next;
}

fst_value encode_value(const fst_graph* g, ValueId id) {
  return encode_value(g->serial->value(), id);
}

fst_value encode_value(uint32_t serial, ValueId id) {
  return (static_cast<uint64_t>(serial) << 32) | (static_cast<uint64_t>(id) + 1);
}

void require_index(const char* name, size_t index, size_t count, const std::string& owner,
                   const char* things) {
  if (index < count) return;
  fail(StatusCode::kInvalidArgument, std::string(name) + " " + std::to_string(index) + " is out of range; " +
                                         owner + " has " + std::to_string(count) + " " + things);
}

ValueId decode_value(const fst_graph* g, fst_value v, const char* what) {
  if (v == FST_VALUE_INVALID) {
    fail(StatusCode::kInvalidArgument,
         std::string(what) + " is FST_VALUE_INVALID (the result of a builder that failed)");
  }
  if (static_cast<uint32_t>(v >> 32) != g->serial->value()) {
    fail(StatusCode::kInvalidArgument, std::string(what) + " belongs to another graph");
  }
  uint64_t index = (v & 0xffffffffu) - 1;
  if (index >= g->graph.size()) {
    fail(StatusCode::kInvalidArgument, std::string(what) + " does not exist in this graph");
  }
  return static_cast<ValueId>(index);
}

void check_run_buffers(const Graph& g, const void* const* inputs, size_t ninputs, void* const* outputs,
                       size_t noutputs) {
  if (ninputs != g.inputs().size()) {
    fail(StatusCode::kInvalidArgument, "ninputs is " + std::to_string(ninputs) + " but the graph has " +
                                           std::to_string(g.inputs().size()) + " input(s)");
  }
  if (noutputs != g.outputs().size()) {
    fail(StatusCode::kInvalidArgument, "noutputs is " + std::to_string(noutputs) + " but the graph has " +
                                           std::to_string(g.outputs().size()) + " output(s)");
  }
  if (ninputs > 0) require_not_null(inputs, "inputs");
  require_not_null(outputs, "outputs");
  for (size_t i = 0; i < ninputs; ++i) {
    if (inputs[i] == nullptr) {
      fail(StatusCode::kInvalidArgument,
           "inputs[" + std::to_string(i) + "] (" + quote_name(g.node(g.inputs()[i]).name) + ") is NULL");
    }
  }
  for (size_t i = 0; i < noutputs; ++i) {
    if (outputs[i] == nullptr) {
      fail(StatusCode::kInvalidArgument,
           "outputs[" + std::to_string(i) + "] (" + quote_name(g.outputs()[i].name) + ") is NULL");
    }
  }
}

void require_graph_ok(const fst_graph* g) {
  if (g->error != FST_OK) {
    fail(static_cast<StatusCode>(g->error),
         "the graph is in error since an earlier call: " + g->error_message);
  }
}

}  // namespace fstitch::api

extern "C" {

FST_API unsigned fst_version_number(void) {
  return FST_VERSION_NUMBER;
}

FST_API const char* fst_version_string(void) {
  return kVersionString;
}

FST_API const char* fst_status_string(fst_status status) {
  switch (fstitch::api::enum_code(status)) {
    case FST_OK:
      return "FST_OK";
    case FST_ERROR_INVALID_ARGUMENT:
      return "FST_ERROR_INVALID_ARGUMENT";
    case FST_ERROR_SHAPE:
      return "FST_ERROR_SHAPE";
    case FST_ERROR_DTYPE:
      return "FST_ERROR_DTYPE";
    case FST_ERROR_UNSUPPORTED:
      return "FST_ERROR_UNSUPPORTED";
    case FST_ERROR_OUT_OF_MEMORY:
      return "FST_ERROR_OUT_OF_MEMORY";
    case FST_ERROR_NO_DEVICE:
      return "FST_ERROR_NO_DEVICE";
    case FST_ERROR_NO_DRIVER:
      return "FST_ERROR_NO_DRIVER";
    case FST_ERROR_NO_COMPILER:
      return "FST_ERROR_NO_COMPILER";
    case FST_ERROR_COMPILE:
      return "FST_ERROR_COMPILE";
    case FST_ERROR_LAUNCH:
      return "FST_ERROR_LAUNCH";
    case FST_ERROR_PARSE:
      return "FST_ERROR_PARSE";
    case FST_ERROR_INTERNAL:
      return "FST_ERROR_INTERNAL";
  }
  return "FST_STATUS_UNKNOWN";
}

FST_API const char* fst_last_error_message(void) {
  return t_last_message.c_str();
}

FST_API fst_status fst_last_error_status(void) {
  return t_last_status;
}

FST_API size_t fst_dtype_size(fst_dtype dtype) {
  const int code = fstitch::api::enum_code(dtype);
  if (!fstitch::is_valid_dtype(code)) return 0;
  return fstitch::dtype_size(static_cast<fstitch::DType>(code));
}

FST_API const char* fst_dtype_name(fst_dtype dtype) {
  const int code = fstitch::api::enum_code(dtype);
  if (!fstitch::is_valid_dtype(code)) return "?";
  return fstitch::dtype_name(static_cast<fstitch::DType>(code));
}

FST_API void fst_string_free(char* text) {
  delete[] text;
}

}  // extern "C"
