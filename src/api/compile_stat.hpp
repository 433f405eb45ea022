// One counter of CompileStats, as fst_context_compile_stat and fst_fusion_compile_stat name it.
#pragma once

#include <cstdint>
#include <string>

#include "api/handles.hpp"
#include "support/compile_stats.hpp"
#include "support/error.hpp"

namespace fstitch::api {

// The counter `stat` names; fails with kInvalidArgument for a value outside fst_compile_stat.
inline uint64_t compile_stat_value(const CompileStats& stats, const fst_compile_stat& stat) {
  switch (enum_code(stat)) {
    case FST_COMPILE_STAT_COMPILED:
      return stats.compiled;
    case FST_COMPILE_STAT_MEMORY_HITS:
      return stats.memory_hits;
    case FST_COMPILE_STAT_DISK_HITS:
      return stats.disk_hits;
    case FST_COMPILE_STAT_DISK_WRITES:
      return stats.disk_writes;
    case FST_COMPILE_STAT_DISK_DISCARDS:
      return stats.disk_discards;
    case FST_COMPILE_STAT_COMPILE_NANOSECONDS:
      return stats.compile_nanoseconds;
    default:
      fail(StatusCode::kInvalidArgument, "compile stat " + std::to_string(enum_code(stat)) +
                                             " is not a value of fst_compile_stat (0 compiled .. 5 compile "
                                             "nanoseconds)");
  }
}

}  // namespace fstitch::api
