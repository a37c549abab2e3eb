// SPDX-License-Identifier: GPL-2.0-only
// Keeps connection limits' counts while the policy holds one: conntrack on in rld's network
// namespace (conntrack tracks nothing until some netfilter rule needs it, so rld keeps a table
// of its own, rl_conntrack, whose one rule needs it and changes no verdict), its events read on
// a thread of their own and counted (connection_counter.h) as they arrive.
#pragma once

#include <atomic>
#include <memory>
#include <thread>

#include "common/fd.h"
#include "daemon/connections/connection_counter.h"
#include "daemon/connections/conntrack_events.h"
#include "daemon/policy/policy_manager.h"

namespace rl::daemon {

inline constexpr char kConntrackTable[] = "rl_conntrack";  // family inet

// Whether any rule of the policy holds a connection limit.
bool has_connection_limits(const policy::Policy& p);

class ConnectionWatch final : public PolicyHooks {
 public:
  explicit ConnectionWatch(Connections& dp) : counter_(dp) {}
  ConnectionWatch(const ConnectionWatch&) = delete;
  ConnectionWatch& operator=(const ConnectionWatch&) = delete;
  ~ConnectionWatch() override;

  // A policy with connection limits needs conntrack and its events: an error refuses it.
  Status prepare(const policy::Policy& next) override;
  // Without connection limits in force, stops reading, clears the counts, drops the table.
  void settle(const policy::Policy& in_force) override;

  // Removes rld's conntrack table if it is there (rld --cleanup).
  static Status remove_table();
  // Puts rld's conntrack table back if something else removed it (`nft flush ruleset`, as
  // nftables.service runs on reload): without it conntrack tracks nothing and no event comes.
  // The thread then counts again from conntrack's table. rld calls it every few seconds.
  void restore();

  bool running() const { return thread_.joinable(); }
  uint64_t tracked() const { return tracked_.load(std::memory_order_relaxed); }
  uint64_t events_lost() const { return lost_.load(std::memory_order_relaxed); }
  uint64_t errors() const { return errors_.load(std::memory_order_relaxed); }

 private:
  void run();
  void stop();
  void recount();

  ConnectionCounter counter_;  // the thread's alone while it runs
  std::unique_ptr<ConntrackEvents> events_;
  UniqueFd stop_;  // an eventfd the thread polls beside the events
  UniqueFd wake_;  // another: a recount is wanted (recount_wanted_)
  std::atomic<bool> recount_wanted_{false};
  std::thread thread_;
  std::atomic<uint64_t> tracked_{0}, lost_{0}, errors_{0};
};

}  // namespace rl::daemon
