#include "sass_summary.hpp"

#include <algorithm>
#include <map>
#include <sstream>

namespace fstitch::bench {
namespace {

struct Instruction {
  long address = 0;
  std::string opcode;        // "LDG.E.128.CONSTANT"
  std::string branch_label;  // the target of a BRA, else empty
  long branch_address = -1;  // the target of a BRA given as an address (cuobjdump -sass)
};

struct FunctionText {
  std::string name;
  std::vector<Instruction> instructions;
  std::map<std::string, long> labels;  // label -> address of the instruction after it
  std::vector<std::string> pending_labels;
};

std::string trim(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  const size_t last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

std::string first_token(const std::string& opcode) {
  return opcode.substr(0, opcode.find('.'));
}

// "        /*04c0*/                   LDG.E.128.CONSTANT R4, desc[UR4][R6.64] ;"
bool parse_instruction(const std::string& line, Instruction* out) {
  const size_t open = line.find("/*");
  if (open == std::string::npos) return false;
  const size_t close = line.find("*/", open + 2);
  if (close == std::string::npos) return false;
  const std::string address = line.substr(open + 2, close - open - 2);
  if (address.empty() || address.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
    return false;
  std::istringstream rest(line.substr(close + 2));
  std::string token;
  if (!(rest >> token)) return false;
  if (token[0] == '@') {  // a predicate: @P0, @!P1, @UP0
    if (!(rest >> token)) return false;
  }
  if (token == ";" || token[0] == '{' || token[0] == '}') return false;
  if (!token.empty() && token.back() == ';') token.pop_back();
  out->address = std::stol(address, nullptr, 16);
  out->opcode = token;
  out->branch_label.clear();
  if (first_token(token) == "BRA") {
    const size_t target = line.find("`(", close);
    const size_t end = target == std::string::npos ? std::string::npos : line.find(')', target);
    if (end != std::string::npos) {
      out->branch_label = line.substr(target + 2, end - target - 2);
    } else {
      std::string operand;
      rest >> operand;
      if (operand.rfind("0x", 0) == 0) out->branch_address = std::stol(operand, nullptr, 16);
    }
  }
  return true;
}

void count_access(const Instruction& instruction, SassFunction& function, SassLoop* loop) {
  const int load = global_access_bits(instruction.opcode, "LDG");
  const int store = global_access_bits(instruction.opcode, "STG");
  for (size_t w = 0; w < AccessCounts::kWidthBits.size(); ++w) {
    if (load == AccessCounts::kWidthBits[w]) {
      ++function.loads.by_width[w];
      if (loop) ++loop->loads.by_width[w];
    }
    if (store == AccessCounts::kWidthBits[w]) {
      ++function.stores.by_width[w];
      if (loop) ++loop->stores.by_width[w];
    }
  }
}

// Where a branch goes: its label's address or the address it names; -1 when unknown.
long branch_target(const FunctionText& text, const Instruction& instruction) {
  if (instruction.branch_address >= 0) return instruction.branch_address;
  if (instruction.branch_label.empty()) return -1;
  const auto label = text.labels.find(instruction.branch_label);
  return label == text.labels.end() ? -1 : label->second;
}

SassFunction summarize(const FunctionText& text) {
  SassFunction function;
  function.name = text.name;
  for (const Instruction& instruction : text.instructions) {
    const std::string op = first_token(instruction.opcode);
    if (op == "NOP") continue;
    // The `BRA` to itself that ends every kernel is padding, not code that runs.
    if (op == "BRA" && branch_target(text, instruction) == instruction.address) continue;
    ++function.instructions;
    count_access(instruction, function, nullptr);
    if (op == "RED" || op == "ATOMG" || op == "ATOM") ++function.atomics;
    if (op == "LDS" || op == "STS") ++function.shared_accesses;
    if (op == "BAR") ++function.barriers;
    if (op == "SHFL") ++function.shuffles;
  }
  // Loops: a branch back to an earlier label closes the instructions from there to it.
  for (const Instruction& branch : text.instructions) {
    const long head = branch_target(text, branch);
    if (head < 0 || head >= branch.address) continue;
    SassLoop loop;
    loop.head_address = head;
    loop.end_address = branch.address;
    SassFunction ignored;
    for (const Instruction& instruction : text.instructions) {
      if (instruction.address < head || instruction.address > branch.address) continue;
      if (first_token(instruction.opcode) == "NOP") continue;
      ++loop.instructions;
      count_access(instruction, ignored, &loop);
    }
    function.loops.push_back(loop);
  }
  for (SassLoop& outer : function.loops) {
    for (const SassLoop& inner : function.loops) {
      if (&inner != &outer && inner.head_address >= outer.head_address &&
          inner.end_address <= outer.end_address)
        outer.innermost = false;
    }
  }
  auto accesses = [](const SassLoop& loop) { return loop.loads.total() + loop.stores.total(); };
  bool inner_accesses = false;
  for (const SassLoop& loop : function.loops)
    inner_accesses = inner_accesses || (loop.innermost && accesses(loop) > 0);
  for (size_t i = 0; i < function.loops.size(); ++i) {
    const SassLoop& loop = function.loops[i];
    if (inner_accesses && !loop.innermost) continue;
    if (function.main_loop < 0) {
      function.main_loop = static_cast<int>(i);
      continue;
    }
    const SassLoop& best = function.loops[static_cast<size_t>(function.main_loop)];
    if (accesses(loop) > accesses(best) ||
        (accesses(loop) == accesses(best) && loop.instructions > best.instructions))
      function.main_loop = static_cast<int>(i);
  }
  return function;
}

}  // namespace

int AccessCounts::total() const {
  int sum = 0;
  for (int count : by_width) sum += count;
  return sum;
}

int AccessCounts::bytes() const {
  int sum = 0;
  for (size_t w = 0; w < kWidthBits.size(); ++w) sum += by_width[w] * kWidthBits[w] / 8;
  return sum;
}

std::string AccessCounts::text() const {
  std::string out;
  for (size_t w = kWidthBits.size(); w-- > 0;) {
    if (by_width[w] == 0) continue;
    if (!out.empty()) out += " ";
    out += std::to_string(by_width[w]) + "x" + std::to_string(kWidthBits[w]);
  }
  return out.empty() ? "-" : out;
}

int global_access_bits(const std::string& opcode, const char* prefix) {
  std::istringstream parts(opcode);
  std::string part;
  if (!std::getline(parts, part, '.') || part != prefix) return 0;
  int bits = 32;
  while (std::getline(parts, part, '.')) {
    if (part == "256") bits = 256;
    if (part == "128") bits = 128;
    if (part == "64") bits = 64;
    if (part == "U16" || part == "S16") bits = 16;
    if (part == "U8" || part == "S8") bits = 8;
  }
  return bits;
}

std::vector<SassFunction> parse_sass(const std::string& listing) {
  static const std::string kSection = "//--------------------- .text.";  // nvdisasm
  static const std::string kFunction = "Function : ";                    // cuobjdump -sass
  std::vector<FunctionText> texts;
  std::istringstream lines(listing);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t section = line.find(kSection);
    const size_t function = line.find(kFunction);
    if (section != std::string::npos || function != std::string::npos) {
      std::istringstream name(section != std::string::npos ? line.substr(section + kSection.size())
                                                           : line.substr(function + kFunction.size()));
      texts.emplace_back();
      name >> texts.back().name;
      continue;
    }
    if (texts.empty()) continue;
    FunctionText& text = texts.back();
    Instruction instruction;
    if (parse_instruction(line, &instruction)) {
      for (const std::string& label : text.pending_labels) text.labels[label] = instruction.address;
      text.pending_labels.clear();
      text.instructions.push_back(std::move(instruction));
      continue;
    }
    const std::string trimmed = trim(line);
    // A label: ".L_x_6:" or "name:" alone on its line.
    if (trimmed.size() > 1 && trimmed.back() == ':' && trimmed.find_first_of(" \t") == std::string::npos) {
      text.pending_labels.push_back(trimmed.substr(0, trimmed.size() - 1));
    }
  }
  std::vector<SassFunction> functions;
  for (const FunctionText& text : texts) functions.push_back(summarize(text));
  return functions;
}

const SassFunction* find_sass_function(const std::vector<SassFunction>& functions, const std::string& name) {
  for (const SassFunction& function : functions) {
    if (function.name == name) return &function;
  }
  return nullptr;
}

}  // namespace fstitch::bench
