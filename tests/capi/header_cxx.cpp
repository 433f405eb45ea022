// fstitch.h must compile alone as C++ (built as C++11 and C++17), with C linkage.
#include "fstitch.h"

namespace {

static_assert(sizeof(fst_value) == 8, "fst_value is 64 bits");
static_assert(FST_OK == 0, "FST_OK is 0");

}  // namespace

unsigned fstitch_header_cxx_probe(fst_value value, fst_status status);
unsigned fstitch_header_cxx_probe(fst_value value, fst_status status) {
  fst_log_callback callback = nullptr;
  static_cast<void>(callback);
  unsigned (*version)(void) = &fst_version_number;
  static_cast<void>(version);
  return static_cast<unsigned>(FST_VERSION_NUMBER + FST_ABI_VERSION + FST_MAX_RANK +
                               static_cast<int>(status)) +
         static_cast<unsigned>(value == FST_VALUE_INVALID);
}
