#include "plan/packing.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <type_traits>

#include "plan/cost_model.hpp"
#include "plan/launch_grid.hpp"
#include "support/checked_math.hpp"
#include "support/number_text.hpp"

namespace fstitch {
namespace {

std::string micros(double seconds) {
  return fixed_text(seconds * 1e6, 2) + " us";
}

// Pointers a launch may take in its parameter space.
size_t param_capacity(const ArchParams& arch) {
  return static_cast<size_t>(std::max(0, arch.kernel_param_bytes)) / sizeof(void*);
}

bool splits_in_clusters(const KernelSpec& s) {
  return s.schedule == ScheduleKind::kSplitRow && s.split.residency == GroupResidency::kCluster;
}
bool splits_across_grid(const KernelSpec& s) {
  return s.schedule == ScheduleKind::kSplitRow && s.split.residency == GroupResidency::kCooperative;
}

// A part's shared memory declared statically (the rest is dynamic).
size_t static_shared_bytes(const Graph& g, const KernelSpec& s) {
  const size_t all = kernel_shared_bytes(g, s);
  return all > s.dynamic_shared_bytes ? all - s.dynamic_shared_bytes : 0;
}

// What a packed launch holds, summed over its parts (shared memory: the largest part's static
// and dynamic bytes, as the parts overlay one buffer of each), against the limits of one launch.
struct LaunchTotals {
  int block_threads = 0;
  // The launch's kind: split rows whose groups are clusters of this many blocks (0: none), or
  // split rows whose groups meet across a cooperative grid.
  int cluster_blocks = 0;
  bool cooperative = false;
  size_t params = 0;
  size_t shared = 0;   // static
  size_t dynamic = 0;  // dynamic
  double code = 0;
  std::optional<uint64_t> bytes = uint64_t{0};  // nothing past 2^64

  LaunchTotals() = default;
  LaunchTotals(const Graph& g, const KernelSpec& part, size_t part_params)
      : block_threads(part.block_threads),
        cluster_blocks(splits_in_clusters(part) ? part.split.blocks : 0),
        cooperative(splits_across_grid(part)),
        // A split row across the grid passes its partials and counters too.
        params(part_params + (splits_across_grid(part) ? 2 : 0)),
        shared(static_shared_bytes(g, part)),
        dynamic(part.dynamic_shared_bytes),
        code(code_instructions(g, part)) {
    bytes = checked_add(part.bytes_read, part.bytes_written);
  }
  bool split_rows() const { return cluster_blocks > 0 || cooperative; }
  LaunchTotals plus(const LaunchTotals& other) const {
    LaunchTotals sum = *this;
    sum.params += other.params;
    sum.shared = std::max(shared, other.shared);  // the parts overlay one buffer: a block runs one
    sum.dynamic = std::max(dynamic, other.dynamic);
    sum.code += other.code;
    sum.bytes = bytes && other.bytes ? checked_add(*bytes, *other.bytes) : std::nullopt;
    return sum;
  }
};

// Why a part of `part` cannot join a launch of `launch`, or empty when it can: the same block
// size, and within one launch's parameters, shared memory, code and traffic.
std::string why_not_together(const PlanInputs& in, const LaunchTotals& launch, const LaunchTotals& part) {
  if (part.block_threads != launch.block_threads) {
    return "block sizes differ (" + std::to_string(part.block_threads) + " threads against " +
           std::to_string(launch.block_threads) + ")";
  }
  // A cluster launch is made of clusters alone: every part a split row whose groups are
  // clusters of the same size, so that each part's range starts at a cluster's first block. A
  // cooperative launch is made of split rows whose groups meet across it.
  if (part.cluster_blocks != launch.cluster_blocks || part.cooperative != launch.cooperative) {
    auto kind = [](const LaunchTotals& t) {
      if (t.cooperative) return std::string("groups across a cooperative grid");
      return t.cluster_blocks > 0 ? "clusters of " + std::to_string(t.cluster_blocks) + " blocks"
                                  : std::string("no clusters");
    };
    return "launch kinds differ (" + kind(part) + " against " + kind(launch) + ")";
  }
  const LaunchTotals sum = launch.plus(part);
  if (sum.params > param_capacity(in.arch)) {
    return "resources: " + std::to_string(sum.params) + " pointer parameters, over the " +
           std::to_string(param_capacity(in.arch)) + " a launch takes";
  }
  const size_t shared_limit = std::min(kStaticSharedLimit, in.shared_budget);
  if (sum.shared > shared_limit) {
    return "resources: " + std::to_string(sum.shared) + " bytes of static shared memory per block, over " +
           std::to_string(shared_limit);
  }
  if (sum.shared + sum.dynamic > in.shared_budget) {
    return "resources: " + std::to_string(sum.shared + sum.dynamic) +
           " bytes of shared memory per block, over " + std::to_string(in.shared_budget);
  }
  if (sum.code > in.code_budget) {
    return "resources: about " + std::to_string(static_cast<long long>(sum.code)) +
           " instructions of code, over the budget of " + std::to_string(static_cast<long long>(in.code_budget));
  }
  if (!sum.bytes) return "resources: the launch would move more than 2^64 bytes";
  return "";
}

struct OpenPack {
  std::vector<int> kernels;
  std::vector<KernelSpec> parts;  // each kernel as the pack's part (a schedule that can share it)
  LaunchTotals totals;
  double seconds = 0;  // the packed estimate (or the kernel's own, for one)
};

// Each kernel's schedules as a part of packed launches, per block size: its own schedule when
// that can share a launch, else the best one that can (analyze_kernel under a constraint),
// or the reason there is none. Analyzed once per kernel and block size.
class PartSchedules {
 public:
  PartSchedules(const PlanInputs& in, const std::vector<KernelSpec>& specs) : in_(in), specs_(specs) {}

  const Graph& graph() const { return *in_.graph; }

  // The kernel as a part of a launch of `block_threads` (0: any), or nothing with `why`. Its
  // own split rows only where the launch is one of split rows (`split_rows`: of their kind,
  // why_not_together checks); elsewhere it is scheduled again without them. With
  // `max_split_blocks`, a split row across a cooperative grid in groups of at most that many
  // blocks: its own, or its rows split again over fewer blocks.
  const KernelSpec* part(int k, int block_threads, bool split_rows, std::string* why,
                         int max_split_blocks = 0) {
    const KernelSpec& own = specs_[static_cast<size_t>(k)];
    const std::string own_refusal = why_not_packable(own);
    const bool own_split = own.schedule == ScheduleKind::kSplitRow;
    const bool fits_limit =
        max_split_blocks == 0 || (splits_across_grid(own) && own.split.blocks <= max_split_blocks);
    if (own_refusal.empty() && (block_threads == 0 || own.block_threads == block_threads) &&
        (split_rows || !own_split) && fits_limit)
      return &own;
    auto key = std::make_tuple(k, block_threads, max_split_blocks);
    auto found = cache_.find(key);
    if (found == cache_.end()) {
      Entry e;
      Rejection rejection;
      const ScheduleConstraint constraint{
          max_split_blocks > 0 ? LaunchSharing::kPackedSplitRowPart : LaunchSharing::kPackedPart,
          block_threads, max_split_blocks};
      // Copies of inputs to outputs have no members to schedule again.
      if (!own.members.empty() && analyze_kernel(in_, own.members, &e.spec, &rejection, constraint)) {
        e.ok = true;
      } else if (max_split_blocks > 0) {
        e.why = "resources: its rows split over at most " + std::to_string(max_split_blocks) +
                " blocks fit no schedule (" + rejection.reason + ")";
      } else if (!own_refusal.empty()) {
        e.why = own_refusal;
      } else if (own_split && (block_threads == 0 || own.block_threads == block_threads)) {
        e.why = "its split rows need a launch of their kind, and no schedule without them fits this one";
      } else {
        e.why = "block sizes differ (" + std::to_string(own.block_threads) + " threads against " +
                std::to_string(block_threads) + ")";
      }
      found = cache_.emplace(key, std::move(e)).first;
    }
    if (!found->second.ok) {
      *why = found->second.why;
      return nullptr;
    }
    return &found->second.spec;
  }

 private:
  struct Entry {
    bool ok = false;
    KernelSpec spec;
    std::string why;
  };
  const PlanInputs& in_;
  const std::vector<KernelSpec>& specs_;
  std::map<std::tuple<int, int, int>, Entry> cache_;
};

// `pack` with every part scheduled for blocks of `block_threads` (itself when they already
// are), or `why` one of its kernels cannot be.
OpenPack pack_at_block_size(PartSchedules& schedules, const OpenPack& pack, const std::vector<size_t>& params,
                            int block_threads, std::string* why) {
  if (pack.totals.block_threads == block_threads) return pack;
  OpenPack again;
  for (int k : pack.kernels) {
    const KernelSpec* part = schedules.part(k, block_threads, pack.totals.split_rows(), why);
    if (part == nullptr) return again;
    const LaunchTotals added(schedules.graph(), *part, params[static_cast<size_t>(k)]);
    again.totals = again.kernels.empty() ? added : again.totals.plus(added);
    again.kernels.push_back(k);
    again.parts.push_back(*part);
  }
  again.seconds = pack.seconds;
  return again;
}

// `pack`, a cooperative launch of split rows past one wave of `wave` blocks, with every part's
// rows split again over its equal share of the wave (parts whose groups are already that small
// keep them), or `why` one of its kernels cannot be. Packing saves launches, never bandwidth:
// a part whose smaller groups would move more bytes (slices too long to keep on chip, read
// again) is refused.
OpenPack pack_split_over_shares(const PlanInputs& in, PartSchedules& schedules,
                                const std::vector<KernelSpec>& specs, const OpenPack& pack,
                                const std::vector<size_t>& params, int64_t wave, std::string* why) {
  OpenPack again;
  const auto share = static_cast<int>(wave / static_cast<int64_t>(pack.kernels.size()));
  if (share < 2) {  // a group is two blocks at least
    *why = "resources: " + std::to_string(pack.kernels.size()) + " split rows cannot share a wave of " +
           std::to_string(wave) + " blocks";
    return OpenPack{};
  }
  for (int k : pack.kernels) {
    const KernelSpec* part = schedules.part(k, pack.totals.block_threads, true, why, share);
    if (part == nullptr) return OpenPack{};
    const KernelSpec& own = specs[static_cast<size_t>(k)];
    const uint64_t own_bytes = add_traffic(own.bytes_read, own.bytes_written);
    const uint64_t part_bytes = add_traffic(part->bytes_read, part->bytes_written);
    if (part_bytes > own_bytes) {
      *why = "cost model: its rows split over " + std::to_string(part->split.blocks) +
             " blocks (its share of a wave of " + std::to_string(wave) + ") would move " +
             std::to_string(part_bytes) + " bytes against its own " + std::to_string(own_bytes);
      return OpenPack{};
    }
    const LaunchTotals added(schedules.graph(), *part, params[static_cast<size_t>(k)]);
    if (!again.kernels.empty()) {
      *why = why_not_together(in, again.totals, added);
      if (!why->empty()) return OpenPack{};
    }
    again.totals = again.kernels.empty() ? added : again.totals.plus(added);
    again.kernels.push_back(k);
    again.parts.push_back(*part);
  }
  again.seconds = pack.seconds;
  return again;
}

}  // namespace

std::string why_not_packable(const KernelSpec& s) {
  // Split rows share launches of their own kind (why_not_together).
  if (s.schedule == ScheduleKind::kColumnTile && s.column.split > 1)
    return "its split column tiles keep partials and counters of their own";
  if (!s.column_totals.empty()) return "its column totals keep partials and counters of their own";
  return "";
}

PackedLaunch make_packed_launch(const PlanInputs& in, std::vector<KernelSpec> parts) {
  const Graph& g = *in.graph;
  const ArchParams& a = in.arch;
  PackedLaunch launch;
  int registers = 0;
  size_t shared = 0, dynamic = 0;
  for (const KernelSpec& s : parts) {
    registers =
        std::max(registers, s.registers_estimate > 0 ? s.registers_estimate : estimate_registers(g, s));
    shared = std::max(shared, static_shared_bytes(g, s));
    dynamic = std::max(dynamic, s.dynamic_shared_bytes);
  }
  const int threads = parts.front().block_threads;
  const int per_sm = std::max(1, occupancy(a, threads, registers, shared + dynamic).blocks_per_sm);
  KernelSpec& sum = launch.summary;
  sum.block_threads = threads;
  sum.registers_estimate = registers;
  sum.planned_blocks_per_sm = per_sm;
  sum.grid_policy = GridPolicy::kFixed;
  sum.grid_blocks = 0;
  // Each part's dynamic shared memory starts at the launch's one dynamic buffer.
  sum.dynamic_shared_bytes = dynamic;
  std::set<ValueId> loaded, inlined;  // each once, in part order
  // Split rows across a cooperative grid: every part's groups resident at once, each part an
  // equal share of one wave in whole groups, never more groups than its partials are placed
  // for, and at least one (a launch past one wave is refused where packs are joined).
  const bool cooperative = splits_across_grid(parts.front());
  const int64_t share = static_cast<int64_t>(per_sm) * a.sm_count / static_cast<int64_t>(parts.size());
  for (KernelSpec& s : parts) {
    s.registers_estimate = registers;
    s.planned_blocks_per_sm = per_sm;
    if (cooperative) {
      const int64_t G = std::max(1, s.split.blocks);
      const int64_t groups = std::max<int64_t>(1, std::min(s.grid_blocks / G, share / G));
      s.grid_blocks = groups * G;
    } else if (s.grid_policy == GridPolicy::kStrided) {
      s.grid_blocks = grid_for_occupancy(s, per_sm, a.sm_count);
    }
    sum.grid_blocks += s.grid_blocks;
    sum.members.insert(sum.members.end(), s.members.begin(), s.members.end());
    sum.roles.insert(sum.roles.end(), s.roles.begin(), s.roles.end());
    sum.pures.insert(sum.pures.end(), s.pures.begin(), s.pures.end());
    sum.levels.insert(sum.levels.end(), s.levels.begin(), s.levels.end());
    sum.stored.insert(sum.stored.end(), s.stored.begin(), s.stored.end());
    for (ValueId v : s.loaded) {
      if (loaded.insert(v).second) sum.loaded.push_back(v);
    }
    for (ValueId v : s.inlined) {
      if (inlined.insert(v).second) sum.inlined.push_back(v);
    }
    sum.bytes_read = add_traffic(sum.bytes_read, s.bytes_read);
    sum.bytes_written = add_traffic(sum.bytes_written, s.bytes_written);
  }
  // Members sorted by id, as every spec keeps them (KernelSpec::index_of searches them), with
  // their roles, purities and levels.
  std::vector<size_t> by_id(sum.members.size());
  for (size_t i = 0; i < by_id.size(); ++i) by_id[i] = i;
  std::sort(by_id.begin(), by_id.end(), [&](size_t x, size_t y) { return sum.members[x] < sum.members[y]; });
  auto permuted = [&](const auto& values) {
    std::remove_const_t<std::remove_reference_t<decltype(values)>> out;
    for (size_t i : by_id) out.push_back(values[i]);
    return out;
  };
  sum.members = permuted(sum.members);
  sum.roles = permuted(sum.roles);
  sum.pures = permuted(sum.pures);
  sum.levels = permuted(sum.levels);
  sum.work_units = sum.grid_blocks;
  // Parts of split rows in clusters (why_not_together: then every part, of one cluster size):
  // the launch is made of those clusters.
  if (splits_in_clusters(parts.front())) {
    sum.split.blocks = parts.front().split.blocks;
    sum.split.residency = GroupResidency::kCluster;
  }
  sum.est_seconds = packed_seconds_at_occupancy(a, g, parts, per_sm);
  for (KernelSpec& s : parts) s.est_seconds = estimate_kernel_at_occupancy(a, g, s, per_sm).total_seconds;
  launch.parts = std::move(parts);
  return launch;
}

double packed_seconds_at_occupancy(const ArchParams& a, const Graph& g, const std::vector<KernelSpec>& parts,
                                   int blocks_per_sm) {
  if (blocks_per_sm <= 0) return std::numeric_limits<double>::infinity();
  const double capacity = static_cast<double>(a.sm_count) * blocks_per_sm;
  double longest = 0, busy = 0, bytes = 0;
  for (const KernelSpec& s : parts) {
    const CostBreakdown c = estimate_kernel_at_occupancy(a, g, s, blocks_per_sm);
    const double body = c.total_seconds - c.launch_seconds;
    const double share = std::min(1.0, static_cast<double>(std::max<int64_t>(1, s.grid_blocks)) / capacity);
    longest = std::max(longest, body);
    busy += share * body;
    bytes += static_cast<double>(s.bytes_read) + static_cast<double>(s.bytes_written);
  }
  return a.launch_overhead_seconds +
         std::max({longest, busy, bytes / (a.dram_bandwidth * a.copy_efficiency)});
}

Packing pack_independent_kernels(const PlanInputs& in, const std::vector<KernelSpec>& specs,
                                 const std::vector<std::vector<int>>& successors,
                                 const std::vector<int>& order, const std::vector<size_t>& params) {
  Packing packing;
  std::vector<int> level(specs.size(), 0);
  int levels = 0;
  for (int k : order) {
    levels = std::max(levels, level[static_cast<size_t>(k)] + 1);
    for (int s : successors[static_cast<size_t>(k)])
      level[static_cast<size_t>(s)] =
          std::max(level[static_cast<size_t>(s)], level[static_cast<size_t>(k)] + 1);
  }
  std::vector<std::vector<int>> at_level(static_cast<size_t>(levels));
  for (int k : order) at_level[static_cast<size_t>(level[static_cast<size_t>(k)])].push_back(k);

  const bool packs = in.policy != FusionPolicy::kNone;
  PartSchedules schedules(in, specs);
  for (const std::vector<int>& kernels : at_level) {
    std::vector<OpenPack> open;
    std::vector<std::pair<int, std::string>> reasons;  // per kernel left alone: the best pack's refusal
    std::vector<std::pair<int, std::string>> opened;   // per kernel opening a pack beside others: why
    for (int k : kernels) {
      const KernelSpec& own = specs[static_cast<size_t>(k)];
      const size_t own_params = params[static_cast<size_t>(k)];
      if (!packs) {
        packing.launches.push_back({k});
        packing.parts.emplace_back();
        continue;
      }
      // The best pack to join: at the pack's block size, or with its parts scheduled again
      // at the joining kernel's own block size.
      int best = -1;
      double best_gain = 0;
      OpenPack best_pack;
      std::string refusal;
      double closest_loss = std::numeric_limits<double>::infinity();
      // Why a cooperative launch of split rows, its own kind, would not take it: reported over
      // the cost refusals of packs that would schedule it again without its split.
      std::string kin_refusal;
      for (size_t p = 0; p < open.size(); ++p) {
        const OpenPack& pack = open[p];
        std::vector<int> block_sizes = {pack.totals.block_threads};
        if (own.block_threads != pack.totals.block_threads) block_sizes.push_back(own.block_threads);
        for (int block_threads : block_sizes) {
          std::string why;
          OpenPack joined = pack_at_block_size(schedules, pack, params, block_threads, &why);
          const KernelSpec* part =
              why.empty() ? schedules.part(k, block_threads, joined.totals.split_rows(), &why) : nullptr;
          if (part != nullptr) {
            const LaunchTotals added(*in.graph, *part, own_params);
            why = why_not_together(in, joined.totals, added);
            joined.kernels.push_back(k);
            joined.parts.push_back(*part);
            joined.totals = joined.totals.plus(added);
          }
          if (!why.empty()) {
            if (refusal.empty()) refusal = why;
            continue;
          }
          PackedLaunch launch = make_packed_launch(in, joined.parts);
          if (joined.totals.cooperative) {
            auto wave_of = [&](const PackedLaunch& l) {
              return static_cast<int64_t>(l.summary.planned_blocks_per_sm) * in.arch.sm_count;
            };
            // Groups as large as the device split their rows again over a share of the wave;
            // longer slices may hold the launch to fewer blocks per SM, and so to a smaller
            // wave and share (each try a smaller share than the last).
            int64_t tried_wave = std::numeric_limits<int64_t>::max();
            while (launch.summary.grid_blocks > wave_of(launch) && wave_of(launch) < tried_wave) {
              tried_wave = wave_of(launch);
              std::string resplit_why;
              OpenPack resplit =
                  pack_split_over_shares(in, schedules, specs, joined, params, tried_wave, &resplit_why);
              if (resplit.kernels.empty()) {
                if (kin_refusal.empty()) kin_refusal = resplit_why;
                break;
              }
              launch = make_packed_launch(in, resplit.parts);
              joined = std::move(resplit);
            }
            if (launch.summary.grid_blocks > wave_of(launch)) {
              if (kin_refusal.empty())
                kin_refusal = "resources: the split rows' groups would not all be resident (" +
                              std::to_string(launch.summary.grid_blocks) + " blocks against one wave of " +
                              std::to_string(wave_of(launch)) + ")";
              continue;
            }
          }
          const double apart = pack.seconds + own.est_seconds;
          const double gain = apart - launch.summary.est_seconds;
          if (gain <= kEstimateResolution * apart) {
            // The cost refusal reported is the closest call: the pack it came nearest to joining.
            if (refusal.rfind("cost", 0) != 0 || -gain < closest_loss) {
              closest_loss = -gain;
              refusal = "cost model: one launch estimated no faster (" + micros(launch.summary.est_seconds) +
                        " packed against " + micros(pack.seconds) + " + " + micros(own.est_seconds) +
                        " apart)";
            }
            continue;
          }
          if (best < 0 || gain > best_gain) {
            best = static_cast<int>(p);
            best_gain = gain;
            joined.seconds = launch.summary.est_seconds;
            best_pack = std::move(joined);
          }
        }
      }
      if (best >= 0) {
        open[static_cast<size_t>(best)] = std::move(best_pack);
        continue;
      }
      // A pack of its own that later kernels may join, as the best schedule that can share a
      // launch (its own schedule while it stays alone).
      std::string why;
      const KernelSpec* part = schedules.part(k, 0, true, &why);
      if (!kin_refusal.empty()) refusal = kin_refusal;
      if (refusal.empty()) refusal = why;
      if (!refusal.empty()) reasons.emplace_back(k, refusal);
      if (part == nullptr) {
        packing.launches.push_back({k});
        packing.parts.emplace_back();
        continue;
      }
      if (!open.empty() && !refusal.empty()) opened.emplace_back(k, refusal);
      OpenPack pack;
      pack.kernels.push_back(k);
      pack.parts.push_back(*part);
      pack.totals = LaunchTotals(*in.graph, *part, own_params);
      pack.seconds = own.est_seconds;
      open.push_back(std::move(pack));
    }
    for (OpenPack& pack : open) {
      if (pack.kernels.size() > 1) {
        for (const auto& [k, why] : opened) {
          if (k == pack.kernels.front()) packing.opened.emplace_back(k, why);
        }
      }
      packing.launches.push_back(pack.kernels);
      packing.parts.push_back(pack.kernels.size() > 1 ? std::move(pack.parts) : std::vector<KernelSpec>{});
    }
    if (kernels.size() < 2) continue;
    std::set<int> alone;
    for (const std::vector<int>& launch : packing.launches) {
      if (launch.size() == 1) alone.insert(launch[0]);
    }
    for (auto& [k, why] : reasons) {
      if (alone.count(k)) packing.notes.emplace_back(k, why);
    }
  }
  return packing;
}

}  // namespace fstitch
