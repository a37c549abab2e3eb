#include "daemon/offenders.h"

#include <algorithm>
#include <cstring>

#include "common/log.h"
#include "daemon/key_text.h"

namespace rl::daemon {

OffenderLog::OffenderLog(int events_fd, std::function<RuleRef(uint32_t)> rule,
                         std::function<uint64_t(uint64_t)> drops, uint32_t max_lines)
    : rule_(std::move(rule)), drops_(std::move(drops)), max_lines_(max_lines) {
  rb_ = ring_buffer__new(events_fd, &OffenderLog::on_event, this, nullptr);
}

OffenderLog::~OffenderLog() {
  if (rb_) ring_buffer__free(rb_);
}

int OffenderLog::epoll_fd() const { return rb_ ? ring_buffer__epoll_fd(rb_) : -1; }

void OffenderLog::poll() {
  if (rb_) ring_buffer__consume(rb_);
}

int OffenderLog::on_event(void* ctx, void* data, size_t size) {
  if (size < sizeof(rl_event)) return 0;
  rl_event ev;
  std::memcpy(&ev, data, sizeof(ev));
  static_cast<OffenderLog*>(ctx)->handle(ev);
  return 0;
}

void OffenderLog::handle(const rl_event& ev) {
  if (ev.kind == RL_EVENT_CLUSTER_SYNC) {
    if (on_cluster_sync_) on_cluster_sync_();
    return;
  }
  RuleRef ref = rule_(ev.rule_id);
  const std::string& rule = ref.name;
  std::string key =
      key_text(ev.key_kind, ev.family, ev.addr, ev.dport, ref.v4_prefix, ref.v6_prefix);
  auto now = std::chrono::system_clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& o = table_[{ev.rule_id, ev.key_hash}];
    o.rule = rule;
    o.key = key;
    o.key_hash = ev.key_hash;
    o.rule_id = ev.rule_id;
    o.blocked = ev.blocked;
    o.last_seen = now;
    // Forget offenders not seen for an hour, so the table stays small under floods.
    if (table_.size() > 100000)
      for (auto it = table_.begin(); it != table_.end();)
        it = now - it->second.last_seen > std::chrono::hours(1) ? table_.erase(it) : std::next(it);
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
  log::info("offender", {{"rule", rule},
                         {"key", key},
                         {"action", ev.action == RL_ACTION_MONITOR ? "monitor" : "drop"},
                         {"blocked", ev.blocked ? "true" : "false"}});
}

std::vector<Offender> OffenderLog::top(size_t n, const std::string& rule,
                                       std::chrono::seconds window) const {
  std::vector<Offender> out;
  auto now = std::chrono::system_clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [k, o] : table_)
      if ((rule.empty() || o.rule == rule) && now - o.last_seen <= window) out.push_back(o);
  }
  for (auto& o : out) o.drops = drops_(o.key_hash);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.drops > b.drops; });
  if (out.size() > n) out.resize(n);
  return out;
}

}  // namespace rl::daemon
