// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/handlers/key_show.h"

#include <algorithm>

#include "common/key_text.h"
#include "daemon/handlers/handlers.h"
#include "daemon/key_state.h"

namespace rl::daemon {

namespace {

using control::Json;
using control::KeyLimit;

KeyLimit noted(const char* note) {
  KeyLimit k;
  k.note = note;
  return k;
}

// What one limit holds for the address: its key, the slot's state, and the drops the offender
// table knows of that key under that limit (stacked limits have ids of their own, so a /24's
// drops are not the source's).
KeyLimit limit_entry(const Datapath& dp, const rl_rule& in_force, const Address& addr,
                     std::optional<uint16_t> port, const std::vector<Offender>& known, uint64_t now,
                     const OverrideBook* overrides, const std::vector<RuleView>& rules) {
  // An override's copy of the limit judges the address: its state reads by that rate.
  std::optional<OverrideEntry> over;
  if (overrides) over = overrides->find(in_force.id, addr);
  const rl_rule& lim = over ? over->value.limit : in_force;
  if (lim.key_kind == RL_KEY_SRC_DST)
    return noted("keyed by source and destination together: one address names no key");
  if (lim.key_kind == RL_KEY_SRC_ADDR_DPORT && !port)
    return noted("keyed by source and port: give ADDRESS|PORT");
  KeyLimit j;
  if (over) j.override_by = handlers::override_view(*over, rules, now);
  rl_key k = key_for(lim, addr, port.value_or(0));
  j.key = key_text(k, lim);
  const uint64_t hash = dp.key_hash(k);
  if (lim.algo == RL_ALGO_CONNECTIONS) {
    // No slot: the key's count of open connections (connections.h).
    auto open = dp.open_connections(hash);
    j.tracked = open.ok() && *open > 0;
    if (j.tracked) j.state = connections_state(lim, *open);
  } else {
    auto slot = dp.read_key(k);
    j.tracked = slot.has_value();
    if (slot) j.state = key_state(lim, *slot, now);
  }
  for (const auto& o : known)
    if (o.rule_id == lim.id && o.key_hash == hash) {
      j.drops = o.drops;
      j.last_drop =
          std::chrono::duration_cast<std::chrono::seconds>(o.last_seen.time_since_epoch()).count();
    }
  return j;
}

}  // namespace

control::Json key_show(const Datapath& dp, const std::vector<RuleView>& rules,
                       OffenderLog& offenders, const control::Json& args,
                       const OverrideBook* overrides) {
  auto req = args.get<control::KeyShowRequest>();
  auto parsed = parse_key_arg(req.key);
  if (!parsed) return control::fail(parsed.error().message);
  const auto& [addr, port] = *parsed;
  const std::string& only = req.rule;
  // What the offender table remembers (drops, last seen), by rule id and key hash.
  auto known = offenders.top(SIZE_MAX, only, std::chrono::hours(24 * 365));
  const uint64_t now = dp.now_ns();
  control::KeyShowResponse out;
  out.address = addr.str();
  bool rule_found = only.empty();
  for (const auto& v : rules) {
    if (!only.empty() && v.name != only) continue;
    rule_found = true;
    const rl_rule& r = v.compiled;
    const uint32_t count = std::min<uint32_t>(1u + r.more_limits, RL_MAX_LIMITS);
    // A limit keyed by rule has one key for every source: a rule of such limits only has
    // nothing of this address's own.
    bool keyed_by_address = r.key_kind != RL_KEY_RULE;
    for (uint32_t l = 1; l < count && l <= v.more.size(); l++)
      keyed_by_address |= v.more[l - 1].key_kind != RL_KEY_RULE;
    if (!keyed_by_address) continue;
    control::KeyShowRule rule{v.name, {}};
    for (uint32_t l = 0; l < count; l++) {
      KeyLimit e = l > v.more.size()
                       ? noted(
                             "this limit's parameters are not known: rld adopted the data "
                             "path and has not loaded a policy since (rlctl policy reload)")
                       : limit_entry(dp, l == 0 ? r : v.more[l - 1], addr, port, known, now,
                                     overrides, rules);
      e.limit = limit_name(v, l);
      e.index = l;
      rule.limits.push_back(std::move(e));
    }
    out.rules.push_back(std::move(rule));
  }
  if (!rule_found) return control::fail("no rule named '" + only + "' in force");
  return control::ok(out);
}

}  // namespace rl::daemon
