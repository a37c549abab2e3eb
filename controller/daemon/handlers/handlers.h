// SPDX-License-Identifier: GPL-2.0-only
// rlctl's requests that read or change the data path and the rules in force, each a function of
// exactly what it needs: rld's table (daemon.cc) binds them to the kernel's data path, unit tests
// (tests/unit/daemon/handlers_test.cc) to tests/support/fake_datapath.h.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "control/protocol.h"
#include "daemon/cluster_sync.h"
#include "daemon/offenders/offenders.h"
#include "daemon/overrides/override_book.h"
#include "daemon/policy/policy_manager.h"
#include "daemon/traffic/traffic.h"
#include "datapath/datapath.h"

namespace rl::daemon::handlers {

using control::Json;

// When the next runtime entry expires, so that rld lists the entries to remove expired ones only
// once one may have, not every second: listing tens of thousands of entries takes a fifth of a
// second of rld's loop (every request waits behind it). Until a sweep has listed them (at start,
// over entries an earlier rld left), the next expiry is unknown and the sweep lists.
class RuntimeExpiry {
 public:
  // An entry was set to expire at expires_ns (0: never).
  void added(uint64_t expires_ns);
  // The entries whose time is up, removed from the maps (the data path already ignores them),
  // if one may be; returns how many.
  size_t sweep(RuntimeLists& lists, const Clock& clock);

 private:
  bool known_ = false;
  uint64_t next_ns_ = 0;  // the earliest expiry of an entry in the maps, 0: none expires
};

// Why a requested lifetime of `ttl_seconds` cannot be taken, or "": a longer one than 3650 days
// (or a negative one, which JSON hands over as a huge number) would wrap the expiry around to a
// time already past. `what` names the thing that could instead never expire.
std::string ttl_problem(uint64_t ttl_seconds, const std::string& what);

// acl.add / acl.del / acl.list: runtime allow and deny entries (runtime_lists.cc). acl_add tells
// `expiry` (when given) the entry's expiry.
Json acl_add(RuntimeLists& lists, const Clock& clock, const Json& args,
             RuntimeExpiry* expiry = nullptr);
Json acl_del(RuntimeLists& lists, const Json& args);
Json acl_list(const RuntimeLists& lists, const Clock& clock);
// Runtime entries whose time is up, removed from the maps (the data path already ignores them).
// Returns how many; *next_ns (when given) gets the earliest expiry of those left, 0 for none.
// nullopt when the entries could not be listed.
std::optional<size_t> expire_runtime_entries(RuntimeLists& lists, const Clock& clock,
                                             uint64_t* next_ns = nullptr);

// override.add / override.del / override.list: runtime overrides (overrides.cc). An entry as
// the protocol shows it, its limit named by `rules` (the rules in force).
control::OverrideView override_view(const OverrideEntry& e, const std::vector<RuleView>& rules,
                                    uint64_t now);
Json override_add(OverrideBook& book, const std::vector<RuleView>& rules, const Clock& clock,
                  const Json& args);
Json override_del(OverrideBook& book, const std::vector<RuleView>& rules, const Clock& clock,
                  const Json& args);
Json override_list(const OverrideBook& book, const std::vector<RuleView>& rules,
                   const Clock& clock);

// unblock: every key of the address, under every rule keyed by source (keys.cc).
Json unblock(KeyTable& keys, const std::vector<RuleView>& rules, const Json& args);

// policy.list / policy.show: the rules in force (rules.cc).
Json policy_list(const std::vector<RuleView>& rules);
Json policy_show(const Counters& counters, const std::vector<RuleView>& rules, const Json& args);

// Per-rule counters one interval apart, for the rates `rlctl stats` prints (stats.cc).
class RuleRates {
 public:
  using Clock = std::chrono::steady_clock;
  void sample(const Counters& counters, const std::vector<RuleView>& rules, Clock::time_point at);
  // When the newest sample was taken.
  Clock::time_point last() const { return current_.at; }

  struct Sample {
    Clock::time_point at{};
    std::map<std::string, rl_rule_counters> rules;
  };
  const Sample& previous() const { return previous_; }
  const Sample& current() const { return current_; }

 private:
  Sample previous_, current_;
};

// stats: per rule, its counters, what each stacked limit refused and rates between the last
// two samples; the global counters by name (stats.cc).
Json stats(const Counters& counters, const std::vector<RuleView>& rules, const RuleRates& rates);

// A rule's counters as the control protocol has them.
control::RuleCounters rule_counters(const rl_rule_counters& c);

// A rule id's rule among `rules`: its name and the prefixes its keys are masked to (an empty
// name if no rule there has the id). Stacked limits have ids of their own (top.cc).
RuleRef rule_ref(const std::vector<RuleView>& rules, uint32_t id);
using RuleResolver = std::function<RuleRef(uint32_t rule_id)>;

// top: the offenders with the most drops, or by traffic the keys the sampled packets show
// heaviest, estimated with their error; `traffic` is null while sampling is off. Counters give
// the samples the data path shed (top.cc).
Json top(OffenderLog& offenders, TrafficLog* traffic, const RuleResolver& resolve,
         const Counters& counters, const Json& args);

// cluster.status: the sync with Redis as `sync` last saw it, null when cluster limits are off
// (cluster.cc).
Json cluster_status(const ClusterSync* sync, const std::string& node);

}  // namespace rl::daemon::handlers
