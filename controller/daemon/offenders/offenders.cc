// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/offenders/offenders.h"

#include <algorithm>
#include <cstring>

#include "common/key_text.h"
#include "common/log.h"

namespace rl::daemon {

namespace {

int64_t wall_ns(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

}  // namespace

OffenderLog::OffenderLog(int events_fd, std::function<RuleRef(uint32_t)> rule,
                         std::function<uint64_t(uint64_t)> drops, uint32_t max_lines,
                         uint32_t capacity)
    : rule_(std::move(rule)),
      drops_(std::move(drops)),
      max_lines_(max_lines),
      table_(capacity),
      ring_(events_fd, kBatch, [this](const void* data, size_t size) {
        if (size < sizeof(rl_event)) return;
        rl_event ev{};
        std::memcpy(&ev, data, sizeof(ev));
        handle(ev);
      }) {}

OffenderLog::~OffenderLog() = default;

int OffenderLog::epoll_fd() const { return ring_.epoll_fd(); }

bool OffenderLog::poll() { return ring_.poll(); }

RuleRef OffenderLog::rule_ref(uint32_t id) {
  auto it = rules_.find(id);
  if (it != rules_.end()) return it->second;
  RuleRef ref = rule_(id);
  // Ids of rules not in force are asked again: an adopted rule set may gain its names later.
  if (!ref.name.empty()) {
    if (rules_.size() >= 4096) rules_.clear();  // ids of many reloads ago; rebuilt on demand
    rules_.emplace(id, ref);
  }
  return ref;
}

void OffenderLog::handle(const rl_event& ev) {
  if (ev.kind == RL_EVENT_CLUSTER_SYNC) {
    if (on_cluster_sync_) on_cluster_sync_();
    return;
  }
  OffenderEntry e;
  e.key_hash = ev.key_hash;
  e.last_seen_ns = wall_ns(std::chrono::system_clock::now());
  e.rule_id = ev.rule_id;
  std::memcpy(e.addr, ev.addr, sizeof(e.addr));
  e.dport = ev.dport;
  e.family = ev.family;
  e.key_kind = ev.key_kind;
  e.blocked = ev.blocked;
  RuleRef ref;
  {
    MutexLock lock(mu_);
    table_.record(e);
    ref = rule_ref(ev.rule_id);
  }
  auto t = std::chrono::steady_clock::now();
  if (t - second_ >= std::chrono::seconds(1)) {
    if (suppressed_)
      log::warn("offender log lines suppressed", {{"count", std::to_string(suppressed_)}});
    second_ = t;
    lines_this_second_ = 0;
    suppressed_ = 0;
  }
  if (++lines_this_second_ > max_lines_) {
    suppressed_++;
    return;
  }
  log::info(
      "offender",
      {{"rule", ref.name},
       {"key", key_text(ev.key_kind, ev.family, ev.addr, ev.dport, ref.v4_prefix, ref.v6_prefix)},
       {"action", ev.action == RL_ACTION_MONITOR ? "monitor" : "drop"},
       {"blocked", ev.blocked ? "true" : "false"}});
}

std::vector<Offender> OffenderLog::top(size_t n, const std::string& rule,
                                       std::chrono::seconds window) {
  struct Hit {
    OffenderEntry e;
    uint64_t drops;
  };
  std::vector<Hit> hits;
  std::vector<Offender> out;
  MutexLock lock(mu_);
  int64_t since = wall_ns(std::chrono::system_clock::now() - window);
  // Most recent first, so the walk ends at the first entry older than the window.
  table_.for_each_recent([&](const OffenderEntry& e) {
    mu_.assert_held();  // for_each_recent calls back under the lock taken above
    if (e.last_seen_ns < since) return false;
    if (rule.empty() || rule_ref(e.rule_id).name == rule) hits.push_back({e, drops_(e.key_hash)});
    return true;
  });
  size_t k = std::min(n, hits.size());
  std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(k), hits.end(),
                    [](const Hit& a, const Hit& b) { return a.drops > b.drops; });
  for (size_t i = 0; i < k; i++) {
    const OffenderEntry& e = hits[i].e;
    RuleRef ref = rule_ref(e.rule_id);
    Offender o;
    o.rule = ref.name;
    o.key = key_text(e.key_kind, e.family, e.addr, e.dport, ref.v4_prefix, ref.v6_prefix);
    o.key_hash = e.key_hash;
    o.rule_id = e.rule_id;
    o.drops = hits[i].drops;
    o.blocked = e.blocked;
    o.last_seen = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::nanoseconds(e.last_seen_ns)));
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace rl::daemon
