// The shared library's own translation unit: everything else comes from fstitch_core,
// linked whole. The exported surface is fixed by fstitch.map and FST_API.
#include "fstitch.h"
