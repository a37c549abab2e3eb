// SPDX-License-Identifier: GPL-2.0-only
#include "policy/describe.h"

#include <bit>

#include "policy/protocols.h"
#include "policy/rate.h"

namespace rl::policy {

const char* key_name(KeyKind k) {
  switch (k) {
    case KeyKind::kSourceAddress:
      return "source";
    case KeyKind::kSourcePrefix:
      return "source_prefix";
    case KeyKind::kSourceAddressPort:
      return "source_port";
    case KeyKind::kRule:
      return "rule";
    case KeyKind::kDestinationAddress:
      return "destination";
    case KeyKind::kDestinationPrefix:
      return "destination_prefix";
    case KeyKind::kSourceDestination:
      return "source_destination";
  }
  return "source";
}

const char* algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::kTokenBucket:
      return "token_bucket";
    case Algorithm::kFixedWindow:
      return "fixed_window";
    case Algorithm::kSlidingWindow:
      return "sliding_window";
    case Algorithm::kSlidingLog:
      return "sliding_log";
    case Algorithm::kConnections:
      return "connections";
  }
  return "token_bucket";
}

const char* action_name(Action a) { return a == Action::kMonitor ? "monitor" : "drop"; }

namespace {

// " dport 80,8000-8100"; nothing for an empty list.
std::string describe_ports(const char* what, const std::vector<PortRange>& ports) {
  std::string out;
  for (size_t i = 0; i < ports.size(); i++) {
    out += (i ? "," : std::string(" ") + what + " ") + std::to_string(ports[i].first);
    if (ports[i].last != ports[i].first) out += "-" + std::to_string(ports[i].last);
  }
  return out;
}

}  // namespace

std::string describe_match(const Match& m) {
  std::string out = m.protocol ? detail::protocol_name(*m.protocol) : "any";
  out += describe_ports("sport", m.source_ports);
  out += describe_ports("dport", m.ports);
  out += describe_ports("ttl", m.ttl);
  out += describe_ports("length", m.length);
  if (m.tcp_syn) out += " syn";
  if (m.fragments) {
    // " fragment first,later": the classes the rule admits.
    std::string f;
    for (const auto& c : detail::fragment_classes())
      if (std::has_single_bit(c.mask) && (m.fragments & c.mask))
        f += (f.empty() ? "" : ",") + c.name;
    out += " fragment " + f;
  }
  if (m.tcp_flags.mask) {
    // " flags ack,!syn,!rst": set flags, then the ones that must be clear.
    const auto& names = detail::tcp_flag_names();
    std::string flags;
    for (bool on : {true, false})
      for (unsigned bit = 0; bit < 8; bit++)
        if ((m.tcp_flags.mask >> bit & 1) && (m.tcp_flags.value >> bit & 1) == on)
          flags += (flags.empty() ? "" : ",") + std::string(on ? "" : "!") + names[bit];
    out += " flags " + flags;
  }
  if (!m.icmp_types.empty()) {
    out += " type ";
    for (size_t i = 0; i < m.icmp_types.size(); i++)
      out += (i ? "," : "") + std::to_string(m.icmp_types[i]);
    out += describe_ports("code", m.icmp_codes);
  }
  if (!m.sources.empty()) {
    out += " from ";
    for (size_t i = 0; i < m.sources.size(); i++) out += (i ? "," : "") + m.sources[i];
  }
  if (!m.destinations.empty()) {
    out += " to ";
    for (size_t i = 0; i < m.destinations.size(); i++)
      out += (i ? "," : "") + m.destinations[i].str();
  }
  return out;
}

namespace {

// "token_bucket 3/s burst 5 per source", "sliding_window 50/s per source_prefix /24 /48",
// "connections 4 per source".
std::string describe_one(const Limit& l, KeyKind key, uint8_t v4_prefix, uint8_t v6_prefix) {
  std::string out = l.algorithm == Algorithm::kConnections
                        ? "connections " + std::to_string(l.connections)
                        : std::string(algorithm_name(l.algorithm)) + " " + format_rate(l.rate);
  if (l.algorithm == Algorithm::kTokenBucket && l.burst)
    out += " burst " + std::to_string(l.burst) + (l.rate.unit == Unit::kBytes ? "B" : "");
  out += std::string(" per ") + key_name(key);
  if (key == KeyKind::kSourcePrefix || key == KeyKind::kDestinationPrefix)
    out += " /" + std::to_string(v4_prefix) + " /" + std::to_string(v6_prefix);
  if ((key == KeyKind::kSourceAddress || key == KeyKind::kSourceAddressPort) && v6_prefix != 64)
    out += " (IPv6 /" + std::to_string(v6_prefix) + ")";
  return out;
}

}  // namespace

std::string describe_limit(const Rule& r) {
  std::string out = describe_one(r.limit, r.key, r.v4_prefix, r.v6_prefix);
  for (const auto& l : r.more)
    out += ", and " + l.name + ": " + describe_one(l.limit, l.key, l.v4_prefix, l.v6_prefix);
  if (r.cluster) out += ", cluster " + format_rate(r.cluster->rate);
  if (const auto& ns = r.new_sources) {
    out += ", new sources " + format_rate(ns->rate) + " burst " + std::to_string(ns->burst) +
           " per " + key_name(ns->key);
    if (ns->key == KeyKind::kSourcePrefix)
      out += " /" + std::to_string(ns->v4_prefix) + " /" + std::to_string(ns->v6_prefix);
  }
  return out;
}

std::string describe_rule(const Rule& r) {
  std::string out =
      describe_match(r.match) + "; " + describe_limit(r) + "; " + action_name(r.action);
  if (r.block_ns) out += " block " + format_duration(r.block_ns);
  if (r.syn_cookies) out += "; syn cookies";
  return out;
}

}  // namespace rl::policy
