// SPDX-License-Identifier: GPL-2.0-only
// A reference model of the data path, written from the documented semantics rather than from
// the BPF code: frame parsing, rule matching on the policy model (not on compiled maps), and
// the limiters with their exact integer formulas. The differential test runs random
// policies and frames through both and requires identical decisions.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <tuple>
#include <vector>

#include <linux/bpf.h>
#include "policy/model.h"

#include "rl_abi.h"

namespace rl::reference {

struct Packet {
  // kMalformed: no usable IP header, so no source. A packet whose source is known but whose
  // transport could not be parsed is kIp with no_l4 set.
  enum Kind { kIp, kNonIp, kMalformed } kind = kMalformed;
  Address src;
  Address dst;
  uint8_t proto = 0;
  bool proto_known = true;
  bool no_l4 = false;     // malformed transport: judged on addresses, then the malformed verdict
  bool fragment = false;  // a later fragment (offset above 0)
  bool first_fragment = false;  // offset 0 with more fragments to come
  bool has_l4 = false;          // a destination port or ICMP type is known
  unsigned port_kind = 0;
  uint16_t l4_index = 0;
  uint16_t sport = 0;  // TCP and UDP with has_l4
  bool tcp_new = false;
  uint8_t tcp_flags = 0;  // TCP with has_l4: the flags byte
  uint8_t ttl = 0;        // IPv4 TTL, IPv6 hop limit (kIp)
  uint8_t icmp_code = 0;  // ICMP and ICMPv6 with has_l4 (l4_index is the type)
  uint16_t l3_len = 0;    // IPv4 total length, IPv6 payload length + 40 (at most 65535)
};

Packet parse(const std::vector<uint8_t>& frame);

struct Decision {
  uint32_t verdict = 0;  // XDP action
  uint32_t reason = 0;   // enum rl_reason
  int rule_pos = -1;
  bool unadmitted = false;  // a new key without a new-source token, judged by the shared bucket
  uint32_t limit = 0;       // the refusing limit, or the last one when all admitted
};

class Model {
 public:
  explicit Model(const policy::Policy& p);
  Decision decide(const std::vector<uint8_t>& frame, uint64_t now_ns);

  // Limiter of one rule alone, for formula tests: admitted or not.
  const std::vector<const policy::Rule*>& order() const { return order_; }

  // The connection whose SYN is `syn_frame` opened (+1) or closed (-1), counted against the
  // connection limit of the rule the SYN matches, as rld counts it from conntrack.
  void connection(const std::vector<uint8_t>& syn_frame, int delta);

 private:
  struct State {
    uint64_t tat = 0;
    uint64_t window = UINT64_MAX, count = 0, prev = 0;  // window algorithms
    std::deque<uint64_t> log;  // sliding_log: the admissions' ticks, oldest first
    int64_t open = 0;          // connections: the key's open connections
    uint64_t block_until = 0;
  };
  // Rule position * kMaxLimits + limit, kind (RL_KEY_* of the rule's own key, or
  // RL_KEY_NEW_BUDGET/UNADMITTED), family, address (masked), port.
  using Key = std::tuple<int, uint8_t, uint8_t, std::array<uint8_t, 16>, uint16_t>;
  Key key_of(int pos, uint8_t kind, policy::KeyKind key, uint8_t v4, uint8_t v6,
             const Packet& p) const;

  bool matches(const policy::Rule& r, const Packet& p) const;
  bool take(const policy::Rule& r, State& s, uint64_t now, uint64_t bytes) const;
  // What take() took from s for an admitted packet, given back (a later limit refused it).
  void refund(const policy::Rule& r, State& s, uint64_t now, uint64_t bytes) const;
  // RL_REASON_ADMITTED, _LIMITED (blocking the key if the rule blocks) or _BLOCKED.
  uint32_t judge(const policy::Rule& r, State& s, uint64_t now, uint64_t bytes) const;

  policy::Policy policy_;
  std::vector<const policy::Rule*> order_;
  std::map<Key, State> state_;
};

}  // namespace rl::reference
