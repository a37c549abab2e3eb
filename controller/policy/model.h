// SPDX-License-Identifier: GPL-2.0-only
// The policy model: what operators write, after parsing and validation. Pure data; the
// compiler (controller/compiler) turns it into map entries.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/prefix.h"
#include "rl_abi.h"

namespace rl::policy {

// Where a policy element was written, for error messages (file:line:column, 1-based).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  std::string str() const {
    return file + ":" + std::to_string(line) + ":" + std::to_string(column);
  }
};

// kConnections is not a rate: a limit on the connections a key holds open (Limit::connections).
enum class Algorithm { kTokenBucket, kFixedWindow, kSlidingWindow, kSlidingLog, kConnections };
enum class Unit { kPackets, kBytes };
enum class KeyKind {
  kSourceAddress,
  kSourcePrefix,
  kSourceAddressPort,
  kRule,
  kDestinationAddress,  // the packet's destination (per VIP)
  kDestinationPrefix,   // its destination prefix (v4_prefix / v6_prefix), like hashlimit's dstmask
  kSourceDestination,   // the pair: IPv4 whole addresses, IPv6 the /64 of each
};
enum class Action { kDrop, kMonitor };
enum class Verdict { kPass, kDrop };
enum class RedisFailure { kOpen, kClosed };

// `amount` units per `period_ns`: "100/s" is {100, 1e9, kPackets}, "10Mbit/s" is
// {1250000, 1e9, kBytes}.
struct Rate {
  uint64_t amount = 0;
  uint64_t period_ns = 0;
  Unit unit = Unit::kPackets;
  bool operator==(const Rate&) const = default;
};

struct Limit {
  Algorithm algorithm = Algorithm::kTokenBucket;
  Rate rate;
  // token_bucket only: how many units may pass at once; in the rate's unit. 0 in a parsed
  // policy means "not given" and is replaced by the default (rate.amount) before compiling.
  uint64_t burst = 0;
  // kConnections only: the most connections a key may hold open (rate is unused).
  uint32_t connections = 0;
  bool operator==(const Limit&) const = default;
};

// A range of ports, or of another field's values (TTL, ICMP code, length).
struct PortRange {
  uint16_t first = 0;
  uint16_t last = 0;
  bool operator==(const PortRange&) const = default;
};

// TCP flags under a mask: a packet matches when (flags & mask) == value. Bits are the flags
// byte of the TCP header (FIN 0x01, SYN 0x02, RST 0x04, PSH 0x08, ACK 0x10, URG 0x20, ECE 0x40,
// CWR 0x80). mask 0: any flags.
struct TcpFlags {
  uint8_t mask = 0;
  uint8_t value = 0;
  bool operator==(const TcpFlags&) const = default;
};

struct Match {
  std::vector<std::string> sources;     // source set names (union); empty: any source
  std::vector<Prefix> destinations;     // destination prefixes (union); empty: any destination
  std::optional<uint8_t> protocol;      // IP protocol number; empty: any
  std::vector<PortRange> ports;         // destination ports (TCP/UDP); empty: any
  std::vector<PortRange> source_ports;  // source ports (TCP/UDP); empty: any
  bool tcp_syn = false;                 // only new TCP connections (SYN without ACK)
  TcpFlags tcp_flags;                   // `tcp_flags: {set: [...], unset: [...]}`
  std::vector<uint8_t> icmp_types;      // ICMP/ICMPv6 types; empty: any
  std::vector<PortRange> icmp_codes;    // codes (0-255) under those types; empty: any
  std::vector<PortRange> ttl;           // IPv4 TTL / IPv6 hop limit ranges (0-255); empty: any
  // L3 length ranges: IPv4 total length, IPv6 payload length + 40 (0-65535); empty: any
  std::vector<PortRange> length;
  // `fragment:`: the places in a fragmented datagram the rule matches, 1 << enum rl_frag each
  // (none, first, later); 0: any packet.
  uint8_t fragments = 0;
};

// A fleet-wide limit for the same key, enforced through Redis.
struct ClusterLimit {
  Rate rate;
  RedisFailure on_redis_failure = RedisFailure::kOpen;
};

// Limits one rule may stack, its own included: as many as the data path holds.
constexpr size_t kMaxLimits = RL_MAX_LIMITS;

// One more limit a rule's packets must also pass (`limits:` beyond the first): its own key and
// algorithm; the rule's action, block and report apply to it.
struct StackedLimit {
  std::string name;  // for counters and rlctl: unique within the rule
  Limit limit;
  KeyKind key = KeyKind::kSourceAddress;
  uint8_t v4_prefix = 24;  // KeyKind::kSourcePrefix and kDestinationPrefix
  uint8_t v6_prefix = 64;  // those two, and an IPv6 client's prefix for kSource*
  bool operator==(const StackedLimit&) const = default;
};

// A budget for keys that the data path does not hold yet: a new key needs one of its tokens to
// get a bucket of its own; without one it is judged by the rule's limit on one bucket shared by
// all such keys of the rule (key kRule) or of their source prefix (key kSourcePrefix).
struct NewSources {
  Rate rate;           // new keys per period; always a packet rate
  uint64_t burst = 0;  // 0 in a parsed policy: rate.amount
  KeyKind key = KeyKind::kRule;
  uint8_t v4_prefix = 24;  // KeyKind::kSourcePrefix
  uint8_t v6_prefix = 48;
  bool operator==(const NewSources&) const = default;
};

struct Rule {
  std::string name;
  int priority = 0;  // lower is evaluated first; ties keep file order
  Match match;
  Limit limit;
  KeyKind key = KeyKind::kSourceAddress;
  uint8_t v4_prefix = 24;  // KeyKind::kSourcePrefix and kDestinationPrefix
  uint8_t v6_prefix = 64;  // those two, and an IPv6 client's prefix for kSource*
  Action action = Action::kDrop;
  uint64_t block_ns = 0;  // drop everything from a key for this long once it exceeds
  bool report = true;     // log offenders
  std::optional<ClusterLimit> cluster;
  std::optional<NewSources> new_sources;
  // `limits:` in the file: the first item is `limit`, `key` and the prefixes above (named
  // limit_name), the rest are here. A packet passes the rule only if every limit admits it.
  std::string limit_name;
  std::vector<StackedLimit> more;
  // Answer the rule's SYNs in XDP with SYN cookies; only packets of connections conntrack knows
  // and ACKs with a valid cookie get through (to the stack's SYNPROXY, which rld installs).
  bool syn_cookies = false;
  SourceLocation where;
};

// How many of a rule's limits, its own and those stacked on it, count connections.
inline size_t connection_limits(const Rule& r) {
  size_t n = r.limit.algorithm == Algorithm::kConnections;
  for (const auto& l : r.more) n += l.limit.algorithm == Algorithm::kConnections;
  return n;
}

// Where a set's prefixes are read from when they are not written in the policy: one file, or
// every file of a directory (policy/set_files.h). Each file read is stamped, so that a reload
// can tell whether any of them changed without reading them again.
struct SetFileStamp {
  std::string path;
  uint64_t dev = 0, ino = 0, size = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
  auto operator<=>(const SetFileStamp&) const = default;
};

struct SetSource {
  std::string path;  // as resolved against the policy file's directory; empty: inline
  bool directory = false;
  std::vector<SetFileStamp> files;  // as read, the directory itself first for a directory
};

struct SourceSet {
  std::string name;
  std::vector<Prefix> prefixes;  // from a file: sorted, each once
  SourceLocation where;
  SetSource source;
};

struct Policy {
  std::vector<SourceSet> sets;
  std::vector<Prefix> allow;  // never limited
  std::vector<Prefix> deny;   // always dropped
  std::vector<Rule> rules;
  Verdict malformed = Verdict::kDrop;  // safe: an odd packet must not get around the rules
};

}  // namespace rl::policy
