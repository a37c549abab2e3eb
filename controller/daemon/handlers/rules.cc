// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/handlers/handlers.h"
#include "policy/describe.h"

namespace rl::daemon::handlers {

Json counters_json(const rl_rule_counters& c) {
  return Json{{"matched_packets", c.matched_pkts},     {"matched_bytes", c.matched_bytes},
              {"passed_packets", c.passed_pkts},       {"passed_bytes", c.passed_bytes},
              {"dropped_packets", c.dropped_pkts},     {"dropped_bytes", c.dropped_bytes},
              {"monitored_packets", c.monitored_pkts}, {"monitored_bytes", c.monitored_bytes}};
}

Json policy_list(const std::vector<RuleView>& rules) {
  Json out = Json::array();
  int pos = 0;
  for (const auto& v : rules)
    out.push_back({{"position", pos++},
                   {"name", v.name},
                   {"priority", v.rule.priority},
                   {"action", policy::action_name(v.rule.action)},
                   {"match", policy::describe_match(v.rule.match)},
                   {"limit", policy::describe_limit(v.rule)},
                   {"where", v.rule.where.str()}});
  return control::ok({{"rules", out}});
}

Json policy_show(const Counters& counters, const std::vector<RuleView>& rules, const Json& args) {
  std::string name = args.at("name");
  for (const auto& v : rules) {
    if (v.name != name) continue;
    auto c = counters.rule_counters(v.compiled.stats_slot);
    return control::ok({{"name", v.name},
                        {"priority", v.rule.priority},
                        {"where", v.rule.where.str()},
                        {"match", policy::describe_match(v.rule.match)},
                        {"limit", policy::describe_limit(v.rule)},
                        {"action", policy::action_name(v.rule.action)},
                        {"block_seconds", v.rule.block_ns / 1e9},
                        {"report", v.rule.report},
                        {"precise_clock", (v.compiled.flags & RL_RULE_F_PRECISE_CLOCK) != 0},
                        {"id", v.compiled.id},
                        {"counters", c ? counters_json(*c) : Json(nullptr)}});
  }
  return control::fail("no rule named '" + name + "' in force");
}

}  // namespace rl::daemon::handlers
