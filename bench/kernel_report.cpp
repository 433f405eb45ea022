// fstitch_kernel_report: the static kernel report. Plans the benchmark graphs with policy
// stitch, compiles every kernel with NVRTC to a CUBIN, and reports per kernel what can be
// known without a GPU: the launch, registers and spills (ptxas), occupancy and waves (from
// the architecture's limits), the global loads and stores and instruction counts (from the
// SASS), the cost model's estimate, and, from a GPU benchmark's bench.json, the measured
// time. bench/README.md ("The static kernel report") describes every column.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "codegen/emit.hpp"
#include "codegen/prelude.hpp"
#include "disassembler.hpp"
#include "ir/verify.hpp"
#include "jit/kernel_cache.hpp"
#include "kernel_cases.hpp"
#include "launch_estimate.hpp"
#include "machine_info.hpp"
#include "markdown.hpp"
#include "measured_times.hpp"
#include "occupancy.hpp"
#include "plan/cost_model.hpp"
#include "plan/plan.hpp"
#include "sass_summary.hpp"
#include "timing.hpp"

namespace fstitch::bench {
namespace {

constexpr const char* kUsage =
    "usage: fstitch_kernel_report [--output FILE] [--measured BENCH_JSON] [--disassembler PATH]\n"
    "                             [--sass-dir DIR] [--device a100|h100|h200] [--quick]\n"
    "Plans the benchmark graphs (policy stitch, sm_90 and sm_80), compiles every kernel with\n"
    "NVRTC and writes a Markdown table per architecture: launch, registers, occupancy, waves,\n"
    "SASS loads and stores, the cost model's estimate and, with --measured, the times of a\n"
    "fstitch_bench_gpu results file. The disassembler is PATH, $FSTITCH_NVDISASM, or nvdisasm\n"
    "or cuobjdump on PATH; --sass-dir writes each kernel's listing there. --device plans the\n"
    "kernels of its architecture for that device model (default: the GPU that --measured names,\n"
    "else the H100 for sm_90 and the A100 for sm_80). Progress goes to standard error.\n";

struct Options {
  std::string output;
  std::string measured;
  std::string disassembler;
  std::string sass_dir;  // where each kernel's SASS listing is written; empty: nowhere
  std::string device;    // a device model (plan/arch.hpp) for its architecture's kernels
  bool quick = false;
};

std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* target) {
      if (i + 1 >= argc) return false;
      *target = argv[++i];
      return true;
    };
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else if (arg == "--quick") {
      options.quick = true;
    } else if ((arg == "--output" && value(&options.output)) ||
               (arg == "--measured" && value(&options.measured)) ||
               (arg == "--disassembler" && value(&options.disassembler)) ||
               (arg == "--sass-dir" && value(&options.sass_dir))) {
      continue;
    } else if (arg == "--device" && value(&options.device)) {
      if (!arch_params_for_device(options.device)) {
        std::cerr << "fstitch_kernel_report: unknown device model \"" << options.device
                  << "\" (known: a100, h100, h200)\n";
        return std::nullopt;
      }
    } else {
      std::cerr << "fstitch_kernel_report: bad argument \"" << arg << "\"\n" << kUsage;
      return std::nullopt;
    }
  }
  return options;
}

void progress(const std::string& line) {
  std::cerr << "[kernel-report] " << line << std::endl;
}

// One kernel of one planned case, everything the table shows about it.
struct KernelRow {
  const KernelCase* c = nullptr;
  const FusionPlan* plan = nullptr;
  size_t index = 0;  // in the plan
  jit::ModulePtr module;
};

// Findings grouped by kind, each with the kernels it concerns.
class Findings {
 public:
  void add(const std::string& kind, const std::string& where) { items_[kind].push_back(where); }
  std::string render() const {
    if (items_.empty()) return "None.\n";
    std::string out;
    for (const auto& [kind, where] : items_) {
      out += "- " + kind + " (" + std::to_string(where.size()) + "): ";
      for (size_t i = 0; i < where.size() && i < 8; ++i) out += (i == 0 ? "" : ", ") + where[i];
      if (where.size() > 8) out += ", and " + std::to_string(where.size() - 8) + " more";
      out += ".\n";
    }
    return out;
  }

 private:
  std::map<std::string, std::vector<std::string>> items_;
};

// Shared memory a block of the kernel holds: the static arrays ptxas reports and the dynamic
// shared memory its launches pass.
int64_t shared_bytes(const jit::FunctionResources& f, const KernelSpec& spec) {
  return static_cast<int64_t>(f.shared_bytes) + static_cast<int64_t>(spec.dynamic_shared_bytes);
}

std::string label_of(const KernelCase& c) {
  return c.graph + " " + c.shape + " " + dtype_name(c.dtype);
}

std::string percent(double fraction) {
  return fixed(100.0 * fraction, 0);
}

class Report {
 public:
  Report(const Options& options, std::optional<Disassembler> disassembler, std::string disassembler_note,
         MeasuredRun measured)
      : options_(options),
        disassembler_(std::move(disassembler)),
        disassembler_note_(std::move(disassembler_note)),
        measured_(std::move(measured)) {}

  // Plans every case, compiles every kernel (each distinct source once) and disassembles
  // every distinct module once.
  void run(std::vector<KernelCase>& cases) {
    std::vector<jit::CompileRequest> requests;
    for (KernelCase& c : cases) {
      verify_graph(c.built);
      FusionOptions fusion;
      fusion.policy = FusionPolicy::kStitch;
      fusion.target_sm = c.arch;
      fusion.device = params_for(c.arch);
      plans_.push_back(std::make_unique<FusionPlan>(plan_fusion(c.built, fusion)));
      const FusionPlan& plan = *plans_.back();
      for (size_t k = 0; k < plan.kernels.size(); ++k) {
        jit::CompileRequest request;
        request.source = std::string(kernel_prelude()) + "\n" + emit_kernel(c.built, plan.kernels[k]);
        request.name = plan.kernels[k].name + ".cu";
        request.arch = c.arch;
        requests.push_back(std::move(request));
        rows_.push_back({&c, &plan, k, nullptr});
      }
    }
    progress("planned " + std::to_string(cases.size()) + " graphs into " + std::to_string(rows_.size()) +
             " kernels; compiling");
    jit::KernelCache cache(jit::KernelCacheOptions{});
    std::vector<jit::ModulePtr> modules;
    compile_seconds_ = seconds_of([&] {
      try {
        modules = cache.compile_all(requests);
      } catch (const std::exception&) {
        // One kernel that does not compile must not cost the others their rows: compile each
        // alone (the ones that did are memory hits now) and list the failures.
        modules.assign(requests.size(), nullptr);
        for (size_t i = 0; i < requests.size(); ++i) {
          try {
            modules[i] = cache.get(requests[i]);
          } catch (const std::exception& e) {
            const std::string what = e.what();
            findings_.add("does not compile (" + what.substr(0, what.find('\n')).substr(0, 160) + ")",
                          label_of(*rows_[i].c) + " sm_" + std::to_string(rows_[i].c->arch));
          }
        }
      }
    });
    compiles_ = cache.stats().compiled;
    for (size_t i = 0; i < rows_.size(); ++i) rows_[i].module = modules[i];
    progress("compiled " + std::to_string(compiles_) + " distinct kernels in " + fixed(compile_seconds_, 1) +
             " s");
    if (!disassembler_) return;
    disassemble_seconds_ = seconds_of([&] { disassemble_all(); });
    progress("disassembled " + std::to_string(sass_.size()) + " modules in " +
             fixed(disassemble_seconds_, 1) + " s");
  }

  void write(std::ostream& out, const MachineInfo& machine) {
    out << "# fstitch static kernel report\n\n";
    out << "- Date: " << machine.date << "\n";
    out << "- CPU: " << machine.cpu_model << " (" << machine.cpus_available << " available)\n";
    out << "- fstitch build: " << machine.compiler << ", " << machine.build_type << "\n";
    out << "- NVRTC: " << machine.nvrtc_version << " (" << machine.nvrtc_library << "); " << compiles_
        << " distinct kernels compiled in " << fixed(compile_seconds_, 1) << " s\n";
    out << "- Disassembler: "
        << (disassembler_
                ? disassembler_->kind() + " " + disassembler_->version() + " (" + disassembler_->path() + ")"
                : "no disassembler (" + disassembler_note_ + "): the SASS columns are empty")
        << "\n";
    out << "- Measured: "
        << (measured_.loaded ? options_.measured + (measured_.device.empty() ? "" : ", " + measured_.device) +
                                   ", copy bandwidth " + fixed(measured_.copy_gb_per_s, 0) + " GB/s"
            : options_.measured.empty()
                ? std::string("no bench.json given (--measured): the measured columns are \"—\"")
                : "not loaded: " + measured_.error)
        << "\n\n";
    out << "Every kernel is planned with policy stitch for its architecture. \"main loop\" is the static "
           "instruction count of the hot loop (the innermost loop, a branch back to an earlier instruction, "
           "with the most global accesses) and its loads and stores, or \"no loop\"; \"instr\" is the "
           "whole kernel's static count. Access widths are in bits. bench/README.md describes every "
           "column.\n\n";
    for (int arch : {90, 80}) {
      const std::optional<ArchParams> params = params_for(arch);
      out << "## " << params->name << ": " << params->sm_count << " SMs, "
          << fixed(params->dram_bandwidth / 1e12, 2) << " TB/s in the cost model\n\n";
      const bool any =
          std::any_of(rows_.begin(), rows_.end(), [&](const KernelRow& r) { return r.c->arch == arch; });
      out << (any ? table(arch, *params) : std::string("No kernels in this run.\n")) << "\n";
    }
    out << "## Findings\n\n" << findings_.render();
  }

 private:
  // Each distinct module once, on as many threads as the machine has (nvdisasm takes about
  // half a second per kernel).
  void disassemble_all() {
    std::vector<const KernelRow*> distinct;
    for (const KernelRow& row : rows_) {
      if (row.module && sass_.emplace(row.module.get(), std::vector<SassFunction>{}).second)
        distinct.push_back(&row);
    }
    std::vector<std::string> listings(distinct.size()), errors(distinct.size());
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i = next++; i < distinct.size(); i = next++) {
        try {
          listings[i] = disassembler_->disassemble(distinct[i]->module->cubin);
        } catch (const std::exception& e) {
          errors[i] = e.what();
        }
      }
    };
    std::vector<std::thread> threads;
    for (unsigned t = 1; t < std::max(1u, std::thread::hardware_concurrency()); ++t)
      threads.emplace_back(work);
    work();
    for (std::thread& thread : threads) thread.join();
    for (size_t i = 0; i < distinct.size(); ++i) {
      const KernelRow& row = *distinct[i];
      if (!errors[i].empty()) {
        findings_.add("the disassembler failed: " + errors[i], label_of(*row.c));
        continue;
      }
      sass_[row.module.get()] = parse_sass(listings[i]);
      if (!options_.sass_dir.empty()) save_listing(row, listings[i]);
    }
  }

  void save_listing(const KernelRow& row, const std::string& listing) {
    std::filesystem::create_directories(options_.sass_dir);
    const std::string name = row.c->graph + "-" + row.c->shape + "-" + dtype_name(row.c->dtype) + "-sm_" +
                             std::to_string(row.c->arch) + "-k" + std::to_string(row.index) + ".sass";
    std::ofstream out(std::filesystem::path(options_.sass_dir) / name, std::ios::binary);
    out << listing;
  }

  std::string table(int arch, const ArchParams& params) {
    MarkdownTable t({{"graph", false},
                     {"shape", false},
                     {"dtype", false},
                     {"kernel", false},
                     {"schedule", false},
                     {"V"},
                     {"cache", false},
                     {"block"},
                     {"grid"},
                     {"planned grid"},
                     {"regs"},
                     {"est regs"},
                     {"spill B"},
                     {"smem B"},
                     {"blocks/SM"},
                     {"limit", false},
                     {"occ %"},
                     {"waves"},
                     {"last wave %"},
                     {"LDG", false},
                     {"STG", false},
                     {"atom"},
                     {"instr"},
                     {"main loop", false},
                     {"est us"},
                     {"est % copy"},
                     {"measured us"},
                     {"meas % copy"},
                     {"meas/est"}});
    const SmLimits limits = sm_limits(params);
    for (const KernelRow& row : rows_) {
      if (row.c->arch != arch) continue;
      const PlannedKernel& kernel = row.plan->kernels[row.index];
      const KernelSpec& spec = kernel.spec;
      const std::string where = label_of(*row.c) + " sm_" + std::to_string(arch) +
                                (row.plan->kernels.size() > 1 ? " k" + std::to_string(row.index) : "");
      std::vector<std::string> cells = {
          row.c->graph,
          row.c->shape,
          dtype_name(row.c->dtype),
          std::to_string(row.index) + "/" + std::to_string(row.plan->kernels.size()),
          kernel.packed() ? "packed " + std::to_string(kernel.parts.size())
                          : schedule_kind_name(spec.schedule),
          std::to_string(spec.vector_width),
          row_cache_cell(spec),
          std::to_string(spec.block_threads)};
      if (!row.module) {
        cells.insert(cells.end(), {std::to_string(spec.grid_blocks), std::to_string(spec.grid_blocks)});
        cells.push_back("compile failed");
        t.add_row(std::move(cells));
        continue;
      }
      const LaunchEstimate launch = launch_of(row);
      cells.insert(cells.end(), {std::to_string(launch.grid), std::to_string(spec.grid_blocks)});
      const jit::FunctionResources* f = jit::find_function(row.module->resources, kernel.name);
      if (f == nullptr) {
        cells.insert(cells.end(), {"?", std::to_string(spec.registers_estimate), "?", "?"});
        findings_.add("ptxas reported no resources", where);
      } else {
        cells.insert(cells.end(), {std::to_string(f->registers), std::to_string(spec.registers_estimate),
                                   std::to_string(f->spill_store_bytes + f->spill_load_bytes),
                                   std::to_string(f->shared_bytes)});
        if (f->spill_store_bytes + f->spill_load_bytes > 0) findings_.add("spills registers", where);
        const Occupancy occ = occupancy(limits, spec.block_threads, f->registers, shared_bytes(*f, spec));
        const Waves w = waves(launch.grid, limits.sm_count, occ.blocks_per_sm);
        cells.insert(cells.end(),
                     {std::to_string(occ.blocks_per_sm), occ.limiter, percent(occ.warp_occupancy),
                      fixed(w.waves, w.waves < 0.1 ? 3 : 2), percent(w.last_wave)});
        if (occ.warp_occupancy < 0.5) findings_.add("under 50% of the SM's warps resident", where);
        if (occ.blocks_per_sm < spec.planned_blocks_per_sm)
          findings_.add("fewer blocks per SM than the plan sized its grid for (registers above the estimate)",
                        where);
        if (w.waves > 0 && w.waves < 1)
          findings_.add("fewer blocks than the GPU holds at once (under one wave)", where);
        if (w.waves > 1 && w.waves < 4 && w.last_wave < 0.5)
          findings_.add("a short last wave (under 4 waves, the last under half full)", where);
      }
      sass_cells(row, kernel, where, cells);
      const double bytes = static_cast<double>(spec.bytes_read + spec.bytes_written);
      cells.push_back(fixed(launch.est_seconds * 1e6, 1));
      // As the plan dump says it: a copy of the same bytes over the kernel's estimate.
      cells.push_back(
          launch.est_seconds > 0 ? percent(fstitch::copy_seconds(params, bytes) / launch.est_seconds) : "—");
      measured_cells(row, cells);
      t.add_row(std::move(cells));
    }
    return t.render();
  }

  // Where a row kernel keeps the values its passes reuse: "registers 24" (slots per thread;
  // "+ next" when the next row is read ahead), "shared" or "recompute"; "—" for kernels
  // without a row.
  static std::string row_cache_cell(const KernelSpec& spec) {
    if (spec.reduced_axes.empty() || spec.schedule == ScheduleKind::kColumnTile) return "—";
    if (spec.cache == RowCache::kShared) return "shared";
    if (spec.cache == RowCache::kRecompute || spec.cached.empty()) return "recompute";
    return "registers " + std::to_string(spec.cached.size() * static_cast<size_t>(spec.elems_per_thread)) +
           (spec.prefetch == RowPrefetch::kNextRow ? " + next" : "");
  }

  void sass_cells(const KernelRow& row, const PlannedKernel& kernel, const std::string& where,
                  std::vector<std::string>& cells) {
    const auto found = sass_.find(row.module.get());
    const SassFunction* f = found == sass_.end() ? nullptr : find_sass_function(found->second, kernel.name);
    if (f == nullptr) {
      cells.insert(cells.end(),
                   {"—", "—", "—", "—", disassembler_ ? "not in the listing" : "no disassembler"});
      return;
    }
    std::string loop = "no loop";
    if (f->main_loop >= 0) {
      const SassLoop& l = f->loops[static_cast<size_t>(f->main_loop)];
      loop = std::to_string(l.instructions) + ": ld " + l.loads.text() + ", st " + l.stores.text();
    }
    cells.insert(cells.end(), {f->loads.text(), f->stores.text(), std::to_string(f->atomics),
                               std::to_string(f->instructions), loop});
    // A kernel whose loads are all narrower than 64 bits moves at most 4 bytes per
    // instruction: a candidate for vectorized access.
    const AccessCounts& loads = f->loads;
    if (loads.total() > 0 && loads.by_width[3] + loads.by_width[4] + loads.by_width[5] == 0)
      findings_.add("no global load wider than 32 bits", where);
  }

  void measured_cells(const KernelRow& row, std::vector<std::string>& cells) {
    const auto found =
        measured_.cases.find(measured_key(row.c->graph, row.c->shape, dtype_name(row.c->dtype)));
    // The GPU benchmark times whole plans: shown on the plan's first kernel.
    if (found == measured_.cases.end() || row.c->arch != 90 || row.index != 0) {
      cells.insert(cells.end(), {"—", "—", "—"});
      return;
    }
    const MeasuredCase& m = found->second;
    const double seconds = m.median_us * 1e-6;
    const bool whole_plan = row.plan->kernels.size() > 1;
    cells.push_back(fixed(m.median_us, 1) + (whole_plan ? " (plan)" : "") + (m.ok ? "" : " (check failed)"));
    cells.push_back(measured_.copy_gb_per_s > 0 ? percent(static_cast<double>(row.plan->planned_bytes) /
                                                          seconds / (measured_.copy_gb_per_s * 1e9))
                                                : "—");
    // The plan as launched: every kernel's estimate at its launch grid.
    double estimated = 0;
    for (const KernelRow& other : rows_) {
      if (other.plan == row.plan) estimated += launch_of(other).est_seconds;
    }
    cells.push_back(estimated > 0 ? fixed(seconds / estimated, 2) : "—");
  }

  // The grid fstitch's CUDA launcher uses for the row's kernel, at the occupancy its compiled
  // registers and shared memory allow, and the cost model's estimate of that launch; the
  // planned grid and estimate when ptxas reported no resources.
  LaunchEstimate launch_of(const KernelRow& row) const {
    const PlannedKernel& kernel = row.plan->kernels[row.index];
    const jit::FunctionResources* f =
        row.module ? jit::find_function(row.module->resources, kernel.name) : nullptr;
    if (f == nullptr) return LaunchEstimate{kernel.spec.grid_blocks, kernel.spec.est_seconds};
    const ArchParams params = params_for(row.c->arch);
    const Occupancy occ =
        occupancy(sm_limits(params), kernel.spec.block_threads, f->registers, shared_bytes(*f, kernel.spec));
    return estimate_launch(params, row.c->built, kernel, f->registers, occ.blocks_per_sm);
  }

  // The device the kernels of `arch` are planned and estimated for: --device when it is of
  // that architecture, else the GPU the measured run names when it is, else the
  // architecture's default.
  ArchParams params_for(int arch) const {
    for (const std::string& model : {options_.device, device_model_of(measured_.device)}) {
      const std::optional<ArchParams> device = model.empty() ? std::nullopt : arch_params_for_device(model);
      if (device && device->sm == arch) return *device;
      if (!options_.device.empty()) break;  // an explicit model of another architecture: the default
    }
    return *arch_params(arch);
  }

  const Options& options_;
  std::optional<Disassembler> disassembler_;
  std::string disassembler_note_;
  MeasuredRun measured_;
  std::vector<std::unique_ptr<FusionPlan>> plans_;
  std::vector<KernelRow> rows_;
  std::map<const jit::CompiledModule*, std::vector<SassFunction>> sass_;
  Findings findings_;
  uint64_t compiles_ = 0;
  double compile_seconds_ = 0;
  double disassemble_seconds_ = 0;
};

int run(const Options& options) {
  const MachineInfo machine = collect_machine_info();
  if (!machine.nvrtc_error.empty()) {
    std::cerr << "fstitch_kernel_report: NVRTC is not available: " << machine.nvrtc_error << "\n";
    return 2;
  }
  std::string why;
  std::optional<Disassembler> disassembler = Disassembler::find(options.disassembler, &why);
  progress(disassembler ? "disassembler: " + disassembler->path() : "no disassembler: " + why);
  MeasuredRun measured;
  if (!options.measured.empty()) {
    measured = read_measured(options.measured);
    progress(measured.loaded ? "measured times: " + std::to_string(measured.cases.size()) + " cases from " +
                                   options.measured
                             : "measured times not loaded: " + measured.error);
  }
  std::vector<KernelCase> cases = kernel_cases(options.quick);
  Report report(options, std::move(disassembler), why, std::move(measured));
  report.run(cases);
  std::ostringstream text;
  report.write(text, machine);
  if (options.output.empty()) {
    std::cout << text.str();
  } else {
    std::ofstream out(options.output, std::ios::binary);
    out << text.str();
    if (!out) {
      std::cerr << "fstitch_kernel_report: cannot write " << options.output << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace fstitch::bench

int main(int argc, char** argv) {
  const std::optional<fstitch::bench::Options> options = fstitch::bench::parse_options(argc, argv);
  if (!options) return 64;
  try {
    return fstitch::bench::run(*options);
  } catch (const std::exception& e) {
    std::cerr << "fstitch_kernel_report: " << e.what() << "\n";
    return 1;
  }
}
