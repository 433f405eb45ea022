#include "jit/resource_report.hpp"

#include <regex>
#include <sstream>

namespace fstitch::jit {
namespace {

FunctionResources& function_named(std::vector<FunctionResources>& report, const std::string& name) {
  for (FunctionResources& function : report) {
    if (function.name == name) return function;
  }
  report.push_back(FunctionResources{});
  report.back().name = name;
  return report.back();
}

int64_t to_int64(const std::ssub_match& match) {
  return std::stoll(match.str());
}

}  // namespace

// ptxas -v prints, per function (the "Used" line only for entries):
//   ptxas info    : Compiling entry function 'k' for 'sm_90'
//   ptxas info    : Function properties for k
//   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 14 registers, used 1 barriers, 128 bytes smem
// Older releases indent the stack-frame line without the "ptxas ." prefix, put
// ", 360 bytes cmem[0]" after smem and omit the barriers.
std::vector<FunctionResources> parse_ptxas_report(const std::string& log) {
  static const std::regex entry_line(R"(Compiling entry function '([^']+)')");
  static const std::regex properties_line(R"(Function properties for (\S+))");
  static const std::regex frame_line(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used_line(R"(Used (\d+) registers)");
  static const std::regex barriers_field(R"(used (\d+) barriers)");
  static const std::regex smem_field(R"((\d+) bytes smem)");

  std::vector<FunctionResources> report;
  std::string current;  // the function the next property lines describe
  std::istringstream lines(log);
  std::string line;
  std::smatch match;
  while (std::getline(lines, line)) {
    try {
      if (std::regex_search(line, match, entry_line)) {
        current = match[1].str();
        function_named(report, current).entry = true;
      } else if (std::regex_search(line, match, properties_line)) {
        current = match[1].str();
        function_named(report, current);
      } else if (current.empty()) {
        continue;
      } else if (std::regex_search(line, match, frame_line)) {
        FunctionResources& function = function_named(report, current);
        function.stack_frame_bytes = to_int64(match[1]);
        function.spill_store_bytes = to_int64(match[2]);
        function.spill_load_bytes = to_int64(match[3]);
      } else if (std::regex_search(line, match, used_line)) {
        FunctionResources& function = function_named(report, current);
        function.registers = static_cast<int>(to_int64(match[1]));
        if (std::regex_search(line, match, barriers_field))
          function.barriers = static_cast<int>(to_int64(match[1]));
        if (std::regex_search(line, match, smem_field)) function.shared_bytes = to_int64(match[1]);
      }
    } catch (const std::out_of_range&) {
      // A number too large for its field: not a report ptxas writes; skip the line.
    }
  }
  return report;
}

const FunctionResources* find_function(const std::vector<FunctionResources>& report,
                                       const std::string& name) {
  for (const FunctionResources& function : report) {
    if (function.name == name) return &function;
  }
  return nullptr;
}

}  // namespace fstitch::jit
