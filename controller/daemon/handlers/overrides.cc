// SPDX-License-Identifier: GPL-2.0-only
#include <cstring>
#include <map>

#include "daemon/handlers/handlers.h"
#include "policy/rate.h"

namespace rl::daemon::handlers {

namespace {

constexpr uint64_t kSec = 1'000'000'000ULL;

std::string rule_name_of(const rl_override& o) {
  return std::string(o.rule, strnlen(o.rule, sizeof(o.rule)));
}

// The entry with its limit named by `rule`, its rule in force (null: not in force).
control::OverrideView view_under(const OverrideEntry& e, const RuleView* rule, uint64_t now) {
  const rl_override& o = e.value;
  control::OverrideView v;
  v.rule = rule_name_of(o);
  v.limit = rule ? limit_name(*rule, o.limit_index) : "limit" + std::to_string(o.limit_index);
  v.cidr = e.prefix.str();
  v.rate = policy::format_rate(
      {o.amount, o.period_ns, o.bytes ? policy::Unit::kBytes : policy::Unit::kPackets});
  v.burst = o.burst;
  if (o.expires_ns) v.expires_in_seconds = o.expires_ns > now ? (o.expires_ns - now) / kSec : 0;
  return v;
}

}  // namespace

control::OverrideView override_view(const OverrideEntry& e, const std::vector<RuleView>& rules,
                                    uint64_t now) {
  const std::string name = rule_name_of(e.value);
  for (const auto& r : rules)
    if (r.name == name) return view_under(e, &r, now);
  return view_under(e, nullptr, now);
}

Json override_add(OverrideBook& book, const std::vector<RuleView>& rules, const Clock& clock,
                  const Json& args) {
  auto req = args.get<control::OverrideAddRequest>();
  auto p = Prefix::parse(req.cidr);
  if (!p) return control::fail(p.error().message);
  auto rate = policy::parse_rate(req.rate);
  if (!rate) return control::fail("rate '" + req.rate + "': " + rate.error().message);
  if (std::string why = ttl_problem(req.ttl_seconds, "an override"); !why.empty())
    return control::fail(why);
  auto e = book.add({req.rule, req.limit, *p, *rate, req.burst, req.ttl_seconds * kSec});
  if (!e) return control::fail(e.error().message);
  return control::ok(override_view(*e, rules, clock.now_ns()));
}

Json override_del(OverrideBook& book, const std::vector<RuleView>& rules, const Clock& clock,
                  const Json& args) {
  auto req = args.get<control::OverrideDelRequest>();
  auto p = Prefix::parse(req.cidr);
  if (!p) return control::fail(p.error().message);
  auto gone = book.remove(req.rule, req.limit, *p);
  if (!gone) return control::fail(gone.error().message);
  if (!*gone)
    return control::fail("no override of rule '" + req.rule + "'" +
                         (req.limit.empty() ? "" : " limit '" + req.limit + "'") + " for " +
                         p->str());
  return control::ok(override_view(**gone, rules, clock.now_ns()));
}

Json override_list(const OverrideBook& book, const std::vector<RuleView>& rules,
                   const Clock& clock) {
  const uint64_t now = clock.now_ns();
  control::OverrideListResponse out;
  out.capacity_per_family = RL_OVERRIDES_MAX;
  // Each entry's rule by name, found once: a list may hold 131,072 entries.
  std::map<std::string, const RuleView*> by_name;
  for (const auto& r : rules) by_name[r.name] = &r;
  for (const auto& e : book.list()) {
    auto it = by_name.find(rule_name_of(e.value));
    out.entries.push_back(view_under(e, it == by_name.end() ? nullptr : it->second, now));
  }
  return control::ok(out);
}

}  // namespace rl::daemon::handlers
