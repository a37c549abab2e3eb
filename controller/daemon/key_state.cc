// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/key_state.h"

#include <charconv>
#include <cstring>

#include "rl_hash.h"
#include "rl_key.h"
#include "rl_limiter_state.h"

namespace rl::daemon {

// The one address stands for the side the rule keys by (source, or destination for
// destination keys), as the data path builds it (abi/rl_key.h).
rl_key key_for(const rl_rule& r, const Address& addr, uint16_t dport) {
  rl_key k{};
  __u32 a[4];
  std::memcpy(a, addr.bytes.data(), sizeof(a));
  rl_key_fill(&k, &r, addr.family, a, a, dport, /*has_port=*/1);
  return k;
}

control::KeyState key_state(const rl_rule& r, const rl_slot& slot, uint64_t now_ns) {
  control::KeyState k;
  k.unit = r.cost_unit == RL_COST_BYTES ? "bytes" : "packets";
  const uint64_t word = slot.state;
  const bool blocked = rl_state_blocked(word, now_ns);
  k.blocked = blocked;
  k.blocked_for_seconds = blocked ? ((word & ~RL_STATE_BLOCKED) - now_ns) / 1e9 : 0.0;
  const uint64_t st = (word & RL_STATE_BLOCKED) ? 0 : word;  // an expired block reads as fresh
  switch (r.algo) {
    case RL_ALGO_TOKEN_BUCKET: {
      // GCRA (limiter.h): a packet of cost c passes iff max(tat, now) + c*T - now <= burst_ns.
      double per_unit_ns = static_cast<double>(r.interval_fp) / RL_FP_ONE;
      uint64_t ahead = st > now_ns ? st - now_ns : 0;
      double burst = per_unit_ns > 0 ? r.burst_ns / per_unit_ns : 0;
      double tokens = per_unit_ns > 0 ? (static_cast<double>(r.burst_ns) - ahead) / per_unit_ns : 0;
      k.algorithm = "token_bucket";
      k.tokens = blocked ? 0.0 : std::max(tokens, 0.0);
      k.burst = burst;
      k.tat_ahead_seconds = ahead / 1e9;
      k.fresh = !blocked && ahead == 0;
      break;
    }
    case RL_ALGO_FIXED_WINDOW: {
      uint64_t win = r.window_ns ? now_ns / r.window_ns : 0;
      uint64_t count = rl_fw_count(st, win);
      k.algorithm = "fixed_window";
      k.count = count;
      k.limit = r.limit;
      k.fresh = !blocked && count == 0;
      break;
    }
    case RL_ALGO_SLIDING_WINDOW: {
      uint64_t win = r.window_ns ? now_ns / r.window_ns : 0;
      uint64_t elapsed = now_ns - win * r.window_ns;
      uint64_t weight = r.window_ns ? rl_sw_weight(elapsed, r.window_ns) : 0;
      __u64 prev = 0, cur = 0;
      rl_sw_counts(st, win, &prev, &cur);
      uint64_t estimate = rl_sw_estimate(prev, cur, weight);
      k.algorithm = "sliding_window";
      k.count = estimate;
      k.limit = r.limit;
      k.fresh = !blocked && estimate == 0;
      break;
    }
    case RL_ALGO_SLIDING_LOG: {
      const unsigned shift = r.cost_shift & 63;
      const uint64_t ticks = rl_sl_ticks(r.window_ns, shift);
      k.algorithm = "sliding_log";
      k.count = rl_sl_in_window(st, r.limit, ticks, now_ns >> shift);
      k.limit = r.limit;
      k.fresh = !blocked && k.count == 0;
      break;
    }
    default:
      k.algorithm = "unknown";
      k.fresh = !blocked && st == 0;
  }
  // The shifted cost of byte windows: counts are in units of 2^cost_shift bytes.
  if (r.cost_unit == RL_COST_BYTES && r.algo != RL_ALGO_TOKEN_BUCKET && r.cost_shift)
    k.unit = std::to_string(1u << r.cost_shift) + " bytes";
  return k;
}

control::KeyState connections_state(const rl_rule& r, uint32_t open) {
  control::KeyState k;
  k.unit = "connections";
  k.algorithm = "connections";
  k.count = open;
  k.limit = r.limit;
  k.fresh = open == 0;
  return k;
}

control::Json describe_key_state(const rl_rule& r, const rl_slot& slot, uint64_t now_ns) {
  return key_state(r, slot, now_ns);
}

Result<std::pair<Address, std::optional<uint16_t>>> parse_key_arg(const std::string& text) {
  std::string addr = text;
  std::optional<uint16_t> port;
  if (auto bar = text.find('|'); bar != std::string::npos) {
    addr = text.substr(0, bar);
    std::string p = text.substr(bar + 1);
    unsigned v = 0;
    auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
    if (ec != std::errc() || end != p.data() + p.size() || p.empty() || v > 65535)
      return Error{EINVAL, "'" + p + "' is not a port (0-65535)"};
    port = static_cast<uint16_t>(v);
  }
  if (addr.find('/') != std::string::npos) {
    auto pre = Prefix::parse(addr);
    if (!pre) return pre.error();
    return std::pair{pre->addr, port};
  }
  auto a = Address::parse(addr);
  if (!a) return a.error();
  return std::pair{*a, port};
}

}  // namespace rl::daemon
