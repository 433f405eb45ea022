// What the planner tests share: a graph planned under a policy and a target, and the
// policies every property is checked under.
#pragma once

#include "plan/plan.hpp"

namespace fstitch::testing {

inline FusionPlan plan(const Graph& g, FusionPolicy policy = FusionPolicy::kStitch, int sm = 90) {
  FusionOptions o;
  o.policy = policy;
  o.target_sm = sm;
  return plan_fusion(g, o);
}

inline constexpr FusionPolicy kPolicies[] = {FusionPolicy::kStitch, FusionPolicy::kLoop, FusionPolicy::kNone};

}  // namespace fstitch::testing
