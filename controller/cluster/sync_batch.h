// SPDX-License-Identifier: GPL-2.0-only
// A sync request as script calls: per rule (strictly, per rule and window, which a rule
// has one of) and spread bucket, one call per kMaxCallKeys of its keys, each key once, and the
// replies back as OverLimit for the request's indices. The rule's keys travel as arguments; the
// script's one KEY is the hash of the rule's keys in that bucket (rule_hash, spread_hash).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory_resource>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
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
    uint64_t window_ms = 0;
    uint32_t bucket = 0;          // of the batch's spread (slots.h)
    std::vector<size_t> indices;  // the request index of each key slot
    // A key the request lists again: (request index, key slot). Its delta is folded into the
    // slot's and it shares the slot's report: the script must see each key once.
    std::vector<std::pair<size_t, size_t>> repeats;
  };

  // Called with each call as soon as it is complete (its keys(), args() final), before the
  // batch has seen the rest of the deltas.
  using Ready = std::function<void(const SyncBatch&, size_t call)>;

  // A batch fed delta by delta: add() each with its request index, then finish(). `spread`: how
  // many hashes a rule's keys are spread over (1: one hash per rule).
  SyncBatch(std::string prefix, Ready ready, uint32_t spread = 1);
  // All of `deltas`, finished. `deltas` must outlive the batch.
  SyncBatch(const std::string& prefix, const std::vector<KeyDelta>& deltas, const Ready& ready = {},
            uint32_t spread = 1);
  SyncBatch(const SyncBatch&) = delete;
  SyncBatch& operator=(const SyncBatch&) = delete;

  // `d` must outlive the batch and stay where it is (the batch keeps views of its texts).
  void add(const KeyDelta& d, size_t index);
  // Completes the calls still open.
  void finish();

  const std::vector<Call>& calls() const { return calls_; }
  // The script's KEYS and ARGV for call i: views into this batch and the deltas, valid while
  // both live.
  std::vector<std::string_view> keys(size_t i) const;
  std::vector<std::string_view> args(size_t i) const;
  // Deltas that cannot be sent (an empty window, a rule name that breaks the key scheme).
  const std::vector<size_t>& invalid() const { return invalid_; }
  const std::string& invalid_reason() const { return invalid_reason_; }

  // Adds call i's keys over their limit to `out` and raises out.server_time_ms to the call's.
  StoreStatus read_reply(size_t i, const redisReply& r, SyncReply& out) const;

 private:
  // A key must appear once per call: the script reads a chunk's counts before it writes them.
  // Across calls a repeat is harmless, as Redis runs calls one after another, so repeats are
  // looked for per call, in maps of at most kMaxCallKeys keys that stay in the CPU's caches.
  // (One map over a 100,000-key sync took 6 ms, most of it cache misses.)
  struct Open {
    size_t call = SIZE_MAX;  // none open: the last one filled up
    bool opened = false;     // a call was open here before
    std::pmr::unordered_map<std::string_view, size_t> slots;
    std::vector<uint64_t> sums;
    std::vector<uint64_t> limits;  // per key: each node's headroom makes them differ
  };
  void open_call(Open& o, const KeyDelta& d, uint32_t bucket, size_t expected);
  void close_call(Open& o);

  std::string prefix_;
  Ready ready_;
  uint32_t spread_ = 1;
  size_t expected_ = 0;  // deltas to come, when known (for reserving)
  // The maps' nodes come from one arena freed with the batch rather than one allocation each.
  std::pmr::monotonic_buffer_resource arena_;
  // -> the rule's first of spread_ entries in open_, one per bucket.
  std::map<std::pair<std::string_view, uint64_t>, size_t> by_rule_;
  std::vector<Open> open_;
  // Deltas come grouped by rule: skip the map lookup while the rule stays the same.
  size_t last_ = SIZE_MAX;
  std::pair<std::string_view, uint64_t> last_rule_;

  std::vector<Call> calls_;
  std::vector<std::string> hashes_;                  // per call: the rule's hash
  std::vector<std::vector<std::string_view>> keys_;  // per call, per slot: the key text
  // Per call: window, n, the deltas packed, the limits packed.
  std::vector<std::vector<std::string>> args_;
  std::vector<size_t> invalid_;
  std::string invalid_reason_;
};

// <prefix>:{<rule>}:<window ms>, the hash of a rule's counts: key text -> its counts (below). The
// braces are a Redis Cluster hash tag, so a rule's script call can be routed to one shard.
std::string rule_hash(const std::string& prefix, const std::string& rule, uint64_t window_ms);
// <prefix>:{<tag>}:<rule>:<window ms>, the hash of a rule's counts in one spread bucket on a
// Redis Cluster: the tag (spread_tags) places it, and every rule's bucket b shares its slot.
std::string spread_hash(const std::string& prefix, std::string_view tag, const std::string& rule,
                        uint64_t window_ms);

// A key's value in its rule's hash: three little-endian IEEE doubles (Lua's struct.pack
// "<ddd"): the last window index the key was written in, its count there, and its count in
// the window before.
inline constexpr size_t kCountsSize = 24;

// Fields whose name starts with this are the script's own bookkeeping: no key text may.
inline constexpr char kReservedPrefix = '#';

}  // namespace rl::cluster
