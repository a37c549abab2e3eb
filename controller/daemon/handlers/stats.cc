// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/handlers/handlers.h"
#include "policy/describe.h"

namespace rl::daemon::handlers {

void RuleRates::sample(const Counters& counters, const std::vector<RuleView>& rules,
                       Clock::time_point at) {
  Sample s;
  s.at = at;
  for (const auto& v : rules)
    if (auto c = counters.rule_counters(v.compiled.stats_slot)) s.rules[v.name] = *c;
  previous_ = std::move(current_);
  current_ = std::move(s);
}

namespace {

const char* global_name(int i) {
#define RL_GC_NAME(id, name, packets, bytes, list, help) name,
  static constexpr const char* kNames[] = {RL_GLOBAL_COUNTERS(RL_GC_NAME)};
#undef RL_GC_NAME
  return kNames[i];
}

}  // namespace

Json stats(const Counters& counters, const std::vector<RuleView>& rules, const RuleRates& rates) {
  const auto& previous = rates.previous();
  double secs = std::chrono::duration<double>(rates.current().at - previous.at).count();
  control::StatsResponse out;
  for (const auto& v : rules) {
    auto c = counters.rule_counters(v.compiled.stats_slot);
    if (!c) continue;
    control::RuleStats r;
    r.name = v.name;
    r.action = policy::action_name(v.rule.action);
    r.counters = rule_counters(*c);
    // Stacked limits: what each one refused (dropped, or monitored under monitor).
    if (v.compiled.more_limits)
      if (auto by = counters.limit_counters(v.compiled.stats_slot)) {
        r.limits.emplace();
        for (uint32_t l = 0; l <= v.compiled.more_limits && l < RL_MAX_LIMITS; l++)
          r.limits->push_back({limit_name(v, l), (*by)[l].pkts, (*by)[l].bytes});
      }
    auto prev = previous.rules.find(v.name);
    if (prev != previous.rules.end() && secs > 0) {
      const auto& p = prev->second;
      r.rates = control::RuleRates{
          secs, (c->matched_pkts - p.matched_pkts) / secs, (c->passed_pkts - p.passed_pkts) / secs,
          (c->dropped_pkts - p.dropped_pkts) / secs, (c->monitored_pkts - p.monitored_pkts) / secs};
    }
    out.rules.push_back(std::move(r));
  }
  if (auto g = counters.global_counters())
    for (int i = 0; i < RL_GC_MAX; i++) out.global[global_name(i)] = {(*g)[i].pkts, (*g)[i].bytes};
  return control::ok(out);
}

}  // namespace rl::daemon::handlers
