// What the SASS of a kernel says about its memory traffic and size: the global loads and
// stores by access width, the static instruction count, and the body of its main loop.
// Parsed from the text nvdisasm (or cuobjdump -sass) prints for a CUBIN, so the report
// can show, without a GPU, whether a kernel vectorizes its accesses.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace fstitch::bench {

// Global memory instructions by access width: 8, 16, 32, 64, 128 and 256 bits.
struct AccessCounts {
  static constexpr std::array<int, 6> kWidthBits = {8, 16, 32, 64, 128, 256};
  std::array<int, 6> by_width{};

  int total() const;
  int bytes() const;  // bytes one execution of these instructions moves per thread
  // "2x128 1x16" (widest first); "-" when there are none.
  std::string text() const;
};

// A loop closed by a backward branch: the static instructions from its head to the branch.
struct SassLoop {
  long head_address = 0;  // of the loop's first instruction
  long end_address = 0;   // of the branch that closes it
  bool innermost = true;  // no other loop inside it
  int instructions = 0;
  AccessCounts loads;
  AccessCounts stores;
};

struct SassFunction {
  std::string name;
  int instructions = 0;     // static count, NOP padding and the trailing self-branch excluded
  AccessCounts loads;       // LDG
  AccessCounts stores;      // STG
  int atomics = 0;          // RED and ATOMG: global reductions and atomics
  int shared_accesses = 0;  // LDS and STS
  int barriers = 0;         // BAR
  int shuffles = 0;         // SHFL
  std::vector<SassLoop> loops;
  // The hot loop: among the innermost loops, the one with the most global loads and stores
  // (the longest on a tie); -1 when the kernel has no loop. An outer loop (over rows, say)
  // is the main loop only when no inner loop touches global memory.
  int main_loop = -1;
};

// Every function (one per `.text.<name>` section of nvdisasm, or `Function : <name>` of
// cuobjdump -sass, its subroutines included) in the order of the listing. Lines that are not instructions or
// labels are ignored.
std::vector<SassFunction> parse_sass(const std::string& listing);

// The function named `name`, or nullptr.
const SassFunction* find_sass_function(const std::vector<SassFunction>& functions, const std::string& name);

// The width in bits of a global load or store opcode ("LDG.E.128.CONSTANT" is 128,
// "STG.E.U16" 16, "LDG.E" 32); 0 for any other opcode.
int global_access_bits(const std::string& opcode, const char* prefix);

}  // namespace fstitch::bench
