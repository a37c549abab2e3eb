// SPDX-License-Identifier: GPL-2.0-only
// Drives the lab's tools from a test: rlsend in the client namespace, udp_sink and tcp_peer in
// a server namespace, and their JSON summaries as values. The binaries' paths come from the
// build (RL_RLSEND_PATH, RL_UDP_SINK_PATH, RL_TCP_PEER_PATH, defined for every target that links
// rl_lab).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "lab.h"
#include "process.h"

namespace rl::testing {

struct SendSpec {
  std::string src;  // address or CIDR, inside 198.18.0.0/15 or 2001:db8::/32
  std::string dst;  // empty: the server end's address of src's family
  uint32_t sources = 1;
  std::string proto = "udp";
  uint16_t sport = 40000, dport = 9;
  bool syn = false;
  size_t size = 0;  // 0: smallest frame
  std::optional<uint16_t> vlan;
  std::string fragment;  // "", "first" or "later" (rlsend --fragment)
  uint64_t count = 1;
  uint64_t rate = 0;  // 0: as fast as possible
  double max_seconds = 10;
};

struct SendSummary {
  uint64_t sent = 0, errors = 0;
  double seconds = 0;
};

// rlsend's arguments for sending from the client end of pair to its server end (no `ip netns
// exec` prefix: Lab::run adds it).
std::vector<std::string> rlsend_argv(const Pair& pair, const SendSpec& spec);
// Runs rlsend in the client namespace towards server i. An error unless it exits 0.
Result<SendSummary> send(const Lab& lab, size_t server, const SendSpec& spec);
// The same over any pair from the client namespace (a side link, say).
Result<SendSummary> send(const Lab& lab, const Pair& pair, const SendSpec& spec);
Result<SendSummary> parse_send_summary(const std::string& json);

struct SinkSpec {
  uint16_t port = 9;
  double seconds = 10;   // upper bound on its life
  uint64_t expect = 0;   // stop once this many arrived
  uint32_t idle_ms = 0;  // stop after this long without a datagram, once one arrived
};

struct SinkSummary {
  uint64_t received = 0, bytes = 0;
  double seconds = 0;
  std::map<std::string, uint64_t> sources;  // source address -> datagrams
  uint64_t source_ports = 0;                // distinct source ports
};

// Starts udp_sink in server i's namespace and returns once it is bound.
Result<Process> start_sink(const Lab& lab, size_t server, const SinkSpec& spec);
// Waits for the sink to end by itself (expect, idle or seconds), at most timeout.
Result<SinkSummary> finish_sink(Process& sink, std::chrono::milliseconds timeout);
Result<SinkSummary> parse_sink_summary(const std::string& json);

// Real TCP: a server in server i's namespace that echoes one message per connection, and a
// client in the client namespace that opens connections one after another.
struct TcpServeSpec {
  uint16_t port = 8080;
  uint64_t expect = 0;  // stop after this many connections (0: only `seconds`)
  double seconds = 20;
};

struct TcpServeSummary {
  uint64_t accepted = 0;
  std::map<std::string, uint64_t> peers;  // address -> connections
};

struct TcpConnectSpec {
  std::string to;  // the server's address
  uint16_t port = 8080;
  uint64_t count = 1;
  double seconds = 20;
};

struct TcpConnectSummary {
  uint64_t completed = 0, failed = 0;
  double seconds = 0;
};

// Starts the server and returns once it listens.
Result<Process> start_tcp_server(const Lab& lab, size_t server, const TcpServeSpec& spec);
Result<TcpServeSummary> finish_tcp_server(Process& p, std::chrono::milliseconds timeout);
// Runs the client to the end.
Result<TcpConnectSummary> tcp_connect(const Lab& lab, const TcpConnectSpec& spec);

}  // namespace rl::testing
