// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/traffic/traffic.h"

#include <sys/random.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace rl::daemon {
namespace {

uint64_t random_seed() {
  uint64_t s = 0;
  if (getrandom(&s, sizeof(s), 0) != sizeof(s))
    s = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return s;
}

struct KeyHash {
  size_t operator()(const rl_key& k) const {
    uint64_t w[3];
    std::memcpy(w, &k, sizeof(w));
    return static_cast<size_t>((w[0] * 0x9e3779b97f4a7c15ULL) ^ (w[1] * 0xc2b2ae3d27d4eb4fULL) ^
                               (w[2] * 0x165667b19e3779f9ULL));
  }
};
struct KeyEq {
  bool operator()(const rl_key& a, const rl_key& b) const {
    return std::memcmp(&a, &b, sizeof(a)) == 0;
  }
};

// What a table says about one key: its samples, how far off they may be, and its bytes and
// drops scaled from the samples it counted itself to all it is credited with.
struct Part {
  uint64_t samples = 0, error = 0;
  double bytes = 0, dropped = 0;
};

Part part(const HeavyHitters& t, const rl_key& k) {
  Part p;
  if (const HeavyHitters::Entry* e = t.find(k)) {
    p.samples = e->count;
    p.error = e->error;
    double own = static_cast<double>(e->count - e->error);  // >= 1: the sample that entered it
    p.bytes = static_cast<double>(e->bytes) * static_cast<double>(e->count) / own;
    p.dropped = static_cast<double>(e->dropped) * static_cast<double>(e->count) / own;
  } else {
    p.error = t.min_count();  // 0 to min_count samples, not counted
  }
  return p;
}

}  // namespace

TrafficWindows::TrafficWindows(uint32_t capacity, Clock::duration epoch, Clock::time_point start,
                               uint64_t seed)
    : epoch_(epoch),
      cur_start_(start),
      prev_start_(start),
      cur_(std::make_unique<HeavyHitters>(capacity, seed)),
      prev_(std::make_unique<HeavyHitters>(capacity, seed ^ 0x5bd1e9955bd1e995ULL)) {}

void TrafficWindows::advance(Clock::time_point now) {
  if (now - cur_start_ < epoch_) return;
  auto epochs = (now - cur_start_) / epoch_;
  if (epochs == 1) {
    std::swap(cur_, prev_);
    prev_start_ = cur_start_;
  } else {
    prev_->clear();
    prev_start_ = cur_start_ + (epochs - 1) * epoch_;
  }
  cur_->clear();
  cur_start_ += epochs * epoch_;
  has_prev_ = true;
}

TrafficView TrafficWindows::top(Clock::time_point now, size_t n,
                                const std::function<bool(uint32_t rule_id)>& keep) const {
  TrafficView v;
  const HeavyHitters* tables[2] = {cur_.get(), has_prev_ ? prev_.get() : nullptr};
  std::unordered_map<rl_key, TrafficEstimate, KeyHash, KeyEq> merged;
  for (const HeavyHitters* t : tables) {
    if (!t) continue;
    v.samples += t->total();
    v.sampled_bytes += t->total_bytes();
    v.table_error += t->min_count();
    t->for_each([&](const HeavyHitters::Entry& e) {
      if (!keep(e.key.rule_id) || merged.count(e.key)) return;
      TrafficEstimate est;
      est.key = e.key;
      for (const HeavyHitters* u : tables) {
        if (!u) continue;
        Part p = part(*u, e.key);
        est.samples += p.samples;
        est.error += p.error;
        est.sampled_bytes += p.bytes;
        est.dropped += p.dropped;
      }
      merged.emplace(e.key, est);
    });
  }
  v.keys.reserve(merged.size());
  for (auto& [k, e] : merged) v.keys.push_back(e);
  size_t k = std::min(n, v.keys.size());
  std::partial_sort(v.keys.begin(), v.keys.begin() + static_cast<std::ptrdiff_t>(k), v.keys.end(),
                    [](const TrafficEstimate& a, const TrafficEstimate& b) {
                      if (a.samples != b.samples) return a.samples > b.samples;
                      return a.sampled_bytes > b.sampled_bytes;
                    });
  v.keys.resize(k);
  v.seconds = std::chrono::duration<double>(now - (has_prev_ ? prev_start_ : cur_start_)).count();
  return v;
}

TrafficLog::TrafficLog(int samples_fd, uint32_t shift)
    : shift_(shift),
      windows_(kCapacity, kEpoch, TrafficWindows::Clock::now(), random_seed()),
      ring_(samples_fd, kBatch, [this](const void* data, size_t size) {
        if (size < sizeof(rl_traffic_sample)) return;
        rl_traffic_sample s{};
        std::memcpy(&s, data, sizeof(s));
        add(s);
      }) {}

void TrafficLog::add(const rl_traffic_sample& s) {
  windows_.add(s.key, s.bytes, s.verdict == RL_VERDICT_DROP);
}

bool TrafficLog::poll() {
  // Once per batch, not per sample: a batch takes about a millisecond.
  windows_.advance(TrafficWindows::Clock::now());
  return ring_.poll();
}

TrafficView TrafficLog::top(size_t n, const std::function<bool(uint32_t rule_id)>& keep) {
  auto now = TrafficWindows::Clock::now();
  windows_.advance(now);
  return windows_.top(now, n, keep);
}

}  // namespace rl::daemon
