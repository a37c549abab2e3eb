// SPDX-License-Identifier: GPL-2.0-only
// Terse construction of policies in tests.
#pragma once

#include <string>
#include <vector>

#include "policy/model.h"

namespace rl::testing {

inline Prefix P(const std::string& s) { return *Prefix::parse(s); }

inline policy::Rate per_second(uint64_t n, policy::Unit u = policy::Unit::kPackets) {
  return {n, 1'000'000'000ULL, u};
}

inline policy::Rule token_bucket(const std::string& name, uint64_t rate_per_s, uint64_t burst) {
  policy::Rule r;
  r.name = name;
  r.limit.algorithm = policy::Algorithm::kTokenBucket;
  r.limit.rate = per_second(rate_per_s);
  r.limit.burst = burst;
  return r;
}

// A per-source rule "guarded" (rate/s, burst) with a new-source budget of budget_rate/s,
// budget_burst for the whole rule.
inline policy::Rule budgeted(uint64_t rate, uint64_t burst, uint64_t budget_rate,
                             uint64_t budget_burst) {
  policy::Rule r = token_bucket("guarded", rate, burst);
  policy::NewSources ns;
  ns.rate = per_second(budget_rate);
  ns.burst = budget_burst;
  r.new_sources = ns;
  return r;
}

inline policy::Rule window(const std::string& name, policy::Algorithm algo, uint64_t limit,
                           uint64_t window_ns) {
  policy::Rule r;
  r.name = name;
  r.limit.algorithm = algo;
  r.limit.rate = {limit, window_ns, policy::Unit::kPackets};
  return r;
}

// A token bucket stacked on a rule's own limit, keyed by `key`.
inline policy::StackedLimit stacked_bucket(const std::string& name, uint64_t rate_per_s,
                                           uint64_t burst, policy::KeyKind key) {
  policy::StackedLimit l;
  l.name = name;
  l.limit.algorithm = policy::Algorithm::kTokenBucket;
  l.limit.rate = per_second(rate_per_s);
  l.limit.burst = burst;
  l.key = key;
  return l;
}

// At most `n` open connections per source, on TCP port `port`: the rule's SYNs alone, as the
// policy reader makes a connection limit's rule.
inline policy::Rule connections(const std::string& name, uint32_t n, uint16_t port = 22) {
  policy::Rule r;
  r.name = name;
  r.limit.algorithm = policy::Algorithm::kConnections;
  r.limit.connections = n;
  r.match.protocol = 6;
  r.match.tcp_syn = true;
  r.match.ports = {{port, port}};
  return r;
}

inline policy::SourceSet set(const std::string& name, const std::vector<std::string>& cidrs) {
  policy::SourceSet s;
  s.name = name;
  for (const auto& c : cidrs) s.prefixes.push_back(P(c));
  return s;
}

}  // namespace rl::testing
