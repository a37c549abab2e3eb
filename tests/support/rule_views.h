// SPDX-License-Identifier: GPL-2.0-only
// Rules in force, and the data path's reports about their keys, as rld's handlers receive them:
// for the tests of rld's logic over the in-memory data path (fake_datapath.h).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "daemon/key_state.h"
#include "daemon/policy/policy_manager.h"
#include "fake_datapath.h"

namespace rl::testing {

// A rule in force with the compiled fields the handlers read: name, id, key kind, counter slot.
inline daemon::RuleView rule_view(const std::string& name, uint32_t id, uint8_t key_kind,
                                  uint32_t slot = 0) {
  daemon::RuleView v;
  v.name = name;
  v.rule.name = name;
  v.compiled.id = id;
  v.compiled.key_kind = key_kind;
  v.compiled.stats_slot = slot;
  return v;
}

// An offender report for the key that `limit` builds for `addr`, as rl_events carries one.
inline rl_event over_limit_report(const FakeDatapath& dp, const rl_rule& limit,
                                  const std::string& addr, bool blocked = false) {
  rl_key k = daemon::key_for(limit, *Address::parse(addr), 0);
  rl_event ev{};
  ev.kind = RL_EVENT_OVER_LIMIT;
  ev.rule_id = k.rule_id;
  ev.key_hash = dp.key_hash(k);
  ev.family = k.family;
  ev.key_kind = k.kind;
  ev.dport = k.dport;
  ev.blocked = blocked;
  std::memcpy(ev.addr, k.addr, sizeof(ev.addr));
  return ev;
}

}  // namespace rl::testing
