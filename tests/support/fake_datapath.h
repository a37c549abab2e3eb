// SPDX-License-Identifier: GPL-2.0-only
// An in-memory data path for rld's logic in unit tests: every interface of datapath/datapath.h,
// with state the test can set and read. It judges no packets; the BPF tests do that on the
// kernel's verifier and maps.
#pragma once

#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "datapath/datapath.h"
#include "rl_hash.h"

namespace rl::testing {

class FakeDatapath : public Datapath {
 public:
  // RuleSets
  Status apply(const compiler::CompiledRuleSet& rs) override {
    if (fail_next) {
      fail_next = false;
      return Error{EIO, "injected failure"};
    }
    applied.push_back(rs);
    gen ^= 1;
    return {};
  }
  uint32_t active_generation() const override { return gen; }
  // The last rule set applied, as the data path would read it back.
  Result<std::vector<std::pair<std::string, rl_rule>>> active_rules() const override {
    std::vector<std::pair<std::string, rl_rule>> out;
    if (applied.empty()) return out;
    const auto& rs = applied.back();
    for (size_t i = 0; i < rs.rules.size() && i < rs.names.size(); i++)
      out.emplace_back(rs.names[i], rs.rules[i]);
    return out;
  }

  // Counters
  Result<GlobalCounters> global_counters() const override { return global; }
  Result<rl_rule_counters> rule_counters(uint32_t slot) const override {
    auto it = rules.find(slot);
    return it == rules.end() ? rl_rule_counters{} : it->second;
  }
  Result<LimitCounters> limit_counters(uint32_t slot) const override {
    auto it = limits.find(slot);
    return it == limits.end() ? LimitCounters{} : it->second;
  }

  // RuntimeLists
  Status runtime_acl_set(const Prefix& p, uint32_t flags, uint64_t expires_ns) override {
    for (auto& e : runtime)
      if (e.prefix == p) {
        e = {p, flags, expires_ns};
        return {};
      }
    runtime.push_back({p, flags, expires_ns});
    return {};
  }
  Status runtime_acl_remove(const Prefix& p) override {
    for (auto it = runtime.begin(); it != runtime.end(); ++it)
      if (it->prefix == p) {
        runtime.erase(it);
        return {};
      }
    return Error{ENOENT, "no runtime entry " + p.str()};
  }
  Result<std::vector<RuntimeEntry>> runtime_acl_list() const override { return runtime; }
  Result<std::optional<RuntimeEntry>> runtime_acl_find(const Prefix& p) const override {
    for (const auto& e : runtime)
      if (e.prefix == p) return std::optional<RuntimeEntry>(e);
    return std::optional<RuntimeEntry>();
  }

  // KeyTable: keys compared byte for byte (the data path compares set and tag).
  size_t reset_key(const rl_key& k) override {
    resets.push_back(k);
    return keys.erase(bytes(k));
  }
  std::optional<rl_slot> read_key(const rl_key& k) const override {
    auto it = keys.find(bytes(k));
    if (it == keys.end()) return std::nullopt;
    return it->second;
  }
  uint64_t key_hash(const rl_key& k) const override { return rl_key_hash(&k, seed); }
  uint64_t offender_drops(uint64_t hash) const override {
    auto it = drops.find(hash);
    return it == drops.end() ? 0 : it->second;
  }

  // ClusterMaps
  Status cluster_admitted_each(const std::function<void(const ClusterCount&)>& fn) const override {
    for (const auto& c : admitted) fn(c);
    return {};
  }
  Status cluster_set_over(const std::vector<std::pair<rl_key, uint64_t>>& until) override {
    for (const auto& [k, t] : until) over[bytes(k)] = t;
    return {};
  }
  Result<uint64_t> cluster_prune_over(uint64_t now) override {
    for (auto it = over.begin(); it != over.end();)
      it = it->second <= now ? over.erase(it) : std::next(it);
    return over.size();
  }

  // Clock
  uint64_t now_ns() const override { return now; }

  void put_key(const rl_key& k, const rl_slot& s) { keys[bytes(k)] = s; }
  static std::vector<uint8_t> bytes(const rl_key& k) {
    std::vector<uint8_t> b(sizeof k);
    std::memcpy(b.data(), &k, sizeof k);
    return b;
  }

  std::vector<compiler::CompiledRuleSet> applied;
  uint32_t gen = 0;
  bool fail_next = false;
  GlobalCounters global{};
  std::map<uint32_t, rl_rule_counters> rules;
  std::map<uint32_t, LimitCounters> limits;
  std::vector<RuntimeEntry> runtime;
  std::map<std::vector<uint8_t>, rl_slot> keys;
  std::vector<rl_key> resets;
  std::map<uint64_t, uint64_t> drops;
  std::vector<ClusterCount> admitted;
  std::map<std::vector<uint8_t>, uint64_t> over;
  uint64_t now = 1'000'000'000'000;
  uint64_t seed = 0x5eed;
};

}  // namespace rl::testing
