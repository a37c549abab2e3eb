// SPDX-License-Identifier: GPL-2.0-only
// Offenders reported by the data path (rl_events): logged, rate-limited, one structured line
// each, and kept in a bounded table for `rlctl top`. Under a spoofed flood every report may be
// a new key: each costs O(1), and poll() consumes a bounded batch so that the event loop gets
// back to signals and the control socket.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/mutex.h"
#include "common/result.h"
#include "daemon/offenders/offender_table.h"
#include "daemon/support/bounded_ring.h"
#include "rl_abi.h"

namespace rl::daemon {

struct Offender {
  std::string rule;
  std::string key;  // common/key_text.h: "198.18.0.7", "198.18.0.0/24", "198.18.0.7|53", "*"
  uint64_t key_hash = 0;
  uint32_t rule_id = 0;
  uint64_t drops = 0;  // from rl_offenders, at the time of the query
  bool blocked = false;
  std::chrono::system_clock::time_point last_seen;
};

// What the log needs to know about a rule id ("" name if the id is not in force).
struct RuleRef {
  std::string name;
  uint8_t v4_prefix = 32;
  uint8_t v6_prefix = 128;
};

class OffenderLog {
 public:
  // Reports consumed per poll() at most: about a millisecond of work.
  static constexpr uint32_t kBatch = 1024;

  // rule maps a rule id to its name and prefix lengths; drops reads a key's drop count.
  OffenderLog(int events_fd, std::function<RuleRef(uint32_t)> rule,
              std::function<uint64_t(uint64_t)> drops, uint32_t max_log_lines_per_second = 50,
              uint32_t capacity = OffenderTable::kDefaultCapacity);
  ~OffenderLog();
  OffenderLog(const OffenderLog&) = delete;
  OffenderLog& operator=(const OffenderLog&) = delete;

  // Called (on the polling thread) when the kernel asks for an early cluster sync.
  void on_cluster_sync(std::function<void()> fn) { on_cluster_sync_ = std::move(fn); }

  int epoll_fd() const;
  // Consumes at most kBatch reports; true when it stopped there (more may be waiting).
  bool poll();

  // One report, as poll() hands it over from the ring; unit tests hand theirs in here.
  void handle(const rl_event& ev);

  // Offenders seen in the last `window`, most drops first.
  std::vector<Offender> top(size_t n, const std::string& rule, std::chrono::seconds window);

 private:
  // Rule ids are never reused (the compiler only counts up), so a name once found stays right.
  RuleRef rule_ref(uint32_t id) REQUIRES(mu_);

  std::function<RuleRef(uint32_t)> rule_;
  std::function<uint64_t(uint64_t)> drops_;
  std::function<void()> on_cluster_sync_;
  uint32_t max_lines_;
  std::chrono::steady_clock::time_point second_{};
  uint32_t lines_this_second_ = 0;
  uint64_t suppressed_ = 0;
  mutable Mutex mu_;
  std::unordered_map<uint32_t, RuleRef> rules_ GUARDED_BY(mu_);
  OffenderTable table_ GUARDED_BY(mu_);
  BoundedRing ring_;  // last: its handler uses the members above
};

}  // namespace rl::daemon
