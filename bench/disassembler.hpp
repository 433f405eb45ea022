// Runs nvdisasm (or cuobjdump -sass) on a CUBIN and returns its SASS listing. Neither tool
// ships with NVRTC; the report finds one from --disassembler, FSTITCH_NVDISASM or PATH and
// says "no disassembler" without one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fstitch::bench {

class Disassembler {
 public:
  // `explicit_path` (the --disassembler option) when not empty ("none": no disassembler), else
  // $FSTITCH_NVDISASM, else nvdisasm or cuobjdump on PATH. Nothing when none is an executable file; `why`
  // then says what was tried.
  static std::optional<Disassembler> find(const std::string& explicit_path, std::string* why);

  const std::string& path() const { return path_; }
  // "nvdisasm" or "cuobjdump".
  const std::string& kind() const { return kind_; }
  // The tool's version line ("Cuda compilation tools, release 13.5, V13.5.37").
  std::string version() const;

  // The listing of `cubin`. Throws std::runtime_error with the tool's output when it fails.
  std::string disassemble(const std::vector<uint8_t>& cubin) const;

 private:
  Disassembler(std::string path, std::string kind) : path_(std::move(path)), kind_(std::move(kind)) {}
  std::string path_;
  std::string kind_;
};

}  // namespace fstitch::bench
