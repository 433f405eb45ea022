// FusionStitching plan exploration: approximate dynamic programming over the graph in
// post-order keeping the best few candidate patterns per operation, then composition of
// non-overlapping patterns into a plan, then remote fusion of independent kernels.
#pragma once

#include <vector>

#include "plan/kernel_spec.hpp"

namespace fstitch {

struct ExploreOptions {
  int candidates_per_op = 3;  // top-k patterns kept per operation
  int beam_width = 3;         // plans kept while composing
  int max_consumer_combos = 64;
};

// Partitions the fusable operations into kernels (member lists, each valid for
// analyze_kernel). Every live fusable operation is in exactly one kernel; the kernels form
// a DAG.
std::vector<std::vector<ValueId>> explore_fusion(const PlanInputs& in, const ExploreOptions& options);

// Merges producer kernels into their only consumer kernel, and (policy stitch) packs
// kernels with one domain that share an input, while that is valid, acyclic and faster.
void merge_kernels(const PlanInputs& in, std::vector<int>& kernel_of, std::vector<std::vector<ValueId>>& kernels);

// True when the member set, with the given kernel assignment of other operations
// (-1: unassigned, each such op its own kernel), would put a kernel on a cycle.
bool creates_cycle(const PlanInputs& in, const std::vector<ValueId>& members, const std::vector<int>& kernel_of,
                   const std::vector<std::vector<ValueId>>& kernels);

}  // namespace fstitch
