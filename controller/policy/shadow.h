// SPDX-License-Identifier: GPL-2.0-only
// Finding rules that can never match because an earlier rule matches exactly the same packets
// (the first matching rule applies).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "policy/diagnostic.h"
#include "policy/fragment.h"

namespace rl::policy::detail {

// `in_order`: rules in evaluation order; those with errors are skipped. `sets`
// resolves every name their matches use.
void check_shadowed(const std::vector<const RuleDraft*>& in_order,
                    const std::map<std::string, const SourceSet*>& sets,
                    std::vector<Diagnostic>& errors);

}  // namespace rl::policy::detail
