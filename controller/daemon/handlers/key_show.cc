// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/handlers/key_show.h"

#include "daemon/key_state.h"
#include "daemon/key_text.h"

namespace rl::daemon {

control::Json key_show(const Datapath& dp, const std::vector<RuleView>& rules,
                       OffenderLog& offenders, const control::Json& args) {
  using control::Json;
  auto parsed = parse_key_arg(args.at("key").get<std::string>());
  if (!parsed) return control::fail(parsed.error().message);
  const auto& [addr, port] = *parsed;
  std::string only = args.value("rule", "");
  // What the offender table remembers (drops, last seen), by rule id and key hash.
  auto known = offenders.top(SIZE_MAX, only, std::chrono::hours(24 * 365));
  const uint64_t now = dp.now_ns();
  Json out = Json::array();
  bool rule_found = only.empty();
  for (const auto& v : rules) {
    if (!only.empty() && v.name != only) continue;
    rule_found = true;
    const rl_rule& r = v.compiled;
    if (r.key_kind == RL_KEY_RULE) continue;  // one key for every source: not this key's
    Json j = {{"rule", v.name}};
    if (r.key_kind == RL_KEY_SRC_DST) {
      j["note"] = "keyed by source and destination together: one address names no key";
      out.push_back(j);
      continue;
    }
    if (r.key_kind == RL_KEY_SRC_ADDR_DPORT && !port) {
      j["note"] = "keyed by source and port: give ADDRESS|PORT";
      out.push_back(j);
      continue;
    }
    rl_key k = key_for(r, addr, port.value_or(0));
    j["key"] = key_text(k, r);
    auto slot = dp.read_key(k);
    j["tracked"] = slot.has_value();
    if (slot) j["state"] = describe_key_state(r, *slot, now);
    const uint64_t hash = dp.key_hash(k);
    j["drops"] = 0;
    j["last_drop"] = nullptr;
    for (const auto& o : known)
      if (o.rule_id == r.id && o.key_hash == hash) {
        j["drops"] = o.drops;
        j["last_drop"] =
            std::chrono::duration_cast<std::chrono::seconds>(o.last_seen.time_since_epoch())
                .count();
      }
    out.push_back(j);
  }
  if (!rule_found) return control::fail("no rule named '" + only + "' in force");
  return control::ok({{"address", addr.str()}, {"rules", out}});
}

}  // namespace rl::daemon
