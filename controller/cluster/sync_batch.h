// A sync request as script calls: per rule (strictly, per rule, limit and window, which a rule
// has one of), one call per kMaxCallKeys of its keys, each key once, and the replies back as
// OverLimit for the request's indices. The rule's keys travel as arguments; the script's KEYS
// are the rule's two window hashes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/store.h"
#include "common/result.h"

struct redisReply;

namespace rl::cluster {

class SyncBatch {
 public:
  // Keys per script call: a rule with more is split into several calls.
  static constexpr size_t kMaxCallKeys = 5000;

  struct Call {
    std::string rule;
    uint64_t limit = 0;
    uint64_t window_ms = 0;
    std::vector<size_t> indices;  // the request index of each key slot
    // A key the request lists again: (request index, key slot). Its delta is folded into the
    // slot's and it shares the slot's report: the script must see each key once.
    std::vector<std::pair<size_t, size_t>> repeats;
  };

  // `deltas` must outlive the batch.
  SyncBatch(const std::string& prefix, const std::vector<KeyDelta>& deltas);

  const std::vector<Call>& calls() const { return calls_; }
  // The script's KEYS and ARGV for call i: views into this batch and the deltas, valid while
  // both live.
  std::vector<std::string_view> keys(size_t i) const;
  std::vector<std::string_view> args(size_t i) const;
  // Deltas that cannot be sent (an empty window, a rule name that breaks the key scheme).
  const std::vector<size_t>& invalid() const { return invalid_; }
  const std::string& invalid_reason() const { return invalid_reason_; }

  // Adds call i's keys over their limit to `out` and raises out.server_time_ms to the call's.
  Status read_reply(size_t i, const redisReply& r, SyncReply& out) const;

 private:
  std::vector<Call> calls_;
  std::vector<std::vector<std::string>> hashes_;     // per call: the even and odd window hashes
  std::vector<std::vector<std::string_view>> keys_;  // per call, per slot: the key text
  std::vector<std::vector<std::string>> args_;       // per call: limit, window, n, a delta per slot
  std::vector<size_t> invalid_;
  std::string invalid_reason_;
};

// <prefix>:{<rule>}:<window ms>:<index % 2>, the hash of a rule's counts in the windows of that
// parity. The braces are a Redis Cluster hash tag: both hashes of a rule hash to one slot, so
// its script call can be routed to one shard.
std::string window_hash(const std::string& prefix, const std::string& rule, uint64_t window_ms,
                        uint64_t parity);

// The field that holds a window hash's window index; no key text may take it.
inline constexpr std::string_view kWindowField = "#w";

}  // namespace rl::cluster
