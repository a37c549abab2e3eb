// SPDX-License-Identifier: GPL-2.0-only
#include "cluster/sync/cluster_sync.h"

#include <cstring>

#include "common/key_text.h"
#include "common/log.h"
#include "common/prefix.h"

namespace rl::cluster {
namespace {

std::string joined(const std::string& rule, const std::string& key) { return rule + '\0' + key; }

constexpr auto kHeartbeatEvery = std::chrono::seconds(1);
constexpr auto kPeersWithin = std::chrono::milliseconds(3000);

}  // namespace

// Keys come from the kernel, which zeroes them whole: their bytes are their identity.
size_t ClusterSync::KeyHash::operator()(const rl_key& k) const noexcept {
  return std::hash<std::string_view>{}(
      std::string_view(reinterpret_cast<const char*>(&k), sizeof(k)));
}
bool ClusterSync::KeyEq::operator()(const rl_key& a, const rl_key& b) const noexcept {
  return std::memcmp(&a, &b, sizeof(a)) == 0;
}

ClusterSync::ClusterSync(Datapath& dp, std::unique_ptr<Store> store, ClusterConfig cfg,
                         RulesFn rules)
    : dp_(dp),
      store_(std::move(store)),
      cfg_(std::move(cfg)),
      rules_(std::move(rules)),
      pending_(cfg_.max_pending_keys) {}

ClusterSync::~ClusterSync() {
  stop_ = true;
  wake();
  if (thread_.joinable()) thread_.join();
}

void ClusterSync::start() {
  thread_ = std::thread([this] { loop(); });
}

void ClusterSync::wake() {
  {
    MutexLock lock(wake_mu_);
    woken_ = true;
  }
  wake_cv_.notify_one();
}

void ClusterSync::loop() {
  auto next = std::chrono::steady_clock::now();
  auto earliest = next;
  while (!stop_) {
    bool early = false;
    {
      MutexLock lock(wake_mu_);
      // An early sync comes no sooner than an eighth of the interval after the last pass: keys
      // crossing their share steps by the thousand (a flood's, promoted from the light stage)
      // then cost Redis a few calls an interval, not a call each.
      wake_cv_.wait_until(wake_mu_, earliest, [this]() REQUIRES(wake_mu_) { return stop_.load(); });
      early = wake_cv_.wait_until(wake_mu_, next,
                                  [this]() REQUIRES(wake_mu_) { return woken_ || stop_.load(); });
      woken_ = false;
    }
    if (stop_) break;
    if (early) {
      MutexLock lock(mu_);
      stats_.early_syncs++;
    }
    sync_once();
    const auto end = std::chrono::steady_clock::now();
    earliest = end + cfg_.interval / 8;
    next = end + cfg_.interval;
  }
}

void ClusterSync::count_error(const std::string& kind) {
  MutexLock lock(mu_);
  stats_.errors[kind]++;
}

void ClusterSync::store_failed(const StoreError& e, Call call) {
  // A refused user, permission or certificate is the operator's to mend whichever call met it;
  // other heartbeat failures are counted apart, as they delay peers but lose no deltas.
  const char* kind = "unavailable";
  if (e.kind == ErrorKind::kAuth || e.kind == ErrorKind::kPermission || e.kind == ErrorKind::kTls ||
      e.kind == ErrorKind::kRedirect)
    kind = to_string(e.kind);
  else if (call == Call::kHeartbeat)
    kind = "heartbeat";
  else if (e.kind == ErrorKind::kTimeout)
    kind = "timeout";
  count_error(kind);
  std::string message = e.str();
  {
    MutexLock lock(mu_);
    stats_.last_error = message;
  }
  log::write(log_of(call).failed(std::chrono::steady_clock::now(), kind, message));
}

// What one pass carries from step to step.
struct ClusterSync::Pass {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  uint64_t now = 0;                    // the data path's clock at the start
  std::map<uint32_t, SyncRule> by_id;  // the cluster rules in force
  uint64_t nodes = 1;                  // the fleet's size as this node knows it
  // One stream per pass: script calls leave for Redis as soon as they have their keys, so Redis
  // counts the first keys while the rest are still read from the kernel.
  std::unique_ptr<SyncStream> stream;
  std::map<uint32_t, Light> light;                 // by rule id
  std::vector<std::optional<rl_key>> kernel_keys;  // delta i's kernel key, when known
  size_t first_fresh = 0;                          // the deltas before it are replayed ones
};

void ClusterSync::sync_once() {
  Pass p = begin_pass();
  replay_pending(p);
  read_kernel(p);
  send(p);
  heartbeat_if_due();
  end_pass(p);
}

ClusterSync::Pass ClusterSync::begin_pass() {
  Pass p;
  p.now = dp_.now_ns();
  for (auto& v : rules_()) p.by_id.emplace(v.compiled.id, std::move(v));
  uint64_t nodes = cfg_.nodes;
  {
    MutexLock lock(mu_);
    nodes = std::max<uint64_t>(nodes, stats_.peers.size());
  }
  p.nodes = std::max<uint64_t>(nodes, 1);
  set_light(p);
  p.stream = store_->begin_sync();
  return p;
}

void ClusterSync::set_light(Pass& p) {
  for (const auto& [id, v] : p.by_id) {
    Light l = light_for(v.limit.rate.amount, p.nodes);
    rl_cluster_light want{};
    want.window_ns = std::max<uint64_t>(v.limit.rate.period_ns, 1);
    want.light = l.light;
    auto [w, fresh] = light_written_.try_emplace(v.compiled.stats_slot, rl_cluster_light{});
    if (fresh || std::memcmp(&w->second, &want, sizeof(want)) != 0) {
      if (Status s = dp_.cluster_set_light(v.compiled.stats_slot, want); s)
        w->second = want;
      else
        count_error("datapath");
    }
    // The kernel keeps the threshold it had when the write failed: the hidden part follows it.
    if (w->second.light != l.light) l.hidden = hidden_for(w->second.light, l.step, p.nodes);
    p.light[id] = l;
  }
}

// After a failed sync, what is pending goes first; keys_ remembers their kernel keys.
void ClusterSync::replay_pending(Pass& p) {
  if (!pending_.empty()) {
    for (auto& d : pending_.take()) {
      auto k = keys_.find(joined(d.rule, d.key));
      p.kernel_keys.push_back(k == keys_.end() ? std::nullopt : std::optional<rl_key>(k->second));
      p.stream->add(std::move(d));
    }
  }
  p.first_fresh = p.kernel_keys.size();
}

// What the kernel admitted since the last read, per key. 100,000 keys go through here every
// interval: no per-key strings but the two Redis needs (rule and key text), and maps reused
// from one pass to the next.
void ClusterSync::read_kernel(Pass& p) {
  if (p.by_id.empty()) return;
  const uint64_t pass = ++pass_;
  size_t read = 0;
  p.kernel_keys.reserve(p.first_fresh + totals_.size());
  const SyncRule* v = nullptr;
  const Light* light = nullptr;
  auto status = dp_.cluster_admitted_each([&](const ClusterCount& c) {
    if (!v || v->compiled.id != c.key.rule_id) {
      auto it = p.by_id.find(c.key.rule_id);
      if (it == p.by_id.end()) return;
      v = &it->second;
      light = &p.light[c.key.rule_id];
    }
    read++;
    uint64_t d = take_admitted(c, pass, light->step);
    if (!d) return;
    p.kernel_keys.emplace_back(c.key);
    p.stream->add(key_delta(c.key, *v, d, p.nodes, *light));
  });
  if (!status) {
    // What was read is sent all the same (some of it already is); the keys not read keep
    // their totals, so the next pass counts what they admitted meanwhile.
    count_error("datapath");
    log::error("cannot read cluster counts", {{"error", status.error().str()}});
  } else if (totals_.size() > read + read / 4 + 1024) {
    // Keys the kernel no longer has (evicted, or of a rule gone): forget them, now and then
    // rather than every pass.
    std::erase_if(totals_, [&](const auto& e) { return e.second.pass != pass; });
  }
}

// What the kernel admitted for c's key since the count was last sent, once that is at least
// `step`; 0 (nothing to send yet) below it.
uint64_t ClusterSync::take_admitted(const ClusterCount& c, uint64_t pass, uint64_t step) {
  Total& t = totals_.try_emplace(c.key, Total{}).first->second;
  // A key the kernel evicted and counted again starts from zero.
  if (c.admitted < t.admitted) t.sent = 0;
  t.admitted = c.admitted;
  t.pass = pass;
  uint64_t unsent = c.admitted - std::min(t.sent, c.admitted);
  if (unsent < step) return 0;
  t.sent = c.admitted;
  return unsent;
}

KeyDelta ClusterSync::key_delta(const rl_key& key, const SyncRule& v, uint64_t d, uint64_t nodes,
                                const Light& light) {
  KeyDelta kd;
  kd.rule = v.name;
  kd.key = key_text(key, v.compiled);
  kd.delta = d;
  // Headroom: until the next sync every node may admit about what this one just did, so
  // Redis judges the key against the limit less that much (at most half of it). The fleet
  // then stops near the limit instead of overshooting it by a sync interval's traffic.
  // Then what the fleet may hold unreported, light or below its step (light.h): at most
  // 3 amount / 32, unless the kernel kept an older, higher threshold (a failed write), when
  // the whole is held to three quarters of the limit.
  uint64_t amount = v.limit.rate.amount;
  uint64_t off = std::min<uint64_t>(amount / 2, d * nodes) + light.hidden;
  kd.limit = amount - std::min<uint64_t>(off, amount - amount / 4);
  kd.window_ms = std::max<uint64_t>(v.limit.rate.period_ns / 1'000'000, 1);
  return kd;
}

void ClusterSync::send(Pass& p) {
  if (p.stream->deltas().empty()) return;
  auto reply = p.stream->finish();
  const auto now = std::chrono::steady_clock::now();
  if (!reply) {
    keep_pending(p);
    store_failed(reply.error(), Call::kSync);
    fallback(p.stream->deltas(), p.first_fresh, p.kernel_keys, p.now);
    return;
  }
  // Redis refused these (an error for their rule, or an invalid delta): retrying the same
  // request would fail the same way, so they are counted and logged, not requeued.
  if (!reply->rejected.empty()) {
    count_error("rejected");
    log::write(sync_log_.failed(now, "rejected", reply->rejected_reason,
                                {{"keys", std::to_string(reply->rejected.size())}}));
  }
  write_over(p, *reply);
  record_sync(p.stream->deltas().size(), reply->round_trip);
  // Part of the sync failed (a Redis Cluster master down, a slot between masters): those
  // deltas are replayed with the next sync, as after an error
  // (after record_sync, which forgets the kernel keys of the deltas it settled).
  if (!reply->retry.empty()) {
    count_error("partial");
    keep_pending(p, &reply->retry);
    // Their keys are judged as with Redis down, by the rule's on_redis_failure.
    fallback(p.stream->deltas(), p.first_fresh, p.kernel_keys, p.now, &reply->retry);
    log::write(sync_log_.failed(now, "partial", reply->retry_reason,
                                {{"keys_kept", std::to_string(reply->retry.size())}}));
  }
  if (reply->rejected.empty() && reply->retry.empty()) log::write(sync_log_.succeeded(now));
}

void ClusterSync::keep_pending(const Pass& p, const std::vector<size_t>* only) {
  const auto& batch = p.stream->deltas();
  // Bounded like pending_ itself: past that, a replayed key Redis reports over is simply
  // not blocked until a later sync reads it from the kernel again.
  if (keys_.size() > 2 * cfg_.max_pending_keys) keys_.clear();
  auto keep = [&](size_t i) {
    if (p.kernel_keys[i]) keys_[joined(batch[i].rule, batch[i].key)] = *p.kernel_keys[i];
    pending_.add(batch[i]);
  };
  if (only) {
    for (size_t i : *only) keep(i);
    return;
  }
  for (size_t i = 0; i < batch.size(); i++) keep(i);
}

// The keys Redis reports over, into the kernel in one syscall (a key listed twice takes its
// last expiry).
void ClusterSync::write_over(const Pass& p, const SyncReply& reply) {
  const auto& batch = p.stream->deltas();
  std::vector<std::pair<rl_key, uint64_t>> over;
  std::vector<const OverLimit*> listed;  // over[i] is for *listed[i]
  over.reserve(reply.over.size());
  listed.reserve(reply.over.size());
  for (const auto& o : reply.over) {
    if (!p.kernel_keys[o.index]) continue;
    over.emplace_back(*p.kernel_keys[o.index], p.now + o.for_ms * 1'000'000ULL);
    listed.push_back(&o);
  }
  Status written = dp_.cluster_set_over(over);
  MutexLock lock(mu_);
  if (!written) stats_.errors["datapath"]++;
  for (size_t i = 0; written && i < over.size(); i++) {
    const auto& kd = batch[listed[i]->index];
    blocked_[joined(kd.rule, kd.key)] = {kd.rule, kd.key, listed[i]->for_ms};
    blocked_until_[joined(kd.rule, kd.key)] = over[i].second;
  }
}

void ClusterSync::record_sync(size_t keys, std::chrono::microseconds round_trip) {
  // Nothing is pending any more: the kernel keys of replayed deltas are no longer needed.
  keys_.clear();
  MutexLock lock(mu_);
  stats_.syncs++;
  stats_.keys_last_sync = keys;
  stats_.keys_synced_total += keys;
  double rtt = std::chrono::duration<double>(round_trip).count();
  stats_.rtt_buckets.resize(std::size(kRttBuckets));
  for (size_t b = 0; b < std::size(kRttBuckets); b++)
    if (rtt <= kRttBuckets[b]) stats_.rtt_buckets[b]++;
  stats_.rtt_sum_seconds += rtt;
  stats_.rtt_count++;
  stats_.last_ok = std::chrono::system_clock::now();
  stats_.last_error.clear();
}

void ClusterSync::heartbeat_if_due() {
  const auto now = cfg_.clock();
  if (last_heartbeat_ && now - *last_heartbeat_ < kHeartbeatEvery) return;
  last_heartbeat_ = now;
  if (auto s = store_->heartbeat(cfg_.node); !s)
    store_failed(s.error(), Call::kHeartbeat);
  else
    log::write(heartbeat_log_.succeeded(std::chrono::steady_clock::now()));
  // Reading the peer list costs Redis the fleet's size. Every max(1 s, fleet / 100 s), the
  // fleet reads about 100 entries a node a second whatever its size, where reading it at every
  // heartbeat grows with the square of the fleet.
  size_t fleet = cfg_.nodes;
  {
    MutexLock lock(mu_);
    fleet = std::max(fleet, stats_.peers.size());
  }
  const auto every = std::max<std::chrono::steady_clock::duration>(
      kHeartbeatEvery, std::chrono::milliseconds(10) * fleet);
  if (last_peers_ && now - *last_peers_ < every) return;
  last_peers_ = now;
  auto peers = store_->peers(kPeersWithin);
  if (peers) {
    MutexLock lock(mu_);
    stats_.peers = *peers;
  }
}

// Expired blocks out of the kernel and the list, and the pass's figures.
void ClusterSync::end_pass(const Pass& p) {
  auto live = dp_.cluster_prune_over(dp_.now_ns());
  MutexLock lock(mu_);
  if (live) stats_.active_blocks = *live;
  for (auto it = blocked_until_.begin(); it != blocked_until_.end();) {
    if (it->second <= dp_.now_ns()) {
      blocked_.erase(it->first);
      it = blocked_until_.erase(it);
    } else {
      ++it;
    }
  }
  // Up: connected, and the last sync went through whole (a refusal, a redirect or a master
  // down is not up, whatever the connection says).
  stats_.redis_up = store_->connected() && !sync_log_.failing();
  stats_.topology = cfg_.topology;
  stats_.server = store_->server();
  stats_.servers_changed = store_->servers_changed();
  stats_.servers = store_->servers();
  stats_.pending_keys = pending_.size();
  stats_.pending_dropped = pending_.dropped();
  stats_.passes++;
  stats_.last_pass_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - p.start).count();
}

// on_redis_failure: closed. Without Redis the fleet's count is unknown; each node then holds a
// key to limit/N per window of its own, N being the nodes seen alive last, so the fleet stays
// near its limit. (Dropping everything instead would turn a Redis outage into an outage.)
void ClusterSync::fallback(const std::deque<KeyDelta>& deltas, size_t from,
                           const std::vector<std::optional<rl_key>>& kernel_keys, uint64_t now,
                           const std::vector<size_t>* only) {
  size_t nodes = 1;
  {
    MutexLock lock(mu_);
    nodes = std::max<size_t>({stats_.peers.size(), cfg_.nodes, 1});
  }
  std::map<std::string, const SyncRule*> closed;
  auto rules = rules_();
  for (const auto& v : rules)
    if (v.limit.on_redis_failure == policy::RedisFailure::kClosed) closed[v.name] = &v;
  auto judge = [&](size_t i) {
    const auto& d = deltas[i];
    if (!closed.count(d.rule) || !kernel_keys[i]) return;
    uint64_t window_ns = d.window_ms * 1'000'000ULL;
    uint64_t w = now / window_ns;
    if (local_.size() > 1'000'000) local_.clear();  // bounded: a flood of keys restarts counting
    auto& lw = local_[joined(d.rule, d.key)];
    if (lw.window != w) lw = {w, 0};
    lw.count += d.delta;
    // The share is of the whole limit (d.limit has the Redis headroom taken off). The block
    // comes a sync interval early: the next interval will likely admit what this one did.
    const SyncRule* v = closed[d.rule];
    if ((lw.count + d.delta) * nodes <= v->limit.rate.amount) return;
    uint64_t until = (w + 1) * window_ns;
    if (dp_.cluster_set_over({{*kernel_keys[i], until}})) {
      MutexLock lock(mu_);
      blocked_[joined(d.rule, d.key)] = {d.rule, d.key, (until - now) / 1'000'000};
      blocked_until_[joined(d.rule, d.key)] = until;
    }
  };
  if (only) {
    for (size_t i : *only)
      if (i >= from) judge(i);
    return;
  }
  for (size_t i = from; i < deltas.size(); i++) judge(i);
}

ClusterStats ClusterSync::stats() const {
  MutexLock lock(mu_);
  return stats_;
}

std::vector<ClusterSync::Blocked> ClusterSync::blocked() const {
  MutexLock lock(mu_);
  std::vector<Blocked> out;
  uint64_t now = dp_.now_ns();
  for (const auto& [k, b] : blocked_) {
    auto u = blocked_until_.find(k);
    if (u == blocked_until_.end() || u->second <= now) continue;
    out.push_back({b.rule, b.key, (u->second - now) / 1'000'000});
  }
  return out;
}

}  // namespace rl::cluster
