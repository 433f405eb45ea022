// Per-thread scratch arrays the size of the graph, so that the planner's hot loops test
// membership with one load instead of a hash lookup.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ir/graph.hpp"

namespace fstitch {

// Position of each operation in the member list under analysis (-1 elsewhere), kept in a
// per-thread array the size of the graph so that membership costs one load.
class MemberIndex {
 public:
  MemberIndex(size_t operations, const std::vector<ValueId>& members) : members_(members) {
    thread_local std::vector<int> scratch;
    if (scratch.size() < operations) scratch.resize(operations, -1);
    pos_ = &scratch;
    for (size_t i = 0; i < members.size(); ++i)
      (*pos_)[static_cast<size_t>(members[i])] = static_cast<int>(i);
  }
  ~MemberIndex() {
    for (ValueId v : members_) (*pos_)[static_cast<size_t>(v)] = -1;
  }
  MemberIndex(const MemberIndex&) = delete;
  MemberIndex& operator=(const MemberIndex&) = delete;
  int operator()(ValueId v) const { return (*pos_)[static_cast<size_t>(v)]; }

 private:
  const std::vector<ValueId>& members_;
  std::vector<int>* pos_;
};

// A per-thread "seen" mark per operation, cleared in O(1) by bumping a generation.
class SeenSet {
 public:
  explicit SeenSet(size_t operations) {
    thread_local std::vector<uint32_t> stamps;
    thread_local uint32_t generation = 0;
    if (stamps.size() < operations) stamps.resize(operations, 0);
    if (++generation == 0) {
      std::fill(stamps.begin(), stamps.end(), 0);
      generation = 1;
    }
    stamps_ = &stamps;
    generation_ = generation;
  }
  bool insert(ValueId v) {
    uint32_t& s = (*stamps_)[static_cast<size_t>(v)];
    if (s == generation_) return false;
    s = generation_;
    return true;
  }

 private:
  std::vector<uint32_t>* stamps_;
  uint32_t generation_;
};

}  // namespace fstitch
