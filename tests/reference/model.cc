// SPDX-License-Identifier: GPL-2.0-only
#include "model.h"

#include <algorithm>

#include "rl_limiter_state.h"

namespace rl::reference {

using policy::Algorithm;

Model::Model(const policy::Policy& p) : policy_(p) {
  for (const auto& r : policy_.rules) order_.push_back(&r);
  std::stable_sort(order_.begin(), order_.end(),
                   [](const auto* a, const auto* b) { return a->priority < b->priority; });
}

bool Model::matches(const policy::Rule& r, const Packet& p) const {
  const auto& m = r.match;
  auto in = [](const std::vector<policy::PortRange>& ranges, unsigned v) {
    return std::any_of(ranges.begin(), ranges.end(),
                       [&](const policy::PortRange& r) { return v >= r.first && v <= r.last; });
  };
  if (!m.sources.empty()) {
    bool in = false;
    for (const auto& name : m.sources)
      for (const auto& set : policy_.sets)
        if (set.name == name)
          for (const auto& pre : set.prefixes) in = in || pre.contains(p.src);
    if (!in) return false;
  }
  if (!m.destinations.empty() && std::none_of(m.destinations.begin(), m.destinations.end(),
                                              [&](const Prefix& d) { return d.contains(p.dst); }))
    return false;
  if (m.protocol && (!p.proto_known || *m.protocol != p.proto)) return false;
  bool ports = p.has_l4 && (p.port_kind == RL_PORT_KIND_TCP || p.port_kind == RL_PORT_KIND_UDP);
  if (!m.ports.empty()) {
    if (!ports) return false;
    bool hit = false;
    for (const auto& pr : m.ports) hit = hit || (p.l4_index >= pr.first && p.l4_index <= pr.last);
    if (!hit) return false;
  }
  if (!m.source_ports.empty()) {
    if (!ports) return false;
    if (std::none_of(m.source_ports.begin(), m.source_ports.end(), [&](const policy::PortRange& r) {
          return p.sport >= r.first && p.sport <= r.last;
        }))
      return false;
  }
  if (!m.icmp_types.empty()) {
    if (!p.has_l4 || ports) return false;
    if (std::find(m.icmp_types.begin(), m.icmp_types.end(), p.l4_index) == m.icmp_types.end())
      return false;
    if (!m.icmp_codes.empty() && !in(m.icmp_codes, p.icmp_code)) return false;
  }
  if (!m.ttl.empty() && !in(m.ttl, p.ttl)) return false;
  if (!m.length.empty() && !in(m.length, p.l3_len)) return false;
  if (m.tcp_syn && !p.tcp_new) return false;
  if (m.fragments) {
    unsigned frag = p.fragment ? RL_FRAG_LATER : p.first_fragment ? RL_FRAG_FIRST : RL_FRAG_NONE;
    if (!(m.fragments >> frag & 1)) return false;
  }
  if (m.tcp_flags.mask) {
    if (!p.has_l4 || p.port_kind != RL_PORT_KIND_TCP) return false;
    if ((p.tcp_flags & m.tcp_flags.mask) != m.tcp_flags.value) return false;
  }
  return true;
}

bool Model::take(const policy::Rule& r, State& s, uint64_t now, uint64_t bytes) const {
  // A connection limit takes nothing: the count moves with the connections, not the SYNs.
  if (r.limit.algorithm == Algorithm::kConnections) return s.open < r.limit.connections;
  const auto& rate = r.limit.rate;
  bool in_bytes = rate.unit == policy::Unit::kBytes;
  if (r.limit.algorithm == Algorithm::kTokenBucket) {
    unsigned __int128 t = (static_cast<unsigned __int128>(rate.period_ns) << 16) / rate.amount;
    uint64_t burst = r.limit.burst ? r.limit.burst : rate.amount;
    uint64_t burst_ns = static_cast<uint64_t>((burst * t) >> 16);
    uint64_t cost = static_cast<uint64_t>(((in_bytes ? bytes : 1) * t) >> 16);
    uint64_t next = std::max(s.tat, now) + cost;
    if (next - now > burst_ns) return false;
    s.tat = next;
    return true;
  }
  if (r.limit.algorithm == Algorithm::kSlidingLog) {
    // An exact log of admission times, each rounded up to the tick, now rounded down: the
    // finest tick whose window fits the state word (abi/rl_limiter_state.h).
    unsigned k = 0;
    auto ticks_of = [&](unsigned shift) {
      return (rate.period_ns + (uint64_t{1} << shift) - 1) >> shift;
    };
    while (ticks_of(k) > rl_sl_max_ticks(rate.amount)) k++;
    uint64_t ticks = ticks_of(k);
    uint64_t floor_tick = now >> k, ceil_tick = (now + (uint64_t{1} << k) - 1) >> k;
    // An entry rounded up past now is within the window too.
    if (s.log.size() == rate.amount &&
        static_cast<int64_t>(floor_tick - s.log.front()) < static_cast<int64_t>(ticks))
      return false;
    s.log.push_back(s.log.empty() ? ceil_tick : std::max(ceil_tick, s.log.back()));
    if (s.log.size() > rate.amount) s.log.pop_front();
    return true;
  }
  bool sliding = r.limit.algorithm == Algorithm::kSlidingWindow;
  uint64_t max = sliding ? RL_SW_COUNT_MAX : RL_FW_COUNT_MAX;
  unsigned shift = 0;
  if (in_bytes)
    while ((rate.amount >> shift) > max) shift++;
  uint64_t limit = rate.amount >> shift;
  uint64_t cost = in_bytes ? (bytes + (1ULL << shift) - 1) >> shift : 1;
  uint64_t w = rate.period_ns, win = now / w;
  if (s.window != win) {
    s.prev = (s.window != UINT64_MAX && s.window + 1 == win) ? s.count : 0;
    s.count = 0;
    s.window = win;
  }
  uint64_t estimate = s.count;
  if (sliding) estimate += (s.prev * (((w - (now - win * w)) << 16) / w)) >> 16;
  if (estimate + cost > limit) return false;
  s.count += cost;
  return true;
}

void Model::refund(const policy::Rule& r, State& s, uint64_t now, uint64_t bytes) const {
  if (r.limit.algorithm == Algorithm::kConnections) return;
  const auto& rate = r.limit.rate;
  bool in_bytes = rate.unit == policy::Unit::kBytes;
  if (r.limit.algorithm == Algorithm::kTokenBucket) {
    unsigned __int128 t = (static_cast<unsigned __int128>(rate.period_ns) << 16) / rate.amount;
    uint64_t cost = static_cast<uint64_t>(((in_bytes ? bytes : 1) * t) >> 16);
    s.tat = s.tat > cost ? s.tat - cost : 0;
    return;
  }
  if (r.limit.algorithm == Algorithm::kSlidingLog) return;  // the log keeps its entry (strict)
  uint64_t max = r.limit.algorithm == Algorithm::kSlidingWindow ? RL_SW_COUNT_MAX : RL_FW_COUNT_MAX;
  unsigned shift = 0;
  if (in_bytes)
    while ((rate.amount >> shift) > max) shift++;
  uint64_t cost = in_bytes ? (bytes + (1ULL << shift) - 1) >> shift : 1;
  if (s.window == now / rate.period_ns && s.count >= cost) s.count -= cost;
}

uint32_t Model::judge(const policy::Rule& r, State& s, uint64_t now, uint64_t bytes) const {
  if (s.block_until > now) return RL_REASON_BLOCKED;
  if (take(r, s, now, bytes)) return RL_REASON_ADMITTED;
  // A block replaces the key's state: once it ends, the key starts fresh.
  if (r.block_ns) s = State{.block_until = now + r.block_ns};
  return RL_REASON_LIMITED;
}

Model::Key Model::key_of(int pos, uint8_t kind, policy::KeyKind key, uint8_t v4, uint8_t v6,
                         const Packet& p) const {
  Key k{pos, kind, 0, {}, 0};
  if (key == policy::KeyKind::kRule) return k;
  std::get<2>(k) = p.src.family;
  if (key == policy::KeyKind::kSourceDestination) {
    // Both addresses in one key: IPv4 whole, IPv6 the first 64 bits of each.
    size_t half = p.src.family == 4 ? 4 : 8;
    std::copy_n(p.src.bytes.begin(), half, std::get<3>(k).begin());
    std::copy_n(p.dst.bytes.begin(), half, std::get<3>(k).begin() + half);
    return k;
  }
  if (key == policy::KeyKind::kDestinationAddress || key == policy::KeyKind::kDestinationPrefix) {
    uint8_t dlen = static_cast<uint8_t>(p.dst.width());
    if (key == policy::KeyKind::kDestinationPrefix) dlen = p.dst.family == 4 ? v4 : v6;
    std::get<3>(k) = Prefix::of(p.dst, dlen).addr.bytes;
    return k;
  }
  uint8_t len = static_cast<uint8_t>(p.src.width());
  if (key == policy::KeyKind::kSourcePrefix) len = p.src.family == 4 ? v4 : v6;
  // A per-source key is an IPv6 client's prefix, its v6 length.
  if (p.src.family == 6 &&
      (key == policy::KeyKind::kSourceAddress || key == policy::KeyKind::kSourceAddressPort))
    len = v6;
  std::get<3>(k) = Prefix::of(p.src, len).addr.bytes;
  if (key == policy::KeyKind::kSourceAddressPort && p.has_l4 &&
      (p.port_kind == RL_PORT_KIND_TCP || p.port_kind == RL_PORT_KIND_UDP))
    std::get<4>(k) = p.l4_index;
  return k;
}

Decision Model::decide(const std::vector<uint8_t>& frame, uint64_t now) {
  Packet p = parse(frame);
  if (p.kind == Packet::kNonIp) return {XDP_PASS, RL_REASON_NON_IP, -1};
  const Decision malformed{policy_.malformed == policy::Verdict::kPass ? XDP_PASS : XDP_DROP,
                           RL_REASON_MALFORMED, -1};
  // Without a source there is nothing to judge; with one, the lists and rules come first.
  if (p.kind == Packet::kMalformed) return malformed;

  // The most specific allow/deny entry decides.
  int best = -1;
  uint32_t list = 0;
  for (const auto& a : policy_.allow)
    if (a.contains(p.src) && a.len > best) best = a.len, list = RL_REASON_ALLOWLIST;
  for (const auto& d : policy_.deny)
    if (d.contains(p.src) && d.len > best) best = d.len, list = RL_REASON_DENYLIST;
  if (list == RL_REASON_ALLOWLIST) return {XDP_PASS, list, -1};
  if (list == RL_REASON_DENYLIST) return {XDP_DROP, list, -1};

  for (size_t pos = 0; pos < order_.size(); pos++) {
    const policy::Rule& r = *order_[pos];
    if (!matches(r, p)) continue;
    const int base = static_cast<int>(pos * policy::kMaxLimits);
    Key key = key_of(base, 0, r.key, r.v4_prefix, r.v6_prefix, p);
    // A key the table does not hold needs a token from the rule's new-source budget (a token
    // bucket per rule or per prefix); without one the rule's limit on the shared key decides.
    bool unadmitted = false;
    if (r.new_sources && !state_.count(key)) {
      const auto& ns = *r.new_sources;
      policy::Rule budget;
      budget.limit = {Algorithm::kTokenBucket, ns.rate, ns.burst};
      Key bk = key_of(base, RL_KEY_NEW_BUDGET, ns.key, ns.v4_prefix, ns.v6_prefix, p);
      if (!take(budget, state_[bk], now, 0)) {
        unadmitted = true;
        key = key_of(base, RL_KEY_UNADMITTED, ns.key, ns.v4_prefix, ns.v6_prefix, p);
      }
    }
    State& s = state_[key];
    uint32_t reason = judge(r, s, now, frame.size());
    // Stacked limits: every one must admit; a refusal gives back what the others took.
    uint32_t limit = 0;
    if (reason == RL_REASON_ADMITTED) {
      std::vector<std::pair<policy::Rule, State*>> taken = {{r, &s}};
      for (size_t i = 0; i < r.more.size(); i++) {
        policy::Rule li = r;
        li.limit = r.more[i].limit;
        li.key = r.more[i].key;
        li.v4_prefix = r.more[i].v4_prefix;
        li.v6_prefix = r.more[i].v6_prefix;
        State& si = state_[key_of(base + static_cast<int>(i) + 1, 0, li.key, li.v4_prefix,
                                  li.v6_prefix, p)];
        limit = static_cast<uint32_t>(i + 1);
        reason = judge(li, si, now, frame.size());
        if (reason != RL_REASON_ADMITTED) {
          for (auto& [lr, ls] : taken) refund(lr, *ls, now, frame.size());
          break;
        }
        taken.emplace_back(li, &si);
      }
    }
    bool pass = reason == RL_REASON_ADMITTED || r.action == policy::Action::kMonitor;
    return {pass ? XDP_PASS : XDP_DROP, reason, static_cast<int>(pos), unadmitted, limit};
  }
  if (p.no_l4) return malformed;
  return {XDP_PASS, RL_REASON_UNMATCHED, -1};
}

void Model::connection(const std::vector<uint8_t>& syn_frame, int delta) {
  Packet p = parse(syn_frame);
  for (size_t pos = 0; pos < order_.size(); pos++) {
    const policy::Rule& r = *order_[pos];
    if (!matches(r, p)) continue;
    const int base = static_cast<int>(pos * policy::kMaxLimits);
    if (r.limit.algorithm == Algorithm::kConnections)
      state_[key_of(base, 0, r.key, r.v4_prefix, r.v6_prefix, p)].open += delta;
    for (size_t i = 0; i < r.more.size(); i++)
      if (r.more[i].limit.algorithm == Algorithm::kConnections)
        state_[key_of(base + static_cast<int>(i) + 1, 0, r.more[i].key, r.more[i].v4_prefix,
                      r.more[i].v6_prefix, p)]
            .open += delta;
    return;
  }
}

}  // namespace rl::reference
