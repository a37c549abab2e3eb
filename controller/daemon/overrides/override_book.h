// SPDX-License-Identifier: GPL-2.0-only
// Runtime overrides as rld keeps them: each is an operator's (rule, limit, source prefix, rate,
// burst, expiry), compiled into the limit in force with that rate (compiler::compile_override)
// and written to the data path under the limit's id. The data path's entries are the record
// (they carry what was asked for), so they outlive a restart in the pins and a layout change in
// what the new data path carries over; the book compiles each one again whenever a policy is
// applied, since a limit the policy changed has a new id and parameters. The book mirrors the
// entries, so that listing, counting and expiring them reads no map. Every call but per_rule()
// is the event loop's.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/mutex.h"
#include "common/prefix.h"
#include "common/result.h"
#include "compiler/compiled.h"
#include "daemon/policy/policy_manager.h"
#include "datapath/datapath.h"
#include "policy/model.h"

namespace rl::daemon {

// What an operator asks for (rlctl override add).
struct OverrideRequest {
  std::string rule;
  std::string limit;  // a stacked limit's name; "" or the rule's own limit's name: its own
  Prefix prefix;
  policy::Rate rate;
  uint64_t burst = 0;   // token buckets; 0: the rate's amount
  uint64_t ttl_ns = 0;  // 0: until removed
};

class OverrideBook : public PolicyHooks {
 public:
  using Rules = std::function<std::vector<RuleView>()>;
  // Reads the entries `dp` holds (a restarted rld's pins may hold some). `rules` gives the rules
  // in force; `options` are the compiler's.
  static Result<std::unique_ptr<OverrideBook>> open(Overrides& dp, const Clock& clock, Rules rules,
                                                    compiler::CompileOptions options);

  // Compiles the request against the rule in force and writes it, replacing the entry of the
  // same limit and prefix.
  Result<OverrideEntry> add(const OverrideRequest& req);
  // The entry removed, or nullopt when the limit has none for the prefix.
  Result<std::optional<OverrideEntry>> remove(const std::string& rule, const std::string& limit,
                                              const Prefix& prefix);
  // Every entry, expired ones left out.
  std::vector<OverrideEntry> list() const;
  // The entry that judges `addr` under the limit with id `limit_id`: the longest prefix covering
  // it, as the data path finds it.
  std::optional<OverrideEntry> find(uint32_t limit_id, const Address& addr) const;
  // Entries per rule, for the metrics; any thread.
  std::map<std::string, size_t> per_rule() const;

  // Entries of a replaced data path (BpfDatapath::carried_overrides), written at the next
  // settle, once a policy is in force to compile them against.
  void carry(std::vector<OverrideEntry> entries);
  // Removes the entries whose time is up (the data path already ignores them); how many.
  size_t sweep();

  // PolicyHooks: after a policy is applied, each entry is compiled again against it; one whose
  // rule or limit is gone, or no longer takes an override, is removed and logged.
  Status prepare(const policy::Policy&) override { return {}; }
  void settle(const policy::Policy& in_force) override;

 private:
  OverrideBook(Overrides& dp, const Clock& clock, Rules rules, compiler::CompileOptions options)
      : dp_(dp), clock_(clock), rules_(std::move(rules)), options_(options) {}
  // Writes e and mirrors it.
  Status put(const OverrideEntry& e);
  Status erase(uint32_t limit_id, const Prefix& prefix);

  using Key = std::pair<uint32_t, Prefix>;  // limit id, prefix: the kernel's key
  Overrides& dp_;
  const Clock& clock_;
  Rules rules_;
  compiler::CompileOptions options_;
  std::map<Key, OverrideEntry> entries_;  // the loop thread's
  std::vector<OverrideEntry> carried_;
  mutable Mutex mu_;
  std::map<std::string, size_t> per_rule_ GUARDED_BY(mu_);
};

// The override of limit `limit_index` of rule `v` for `prefix` at `rate` and `burst`, compiled
// against the rule in force: an error says why it cannot be (no such limit, a prefix finer than
// the limit's key, a limit that takes none).
Result<OverrideEntry> compile_override_entry(const RuleView& v, uint32_t limit_index,
                                             const Prefix& prefix, const policy::Rate& rate,
                                             uint64_t burst, uint64_t expires_ns,
                                             const compiler::CompileOptions& options);

}  // namespace rl::daemon
