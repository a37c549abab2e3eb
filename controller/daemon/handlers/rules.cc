// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/handlers/handlers.h"
#include "policy/describe.h"

namespace rl::daemon::handlers {

control::RuleCounters rule_counters(const rl_rule_counters& c) {
  return {c.matched_pkts, c.matched_bytes, c.passed_pkts,    c.passed_bytes,
          c.dropped_pkts, c.dropped_bytes, c.monitored_pkts, c.monitored_bytes};
}

Json policy_list(const std::vector<RuleView>& rules) {
  control::PolicyListResponse out;
  int pos = 0;
  for (const auto& v : rules)
    out.rules.push_back({pos++, v.name, v.rule.priority, policy::action_name(v.rule.action),
                         policy::describe_match(v.rule.match), policy::describe_limit(v.rule),
                         v.rule.where.str()});
  return control::ok(out);
}

Json policy_show(const Counters& counters, const std::vector<RuleView>& rules, const Json& args) {
  std::string name = args.get<control::PolicyShowRequest>().name;
  for (const auto& v : rules) {
    if (v.name != name) continue;
    control::PolicyShowResponse out;
    out.name = v.name;
    out.priority = v.rule.priority;
    out.where = v.rule.where.str();
    out.match = policy::describe_match(v.rule.match);
    out.limit = policy::describe_limit(v.rule);
    out.action = policy::action_name(v.rule.action);
    out.block_seconds = v.rule.block_ns / 1e9;
    out.report = v.rule.report;
    out.precise_clock = (v.compiled.flags & RL_RULE_F_PRECISE_CLOCK) != 0;
    out.id = v.compiled.id;
    if (auto c = counters.rule_counters(v.compiled.stats_slot)) out.counters = rule_counters(*c);
    return control::ok(out);
  }
  return control::fail("no rule named '" + name + "' in force");
}

}  // namespace rl::daemon::handlers
