// SPDX-License-Identifier: GPL-2.0-only
#include <cstring>

#include "daemon/handlers/handlers.h"
#include "policy/rate.h"

namespace rl::daemon::handlers {

namespace {
constexpr uint64_t kSec = 1'000'000'000ULL;
}  // namespace

control::OverrideView override_view(const OverrideEntry& e, const std::vector<RuleView>& rules,
                                    uint64_t now) {
  const rl_override& o = e.value;
  control::OverrideView v;
  v.rule.assign(o.rule, strnlen(o.rule, sizeof(o.rule)));
  v.limit = "limit" + std::to_string(o.limit_index);
  for (const auto& r : rules)
    if (r.name == v.rule) v.limit = limit_name(r, o.limit_index);
  v.cidr = e.prefix.str();
  v.rate = policy::format_rate(
      {o.amount, o.period_ns, o.bytes ? policy::Unit::kBytes : policy::Unit::kPackets});
  v.burst = o.burst;
  if (o.expires_ns) v.expires_in_seconds = o.expires_ns > now ? (o.expires_ns - now) / kSec : 0;
  return v;
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
  for (const auto& e : book.list()) out.entries.push_back(override_view(e, rules, now));
  return control::ok(out);
}

}  // namespace rl::daemon::handlers
