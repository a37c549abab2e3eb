// SPDX-License-Identifier: GPL-2.0-only
// Policy -> data path entries. A pure function: no kernel, no I/O.
#pragma once

#include "common/result.h"
#include "compiler/compiled.h"
#include "policy/model.h"

namespace rl::compiler {

// `previous` carries the identities of the rule set in force, so unchanged rules keep their
// per-key state and counters; pass {} for a first compile.
Result<CompiledRuleSet> compile(const policy::Policy& policy, const RuleIds& previous = {},
                                const CompileOptions& options = {});

// Limiter parameters of one rule as the data path wants them (exposed for tests and rlctl).
Result<rl_rule> compile_limit(const policy::Rule& rule, const CompileOptions& options = {});

// Limit i + 1 of a rule (rule.more[i]) as the data path wants it: its own key and algorithm, the
// rule's action, block and report. Its id and stats_slot are set with the rule's identity.
Result<rl_rule> compile_stacked_limit(const policy::Rule& rule, size_t i,
                                      const CompileOptions& options = {});

// A rule's new-source budget as the token bucket the data path keeps in rl_new_sources (zero
// when the rule has none). Its id and stats_slot are the rule's, set once identities are known.
Result<rl_rule> compile_new_sources(const policy::Rule& rule, const CompileOptions& options = {});

// An operator's runtime override of limit `index` of `rule` (0 its own, i + 1 rule.more[i]):
// `in_force`, that limit as the data path holds it, judging at `rate` with `burst` (0: the
// rate's amount; token buckets only) instead. Every field but the algorithm's parameters and the
// clock they need is in_force's. Refused for a limit that has no key per source (an override
// gives the sources of a prefix a limit of their own), a connection limit, a cluster rule's own
// limit (the fleet's, which Redis judges) and a rate in another unit than the limit's.
Result<rl_rule> compile_override(const policy::Rule& rule, size_t index, const policy::Rate& rate,
                                 uint64_t burst, const rl_rule& in_force,
                                 const CompileOptions& options = {});

}  // namespace rl::compiler
