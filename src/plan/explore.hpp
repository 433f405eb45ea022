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
  int max_consumer_combos = 24;
};

// Partitions the fusable operations into kernels (member lists, each valid for
// analyze_kernel). Every live fusable operation is in exactly one kernel; the kernels form
// a DAG.
std::vector<std::vector<ValueId>> explore_fusion(const PlanInputs& in, const ExploreOptions& options);

// Whether the kernel of `members` can have a column total: it holds a reduction that keeps
// its operand's last axis. The passes after the merge analyze only such kernels again.
bool may_hold_column_totals(const Graph& graph, const std::vector<ValueId>& members);

// A kernel whose rows wait at grid barriers for its column totals (RowStages::
// kRowsAfterTotals) is split at the barriers where the model scores the parts fastest, if
// faster than the one kernel: at each cut, the walks before it (which then store the element
// values the totals read, or those and the totals) and what reads the totals (with the
// totals, or reading them).
// The search composes patterns that grow toward consumers, so it may form the joined kernel
// without ever scoring that split. Appends the second kernels at the end.
// Returns whether any kernel was cut.
bool split_at_grid_barriers(const PlanInputs& in, std::vector<std::vector<ValueId>>& kernels);

// A kernel whose first walk sums, down the columns, a value one other kernel writes (and
// only this kernel reads the sums) waits at a grid barrier it need not have: the writer may
// sum its own rows' values as they are stored. The totals move to the writer where the model
// scores the two kernels faster so (Sinkhorn iterations, whose search joins each column sum
// with what reads it). No cycle can form: the totals' readers are in the kernel that already
// read the writer's value.
// Returns whether any moved.
bool move_column_totals_to_their_writer(const PlanInputs& in, std::vector<std::vector<ValueId>>& kernels);

// A kernel whose column totals are all read by one other kernel (a row kernel that sums its
// softmax down the columns, and an elementwise kernel that divides by the sums) gives them to
// that kernel where the model scores the two faster so (the reader becomes a column kernel
// that sums and scales what the rows stored). Moving a total cannot form a cycle: only its
// reader depends on it, and the reader already depended on the totals' kernel.
void move_column_totals_to_their_reader(const PlanInputs& in, std::vector<std::vector<ValueId>>& kernels);

// Where kernels start and end, to bound cycle searches: a path that leaves a set of
// operations can only come back below the bound (see KernelSpans::bound).
class KernelSpans {
 public:
  explicit KernelSpans(size_t operations = 0) : tree_(operations + 1, -1) {}
  void add(const std::vector<ValueId>& kernel);
  // The smallest B >= last such that every kernel starting at or below B also ends at or
  // below B: above B, no path can jump back down through a kernel.
  ValueId bound(ValueId last) const;

 private:
  ValueId reach(ValueId upto) const;  // the largest end of kernels starting at or below upto
  std::vector<ValueId> tree_;         // Fenwick tree of maxima
};

// Merges producer kernels into their only consumer kernel, and (policy stitch) packs
// kernels with one domain that share an input, while that is valid, acyclic and faster.
void merge_kernels(const PlanInputs& in, std::vector<int>& kernel_of,
                   std::vector<std::vector<ValueId>>& kernels);

// True when the member set, with the given kernel assignment of other operations
// (-1: unassigned, each such op its own kernel), would put a kernel on a cycle. `spans`
// holds (at least) the spans of `kernels`. Past `max_visits` operations the search gives up
// and answers true: a missed fusion, never a wrong one.
// Kernels are passed as pointers to their member lists, so that plans being composed can
// share them instead of copying.
using KernelList = std::vector<const std::vector<ValueId>*>;
bool creates_cycle(const PlanInputs& in, const std::vector<ValueId>& members,
                   const std::vector<int>& kernel_of, const KernelList& kernels, const KernelSpans& spans,
                   size_t max_visits);

}  // namespace fstitch
