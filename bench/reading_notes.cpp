#include "reading_notes.hpp"

namespace fstitch::bench {

void write_findings(std::ostream& out, const Findings& findings) {
  out << "## Findings\n\n";
  if (findings.items.empty()) {
    out << "None: every canonical graph planned as one stitch kernel at the lower bound, every compile and "
           "cache lookup behaved as expected, no stitch kernel spills or exceeds the planner's register cap, "
           "and the largest random graphs planned within a second.\n\n";
    return;
  }
  for (const std::string& item : findings.items) out << "- " << item << "\n";
  out << "\n";
}

void write_reading_notes(std::ostream& out) {
  out << R"(## How to read this report

All times are wall-clock medians measured in one process on the machine above; other
processes on a shared machine disturb them, so compare reports from the same machine.

Section 1 plans each canonical graph (built as a framework decomposes it: f16/bf16 inputs
cast to f32, computed, cast back) under the three policies for sm_90.
- nodes: values in the graph, including inputs, constants, casts and broadcasts.
- kernels none/loop/stitch: kernels in the plan of each policy.
- bytes/LB: global-memory bytes the plan reads and writes (summed over its kernels, as the
  planner estimates them) divided by the lower bound; 1.00 means every input is read once
  and every output written once, nothing more.
- LB MiB: the lower bound itself: each graph input read once plus each output written once.
- plan us: one plan_fusion call (analysis, exploration, kernel specs, launch order,
  workspace layout), in microseconds. Graph building and code generation are not included.

Section 2 compiles each stitch plan with NVRTC the way the library does: one program per
kernel (the prelude plus the kernel), compiled to a CUBIN and PTX with `ptxas -v`,
the kernels of a plan in parallel.
- arch: the target of both the plan and the compile.
- source KiB: the CUDA C text handed to NVRTC, prelude included.
- cold ms: compile_all on a fresh memory-only cache (directory "off"): NVRTC for every
  kernel.
- warm us: the same requests again on that cache: the XXH3-128 cache key over the source
  and options, and a hash-table hit.
- disk ms: a fresh cache on a directory another cache filled: read the entry, verify its
  checksum, parse the ptxas report. The file is in the page cache, so this is the
  second-process-on-the-same-machine case, not a cold disk.

Section 3 lists, for each stitch kernel, what ptxas reported in the compile of section 2.
- schedule, block: the planner's thread mapping and threads per block.
- registers: per thread. The planner budgets for the register cap of its options (64).
- spill stores B, spill loads B: bytes spilled to local memory per thread; anything but 0
  costs memory traffic the plan does not account for.
- stack B: the stack frame per thread. shared B: static shared memory per block.

Section 4 plans seeded random graphs over a 1024x1024 f32 domain: unary and binary
elementwise operations, per-column weights and per-row values broadcast over the rows,
explicit broadcasts and row reductions (sum, max, mean). "chain" graphs take the newest
values as operands; "dag" graphs take any earlier value half of the time.
- operations: nodes other than graph inputs (the broadcasts the builders insert count).
- reductions: how many of them are row reductions.
- outputs: values nothing else reads, each a graph output.
- plan ms: one plan_fusion call under each policy, in milliseconds.
- stitch us/op: the stitch planner time divided by the operations.
- stitch x prev: the stitch planner time over the previous row's, for ten times as many
  operations: about 10 is linear scaling, about 100 quadratic.
- runs: the timed stitch plans behind the median (fewer when one plan takes over 2 s).
- "failed after": plan_fusion threw (the reason is under Findings) after running this
  long; a failure is not retried. The per-operation and growth columns then use that
  time, which is close to a whole plan when the failure is the launch-order check that
  finds a cycle among the kernels, made after exploration.
)";
}

}  // namespace fstitch::bench
