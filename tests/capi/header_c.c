/* fstitch.h must compile alone, as strict C (built as C99 and as C11). */
#include "fstitch.h"

/* Uses of the header's types and macros, so the translation unit is not empty. */
unsigned fstitch_header_c_probe(fst_value value, fst_status status);
unsigned fstitch_header_c_probe(fst_value value, fst_status status) {
  fst_log_callback callback = 0;
  (void)callback;
  return (unsigned)(FST_VERSION_NUMBER + FST_ABI_VERSION + FST_MAX_RANK + (int)status) +
         (unsigned)(value == FST_VALUE_INVALID);
}
