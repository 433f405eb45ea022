// The ABI shared with compiled kernel objects: the first part of emulation.h, read alone.
#pragma once

#ifndef FST_HOST_ABI_ONLY
#define FST_HOST_ABI_ONLY
#endif
#include "runtime/host/emulation.h"

namespace fstitch::host {

// The table of runtime services handed to every loaded object (fst_host_bind).
const fst_host_api& host_api();

// Records the thread a fiber is about to run as; the object reads it through
// fst_host_api::current when its kernel entry starts.
void set_current_thread(fst_host_thread* thread);

}  // namespace fstitch::host
