// Definitions of the opaque public handles and the helpers every entry point uses:
// exception-to-status conversion, the thread's last error, and fst_value encoding.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "api/context.hpp"
#include "fstitch.h"
#include "ir/graph.hpp"
#include "support/error.hpp"

struct fst_context_options {
  fstitch::ContextConfig config;
  bool log_level_set = false;
};

struct fst_context {
  std::shared_ptr<fstitch::Context> impl;
};

namespace fstitch::api {

// The serial a graph's fst_values carry (their high 32 bits). No two live graphs hold the
// same serial, however many graphs the process creates: a serial returns to the pool only
// when its graph and every fusion made from it (whose kernel parameters name the graph's
// values) are gone, and a new graph takes the next serial that no one holds.
class GraphSerial {
 public:
  static std::shared_ptr<const GraphSerial> acquire();
  ~GraphSerial();
  GraphSerial(const GraphSerial&) = delete;
  GraphSerial& operator=(const GraphSerial&) = delete;
  uint32_t value() const { return value_; }

 private:
  explicit GraphSerial(uint32_t value) : value_(value) {}
  uint32_t value_;
};

// Where the next acquire() starts looking (tests use it to wrap the counter).
void set_next_graph_serial_for_testing(uint32_t next);

}  // namespace fstitch::api

struct fst_graph {
  std::shared_ptr<fstitch::Context> context;
  fstitch::Graph graph;
  std::shared_ptr<const fstitch::api::GraphSerial> serial;  // identifies this graph inside its fst_values
  fst_status error = FST_OK;                                // first builder error (sticky)
  std::string error_message;
};

namespace fstitch::api {

// Records the thread's last error and returns `status`.
fst_status set_last_error(fst_status status, const std::string& message);

// Runs `body`, converting any exception into a status and the thread's last error,
// with messages prefixed by the function name.
template <class Body>
fst_status guarded(const char* function, Body&& body) noexcept {
  try {
    body();
    return FST_OK;
  } catch (const Error& e) {
    return set_last_error(static_cast<fst_status>(e.code()), std::string(function) + ": " + e.what());
  } catch (const std::bad_alloc&) {
    return set_last_error(FST_ERROR_OUT_OF_MEMORY, std::string(function) + ": out of memory");
  } catch (const std::exception& e) {
    return set_last_error(FST_ERROR_INTERNAL, std::string(function) + ": internal error: " + e.what());
  } catch (...) {
    return set_last_error(FST_ERROR_INTERNAL, std::string(function) + ": internal error: unknown exception");
  }
}

// The integer behind a C enum argument, read as bytes: a caller may pass any int, and
// loading an out-of-range value through the enum type would be undefined in C++.
template <class Enum>
int enum_code(const Enum& value) {  // by reference: no typed load of the argument
  static_assert(sizeof(Enum) == sizeof(int), "C enums are int-sized");
  int code;
  std::memcpy(&code, &value, sizeof code);
  return code;
}

// Throws invalid argument "<what> is NULL" when p is null.
inline void require_not_null(const void* p, const char* what) {
  if (p == nullptr) fail(StatusCode::kInvalidArgument, std::string(what) + " is NULL");
}

fst_value encode_value(const fst_graph* g, ValueId id);
// The fst_value of `id` in the graph whose values carry `serial` (fusions keep the serial).
fst_value encode_value(uint32_t serial, ValueId id);

// Throws invalid argument "<name> <index> is out of range; <owner> has <count> <things>"
// when index >= count, e.g. require_index("index", 3, 2, "the fusion", "kernel(s)").
void require_index(const char* name, size_t index, size_t count, const std::string& owner,
                   const char* things);
// Throws invalid argument for FST_VALUE_INVALID, a value of another graph, or one out of range.
ValueId decode_value(const fst_graph* g, fst_value v, const char* what);

// Checks the buffer arguments of a run over `graph`: counts equal to the graph's inputs and
// outputs, no NULL array or buffer (named in the message by index and name).
void check_run_buffers(const Graph& graph, const void* const* inputs, size_t ninputs, void* const* outputs,
                       size_t noutputs);

// Throws the graph's sticky builder error, if any.
void require_graph_ok(const fst_graph* g);

}  // namespace fstitch::api
