// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/overrides/override_book.h"

#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "compiler/compiler.h"
#include "policy/rate.h"

namespace rl::daemon {
namespace {

// A rule adopted from pinned maps carries its name and action only: nothing to compile against.
bool policy_known(const RuleView& v) {
  return v.rule.limit.rate.period_ns != 0 ||
         v.rule.limit.algorithm == policy::Algorithm::kConnections;
}

const RuleView* rule_named(const std::vector<RuleView>& rules, const std::string& name) {
  for (const auto& v : rules)
    if (v.name == name) return &v;
  return nullptr;
}

// Limit `name` of rule v: 0 for its own ("" or its name), i + 1 for its stacked limit i.
Result<uint32_t> limit_index(const RuleView& v, const std::string& name) {
  if (name.empty() || name == v.rule.limit_name) return 0u;
  for (size_t i = 0; i < v.rule.more.size(); i++)
    if (v.rule.more[i].name == name) return static_cast<uint32_t>(i + 1);
  std::string names = v.rule.limit_name.empty() ? "(its own, unnamed)" : v.rule.limit_name;
  for (const auto& m : v.rule.more) names += ", " + m.name;
  return Error{ENOENT,
               "rule '" + v.name + "' has no limit '" + name + "' (its limits: " + names + ")"};
}

bool expired(const OverrideEntry& e, uint64_t now) {
  return e.value.expires_ns && e.value.expires_ns <= now;
}

std::string rule_of(const OverrideEntry& e) {
  return std::string(e.value.rule, strnlen(e.value.rule, sizeof(e.value.rule)));
}

policy::Rate rate_of(const rl_override& o) {
  return {o.amount, o.period_ns, o.bytes ? policy::Unit::kBytes : policy::Unit::kPackets};
}

}  // namespace

Result<OverrideEntry> compile_override_entry(const RuleView& v, uint32_t limit_index,
                                             const Prefix& prefix, const policy::Rate& rate,
                                             uint64_t burst, uint64_t expires_ns,
                                             const compiler::CompileOptions& options) {
  if (!policy_known(v))
    return Error{EAGAIN, "rule '" + v.name +
                             "' was adopted from the pinned data path and no policy has been "
                             "loaded since: its limits are not known (rlctl policy reload)"};
  if (limit_index > v.more.size() || limit_index > v.rule.more.size())
    return Error{ENOENT, "rule '" + v.name + "' has no limit " + std::to_string(limit_index)};
  const rl_rule& in_force = limit_index ? v.more[limit_index - 1] : v.compiled;
  const uint8_t key_len = prefix.addr.family == 6 ? in_force.v6_prefix : in_force.v4_prefix;
  if (prefix.len > key_len && in_force.key_kind != RL_KEY_RULE)
    return Error{EINVAL, "limit '" + limit_name(v, limit_index) + "' of rule '" + v.name +
                             "' keeps one key per /" + std::to_string(key_len) + " of IPv" +
                             (prefix.addr.family == 6 ? "6" : "4") +
                             " sources: an override covers whole ones (" + prefix.str() +
                             " is finer)"};
  auto limit = compiler::compile_override(v.rule, limit_index, rate, burst, in_force, options);
  if (!limit) return limit.error();
  OverrideEntry e;
  e.prefix = prefix;
  e.value.limit = *limit;
  e.value.expires_ns = expires_ns;
  e.value.amount = rate.amount;
  e.value.period_ns = rate.period_ns;
  e.value.burst = burst;
  e.value.bytes = rate.unit == policy::Unit::kBytes;
  e.value.limit_index = static_cast<uint8_t>(limit_index);
  std::strncpy(e.value.rule, v.name.c_str(), sizeof(e.value.rule) - 1);
  return e;
}

Result<std::unique_ptr<OverrideBook>> OverrideBook::open(Overrides& dp, const Clock& clock,
                                                         Rules rules,
                                                         compiler::CompileOptions options) {
  std::unique_ptr<OverrideBook> b(new OverrideBook(dp, clock, std::move(rules), options));
  auto held = dp.override_list();
  if (!held) return held.error().wrap("read the runtime overrides");
  MutexLock lock(b->mu_);
  for (auto& e : *held) {
    b->entries_[{e.value.limit.id, e.prefix}] = e;
    b->per_rule_[rule_of(e)]++;
  }
  return b;
}

Status OverrideBook::put(const OverrideEntry& e) {
  if (Status s = dp_.override_set(e); !s) return s;
  auto [it, added] = entries_.insert_or_assign({e.value.limit.id, e.prefix}, e);
  if (added) {
    MutexLock lock(mu_);
    per_rule_[rule_of(e)]++;
  }
  return {};
}

Status OverrideBook::erase(uint32_t limit_id, const Prefix& prefix) {
  auto gone = dp_.override_remove(limit_id, prefix);
  if (!gone) return gone.error();
  auto it = entries_.find({limit_id, prefix});
  if (it == entries_.end()) return {};
  const std::string rule = rule_of(it->second);
  entries_.erase(it);
  MutexLock lock(mu_);
  if (--per_rule_[rule] == 0) per_rule_.erase(rule);
  return {};
}

Result<OverrideEntry> OverrideBook::add(const OverrideRequest& req) {
  const auto rules = rules_();
  const RuleView* v = rule_named(rules, req.rule);
  if (!v) return Error{ENOENT, "no rule named '" + req.rule + "' in force"};
  auto index = limit_index(*v, req.limit);
  if (!index) return index.error();
  const uint64_t expires = req.ttl_ns ? clock_.now_ns() + req.ttl_ns : 0;
  auto e = compile_override_entry(*v, *index, req.prefix, req.rate, req.burst, expires, options_);
  if (!e) return e.error();
  if (Status s = put(*e); !s) {
    if (s.error().err == ENOSPC)
      return Error{ENOSPC, s.error().message + ": remove some (rlctl override del) first"};
    return s.error();
  }
  log::info("override added", {{"rule", req.rule},
                               {"limit", limit_name(*v, *index)},
                               {"prefix", req.prefix.str()},
                               {"rate", policy::format_rate(req.rate)},
                               {"burst", std::to_string(req.burst)},
                               {"ttl_seconds", std::to_string(req.ttl_ns / 1'000'000'000ULL)}});
  return *e;
}

Result<std::optional<OverrideEntry>> OverrideBook::remove(const std::string& rule,
                                                          const std::string& limit,
                                                          const Prefix& prefix) {
  // By what was asked for, not by the id in force: an entry whose rule changed is found too.
  const auto rules = rules_();
  const RuleView* v = rule_named(rules, rule);
  for (const auto& [key, e] : entries_) {
    if (e.prefix != prefix || rule_of(e) != rule) continue;
    uint32_t index = 0;
    if (v && policy_known(*v)) {
      auto i = limit_index(*v, limit);
      if (!i) return i.error();
      index = *i;
    } else if (!limit.empty()) {
      continue;  // its limits' names are not known: only the own limit's entry can be named
    }
    if (e.value.limit_index != index) continue;
    OverrideEntry removed = e;
    if (Status s = erase(key.first, key.second); !s) return s.error();
    log::info("override removed", {{"rule", rule}, {"prefix", prefix.str()}});
    return std::optional<OverrideEntry>(removed);
  }
  return std::optional<OverrideEntry>();
}

std::vector<OverrideEntry> OverrideBook::list() const {
  const uint64_t now = clock_.now_ns();
  std::vector<OverrideEntry> out;
  for (const auto& [key, e] : entries_)
    if (!expired(e, now)) out.push_back(e);
  return out;
}

std::optional<OverrideEntry> OverrideBook::find(uint32_t limit_id, const Address& addr) const {
  const uint64_t now = clock_.now_ns();
  std::optional<OverrideEntry> best;
  for (const auto& [key, e] : entries_)
    if (key.first == limit_id && e.prefix.contains(addr) &&
        (!best || e.prefix.len > best->prefix.len))
      best = e;
  // The data path stops at the longest entry: an expired one judges nothing, nor does a shorter.
  if (best && expired(*best, now)) return std::nullopt;
  return best;
}

std::map<std::string, size_t> OverrideBook::per_rule() const {
  MutexLock lock(mu_);
  return per_rule_;
}

void OverrideBook::carry(std::vector<OverrideEntry> entries) {
  carried_.insert(carried_.end(), entries.begin(), entries.end());
}

size_t OverrideBook::sweep() {
  const uint64_t now = clock_.now_ns();
  std::vector<Key> due;
  for (const auto& [key, e] : entries_)
    if (expired(e, now)) due.push_back(key);
  size_t removed = 0;
  for (const auto& key : due) {
    const std::string rule = rule_of(entries_.at(key));
    if (erase(key.first, key.second)) {
      removed++;
      log::info("override expired", {{"rule", rule}, {"prefix", key.second.str()}});
    }
  }
  return removed;
}

void OverrideBook::settle(const policy::Policy&) {
  const auto rules = rules_();
  if (std::any_of(rules.begin(), rules.end(), [](const RuleView& v) { return !policy_known(v); }))
    return;  // the adopted rule set: nothing to compile against yet
  const uint64_t now = clock_.now_ns();
  std::vector<std::pair<OverrideEntry, bool>> all;  // entry, held by the data path
  for (const auto& [key, e] : entries_) all.emplace_back(e, true);
  for (auto& e : std::exchange(carried_, {})) all.emplace_back(e, false);
  size_t dropped = 0;
  for (const auto& item : all) {
    const OverrideEntry& e = item.first;
    const bool held = item.second;
    const uint32_t old_id = e.value.limit.id;
    auto drop = [&](const std::string& why) {
      if (held && !erase(old_id, e.prefix)) return;
      dropped++;
      log::warn("override removed: " + why, {{"rule", rule_of(e)}, {"prefix", e.prefix.str()}});
    };
    if (expired(e, now)) {
      if (held) (void)erase(old_id, e.prefix);
      continue;
    }
    const RuleView* v = rule_named(rules, rule_of(e));
    if (!v) {
      drop("its rule is no longer in the policy");
      continue;
    }
    auto next = compile_override_entry(*v, e.value.limit_index, e.prefix, rate_of(e.value),
                                       e.value.burst, e.value.expires_ns, options_);
    if (!next) {
      drop(next.error().message);
      continue;
    }
    if (held && std::memcmp(&next->value, &e.value, sizeof(e.value)) == 0) continue;
    if (Status s = put(*next); !s) {
      log::error("override could not be written",
                 {{"rule", rule_of(e)}, {"prefix", e.prefix.str()}, {"error", s.error().str()}});
      continue;
    }
    if (held && next->value.limit.id != old_id) (void)erase(old_id, e.prefix);
  }
  if (dropped)
    log::warn("overrides removed with the policy's change", {{"count", std::to_string(dropped)}});
}

}  // namespace rl::daemon
