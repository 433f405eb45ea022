// The shared-memory row cache keeps loaded values in their storage dtype and converts them on
// each re-read as the load does, so a kernel that caches its row in shared memory gives the
// same bits as the same mapping re-reading the row from global memory in every pass (the
// same element-to-thread mapping, so every sum runs in the same order). Checked on the host
// backend, in both thread orders, for the canonical row graphs in f32, f16 and bf16: rows
// moved in vectors, rows of odd width (scalar), rows past the static shared limit; the
// kernels compile with NVRTC for sm_80 and sm_90.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "codegen/emit.hpp"
#include "codegen/prelude.hpp"
#include "common/canonical_graphs.hpp"
#include "differential/harness.hpp"
#include "jit/kernel_cache.hpp"
#include "plan/plan.hpp"
#include "plan/row_cache.hpp"
#include "runtime/host/host_module.hpp"
#include "runtime/host/planned_launch.hpp"
#include "runtime/kernel_args.hpp"

namespace fstitch::testing {
namespace {

size_t bytes_of(const Node& n) {
  return static_cast<size_t>(element_count(n.dims)) * dtype_size(n.dtype);
}

// The plan's kernels renamed with `prefix`, their shared row caches replaced by re-reads
// from global memory when `recompute` (nothing else about the mapping changes).
std::vector<PlannedKernel> variant(const FusionPlan& plan, const std::string& prefix, bool recompute) {
  std::vector<PlannedKernel> kernels = plan.kernels;
  for (PlannedKernel& k : kernels) {
    k.name = prefix + k.name;
    if (!recompute || k.spec.cache != RowCache::kShared) continue;
    k.spec.cache = RowCache::kRecompute;
    k.spec.cached.clear();
    k.spec.cache_buffer.clear();
    k.spec.shared_buffer_types.clear();
    k.spec.shared_cache_bytes = 0;
    k.spec.dynamic_shared_bytes = 0;
  }
  return kernels;
}

// Runs the kernels one after another on the host module; returns the outputs' bytes.
std::vector<std::vector<unsigned char>> run(const Graph& g, const FusionPlan& plan,
                                            const std::vector<PlannedKernel>& kernels,
                                            const host::HostModule& module,
                                            std::vector<std::vector<unsigned char>>& inputs,
                                            host::ThreadOrder order) {
  std::vector<std::vector<unsigned char>> outputs;
  for (const GraphOutput& o : g.outputs()) outputs.emplace_back(bytes_of(g.node(o.value)), 0xFF);
  std::vector<unsigned char> workspace(plan.workspace_bytes + 16, 0xFF);
  std::vector<const void*> in;
  std::vector<void*> out;
  for (auto& b : inputs) in.push_back(b.data());
  for (auto& b : outputs) out.push_back(b.data());
  std::vector<const void*> constants;
  for (ValueId c : plan.constants) constants.push_back(g.node(c).data->data());
  host::HostLaunchOptions launch;
  launch.order = order;
  runtime::KernelArguments args;
  for (const PlannedKernel& k : kernels) {
    args.pack(k, in.data(), out.data(), reinterpret_cast<uintptr_t>(workspace.data()), constants.data());
    if (void* zeroed = args.zeroed_address(k)) std::memset(zeroed, 0, k.zeroed_workspace.bytes);
    host::set_residency(k, launch);  // a split row's groups run together
    module.launch(k.name, host::Dim3{static_cast<unsigned>(k.spec.grid_blocks), 1, 1},
                  host::Dim3{static_cast<unsigned>(k.spec.block_threads), 1, 1}, k.spec.dynamic_shared_bytes,
                  args.params(), launch);
  }
  return outputs;
}

TEST(SharedRowCache, StorageDtypeCacheGivesTheBitsOfReReadingTheRow) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{5, 3000}, {3, 4097}, {2, 20000}};
  size_t shared_kernels = 0, narrow_buffers = 0, cases = 0;
  uint64_t seed = 9100;
  std::string source;
  struct Case {
    std::string label;
    Graph graph;
    FusionPlan plan;
    std::vector<PlannedKernel> cached, recomputed;
  };
  std::vector<Case> all;
  for (const CanonicalGraph& canonical : canonical_graphs()) {
    for (const auto& [rows, cols] : shapes) {
      for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
        Case c;
        c.label = canonical.name + " " + std::to_string(rows) + "x" + std::to_string(cols) + " " +
                  dtype_name(dtype);
        c.graph = canonical.build(rows, cols, dtype);
        FusionOptions o;
        o.register_cap = 4;  // no register cache fits: shared memory or re-reads
        // A device without clusters: split rows exchange through global memory, so the same
        // text compiles for sm_80 too.
        o.device = arch_params(80);
        o.device->sm = o.target_sm;
        c.plan = plan_fusion(c.graph, o);
        bool any_shared = false;
        for (const PlannedKernel& k : c.plan.kernels) {
          if (k.spec.cache != RowCache::kShared) continue;
          any_shared = true;
          ++shared_kernels;
          for (DType t : k.spec.shared_buffer_types) narrow_buffers += dtype_size(t) < 4 ? 1 : 0;
        }
        if (!any_shared) continue;
        const std::string prefix = "c" + std::to_string(cases++) + "_";
        c.cached = variant(c.plan, prefix + "shared_", false);
        c.recomputed = variant(c.plan, prefix + "reread_", true);
        for (const PlannedKernel& k : c.cached) source += "\n" + emit_kernel(c.graph, k);
        for (const PlannedKernel& k : c.recomputed) source += "\n" + emit_kernel(c.graph, k);
        all.push_back(std::move(c));
      }
    }
  }
  // Most row graphs cache in shared memory at these widths, and the 16-bit ones in 16 bits.
  EXPECT_GE(shared_kernels, 20u);
  EXPECT_GE(narrow_buffers, 10u);
  host::HostCompileOptions compile;
  compile.disk_cache = !harness_options_from_env().cache_dir.empty();
  compile.cache_dir = harness_options_from_env().cache_dir;
  const auto module = host::HostModule::compile(kernel_prelude() + source, compile);
  // The same text is valid CUDA for NVRTC (16-byte shared vectors, 16-bit shared buffers).
  jit::KernelCache nvrtc(jit::KernelCacheOptions{});
  std::vector<jit::CompileRequest> requests(2);
  for (size_t i = 0; i < requests.size(); ++i) {
    requests[i].source = kernel_prelude() + source;
    requests[i].name = "shared_cache_bits.cu";
    requests[i].arch = i == 0 ? 80 : 90;
  }
  EXPECT_NO_THROW(nvrtc.compile_all(requests));
  for (Case& c : all) {
    SCOPED_TRACE(c.label);
    std::vector<std::vector<unsigned char>> inputs;
    for (ValueId v : c.graph.inputs()) {
      const Node& n = c.graph.node(v);
      inputs.emplace_back(bytes_of(n));
      fill_random_input(inputs.back().data(), element_count(n.dims), n.dtype, ++seed);
    }
    const auto reread = run(c.graph, c.plan, c.recomputed, *module, inputs, host::ThreadOrder::kForward);
    for (host::ThreadOrder order : {host::ThreadOrder::kForward, host::ThreadOrder::kReverse}) {
      const auto cached = run(c.graph, c.plan, c.cached, *module, inputs, order);
      ASSERT_EQ(cached.size(), reread.size());
      for (size_t i = 0; i < cached.size(); ++i)
        EXPECT_TRUE(cached[i] == reread[i]) << "output " << i << " differs, thread order "
                                            << (order == host::ThreadOrder::kForward ? "forward" : "reverse");
    }
  }
}

}  // namespace
}  // namespace fstitch::testing
