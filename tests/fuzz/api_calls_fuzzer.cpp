// Fuzz target for the public C API: the input is a program of API calls (api_program.hpp),
// each checked against the documented contract.
#include <cstddef>
#include <cstdint>

#include "api_program.hpp"
#include "fuzz_environment.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fstitch::fuzz::set_fuzz_environment();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fstitch::fuzz::FuzzInput input(data, size);
  fstitch::fuzz::ApiProgram program(input);
  program.run();
  return 0;
}
