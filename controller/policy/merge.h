// SPDX-License-Identifier: GPL-2.0-only
// Merging the files of a policy into one Policy, with the checks that need all of them:
// names defined once, references resolved, rules ordered and reachable.
#pragma once

#include <vector>

#include "policy/diagnostic.h"
#include "policy/fragment.h"
#include "policy/model.h"
#include "rl_abi.h"

namespace rl::policy::detail {

// At most this many rules in a policy: the largest rule table a data path holds (rld.yaml
// max_rules sizes the one in use).
inline constexpr size_t kMaxRules = RL_MAX_RULES_CAP;

// `fragments` in load order; that order breaks priority ties.
Policy merge(std::vector<Fragment> fragments, size_t max_rules, std::vector<Diagnostic>& errors);

}  // namespace rl::policy::detail
