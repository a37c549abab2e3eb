// SPDX-License-Identifier: GPL-2.0-only
// A throwaway network for integration tests: one client namespace joined by a veth pair to each
// of N server namespaces. Nothing lives in the host's namespace and no namespace has a route
// out, so generated traffic (spoofed sources included) stays between the lab's own ends.
//
// Addressing, pair i (servers 0..N-1), outside the ranges spoofed sources come from:
//   client  192.0.2.(4i+1)/30  3fff:0:ff:i::1/64      server  192.0.2.(4i+2)/30  3fff:0:ff:i::2/64
// (192.0.2.0/24 and 3fff::/20 are documentation ranges, routed nowhere). Tests draw spoofed
// sources from 198.18.0.0/15 and 2001:db8::/32, all of it free for them.
//
//   rl::testing::Lab lab;                             // or Lab(LabOptions{.servers = 3})
//   auto out = lab.run(lab.client_ns(), {"ip", "addr"});
//   auto sink = lab.spawn_in(lab.server_ns(), {RL_UDP_SINK_PATH, "--port", "9000"});
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "process.h"

namespace rl::testing {

struct LabOptions {
  size_t servers = 1;  // 1..kMaxServers server namespaces, one veth pair each
  // Further veth pairs between the client and server 0, each with addresses of its own: a path
  // for legitimate traffic that a flood on pair(0) cannot crowd out of a shared receive ring.
  size_t side_links = 0;
  bool reap_stale = true;  // first delete what crashed earlier runs left behind
};

// One end of a veth pair, as seen from inside its namespace.
struct Endpoint {
  std::string ns;      // network namespace (for ip netns exec / ip -n)
  std::string ifname;  // <= 15 characters
  int ifindex = 0;     // inside ns
  std::string mac;     // aa:bb:cc:dd:ee:ff
  std::string ipv4;    // without the prefix length
  std::string ipv6;
};

// The veth pair from the client namespace to one server namespace.
struct Pair {
  Endpoint client, server;
};

struct IfStats {
  uint64_t rx_packets = 0, rx_bytes = 0, rx_dropped = 0, tx_packets = 0;
};

class Lab {
 public:
  static constexpr size_t kMaxServers = 64;
  static constexpr int kPrefix4 = 30, kPrefix6 = 64;
  static constexpr auto kCommandTimeout = std::chrono::seconds(10);

  // Builds the lab; on failure everything built so far is removed again.
  static Result<Lab> create(LabOptions options = {});
  // The same for tests, which want a one-liner: throws std::runtime_error on failure.
  explicit Lab(LabOptions options = {});

  Lab(Lab&& other) noexcept;
  Lab& operator=(Lab&&) = delete;
  Lab(const Lab&) = delete;
  ~Lab();  // kills what still runs in the namespaces, then deletes them (and so the veths)

  const std::string& client_ns() const { return client_ns_; }
  const std::string& server_ns(size_t i = 0) const { return pairs_.at(i).server.ns; }
  const Pair& pair(size_t i = 0) const { return pairs_.at(i); }
  const Pair& side_link(size_t k = 0) const { return side_.at(k); }
  size_t servers() const { return pairs_.size(); }
  std::vector<std::string> namespaces() const;     // client first
  const std::string& tag() const { return tag_; }  // "<pid>-<random>", in every name

  // argv inside ns via `ip netns exec`, output captured, killed past the timeout.
  Output run(const std::string& ns, const std::vector<std::string>& argv,
             std::chrono::milliseconds timeout = kCommandTimeout) const;
  Output exec_in(const std::string& ns, const std::string& shell_command,
                 std::chrono::milliseconds timeout = kCommandTimeout) const;
  // A long-running child inside ns (a sink, a daemon); the Process kills it when dropped.
  Result<Process> spawn_in(const std::string& ns, const std::vector<std::string>& argv) const;

  // Deletes pair i's veth and creates it again with the same names, MAC and IP addresses but new
  // interface indexes: what programs attached to it see when an interface is recreated.
  Status recreate_pair(size_t i = 0);

  Result<IfStats> stats(const std::string& ns, const std::string& ifname) const;
  Result<IfStats> server_stats(size_t i = 0) const {
    return stats(server_ns(i), pair(i).server.ifname);
  }

  // Namespaces named rl-<pid>-... whose <pid> no longer exists: leftovers of a run that died
  // before its destructors ran. Returns how many were deleted.
  static Result<size_t> reap_stale();
  static std::vector<std::string> list_namespaces();  // every name in /run/netns

 private:
  struct Empty {};
  explicit Lab(Empty) {}
  static Lab unwrap(Result<Lab> r);
  Status build(const LabOptions& options);
  Status add_namespace(const std::string& name);
  Result<Pair> add_pair(size_t i, size_t server);
  Status configure_pair(const Pair& p);
  Result<Endpoint> read_endpoint(Endpoint e) const;
  Status settle() const;
  void destroy();

  std::string tag_, suffix_, client_ns_;  // suffix_: the random part, in interface names
  std::vector<std::string> created_;      // namespaces to delete, in creation order
  std::vector<Pair> pairs_;
  std::vector<Pair> side_;  // LabOptions::side_links, to server 0
};

}  // namespace rl::testing
