// SPDX-License-Identifier: GPL-2.0-only
// "At most 3 connections open per source" with real TCP clients through the veth: a client in
// the client namespace opens 3 connections to a server in the server namespace and holds them;
// the next ones are refused in XDP until one of the 3 closes. The count comes from conntrack's
// events, which rld reads once it turned conntrack on with a table of its own.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "rld_fixture.h"

namespace rl::testing {
namespace {

constexpr int kPort = 9022;

// The server: accepts and holds every connection until its client closes it; bounded to 30 s.
constexpr char kServer[] = R"(
import select, socket, sys, time
s = socket.socket(socket.AF_INET6)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(('::', int(sys.argv[1])))
s.listen(64)
print('listening', file=sys.stderr, flush=True)
held = []
end = time.time() + 30
while time.time() < end:
    r, _, _ = select.select([s] + held, [], [], 0.2)
    for c in r:
        if c is s:
            held.append(s.accept()[0])
        elif not c.recv(100):
            held.remove(c)
            c.close()
)";

// The client: opens connections one after another and holds them; after the first 3, two more
// are tried (each connect gives up after 1.5 s), then one of the 3 is closed and one more tried.
// Prints each attempt's outcome, 1 opened, 0 refused. Bounded: at most 6 attempts of 1.5 s.
constexpr char kClient[] = R"(
import socket, sys, time
def attempt():
    c = socket.socket(socket.AF_INET6 if ':' in sys.argv[1] else socket.AF_INET)
    c.settimeout(1.5)
    try:
        c.connect((sys.argv[1], int(sys.argv[2])))
        return c
    except OSError:
        c.close()
        return None
held, out = [], []
for i in range(5):
    c = attempt()
    out.append(1 if c else 0)
    if c:
        held.append(c)
    time.sleep(0.3)
if held:
    held.pop(0).close()
time.sleep(1.0)
c = attempt()
out.append(1 if c else 0)
print(''.join(map(str, out)), flush=True)
for c in held + ([c] if c else []):
    c.close()
)";

class ConnectionsTest : public RldTest {
 protected:
  // The server of kServer in the server namespace, listening on kPort.
  void start_server() {
    auto p = lab_->spawn_in(lab_->server_ns(), {"python3", "-c", kServer, std::to_string(kPort)});
    ASSERT_TRUE(p.ok()) << p.error().str();
    server_ = std::make_unique<Process>(std::move(*p));
    ASSERT_TRUE(server_->wait_for("listening", 10s)) << server_->err();
  }
  std::unique_ptr<Process> server_;

  void TearDown() override {
    server_.reset();  // before the lab's namespaces go
    RldTest::TearDown();
  }

  // One rule: at most `n` connections open per source to kPort.
  void write_connections_policy(uint32_t n) {
    write_policy("conns.yaml",
                 "rules:\n  - name: conns\n    match: {ports: [" + std::to_string(kPort) +
                     "]}\n    limit: {connections: " + std::to_string(n) + "}\n    key: source\n");
  }
};

TEST_F(ConnectionsTest, AConnectionLimitHoldsASourceToItsOpenConnections) {
  write_connections_policy(3);
  start_rld();
  EXPECT_TRUE(lab_->run(lab_->server_ns(), {"nft", "list", "table", "inet", "rl_conntrack"}).ok())
      << "rld turns conntrack on for connection limits";

  ASSERT_NO_FATAL_FAILURE(start_server());

  // IPv4, then IPv6 (the client's /64 is its key).
  for (const auto& [to, from] : {std::pair{lab_->pair().server.ipv4, lab_->pair().client.ipv4},
                                 std::pair{lab_->pair().server.ipv6, lab_->pair().client.ipv6}}) {
    auto client =
        lab_->run(lab_->client_ns(), {"python3", "-c", kClient, to, std::to_string(kPort)}, 30s);
    ASSERT_TRUE(client.ok()) << client.describe();
    EXPECT_EQ(client.out, "111001\n")
        << to << ": 3 held, the 4th and 5th refused, one more once one of the 3 closed";

    // The client closed everything: the count goes back to 0 with conntrack's events.
    Json k;
    for (int i = 0; i < 50; i++) {
      k = ctl({"key", "show", from});
      if (!k["rules"][0]["tracked"].get<bool>()) break;
      std::this_thread::sleep_for(100ms);
    }
    EXPECT_FALSE(k["rules"][0]["tracked"].get<bool>()) << k.dump();
  }
  Json c = rule_stats("conns");
  EXPECT_GE(c["dropped_packets"].get<uint64_t>(), 4u) << c.dump();
  EXPECT_EQ(c["passed_packets"].get<uint64_t>(), 8u)
      << "one SYN per opened connection " << c.dump();
  EXPECT_NE(metrics().find("rl_connections_counted 0"), std::string::npos);

  // Without a connection limit, rld's conntrack table goes.
  auto before = ctl({"status"})["generation"].get<uint64_t>();
  write_policy("conns.yaml",
               "rules:\n"
               "  - name: rate\n"
               "    limit: {rate: 100/s}\n");
  wait_reload(before);
  EXPECT_FALSE(lab_->run(lab_->server_ns(), {"nft", "list", "table", "inet", "rl_conntrack"}).ok());
}

// `nft flush ruleset`, which nftables.service runs on reload, takes rld's conntrack table with
// it, and conntrack then tracks nothing: rld puts the table back within seconds and the limit
// holds again.
TEST_F(ConnectionsTest, AFlushedRulesetIsPutBack) {
  write_connections_policy(3);
  start_rld();
  ASSERT_NO_FATAL_FAILURE(start_server());
  const std::vector<std::string> list = {"nft", "list", "table", "inet", "rl_conntrack"};
  ASSERT_TRUE(lab_->run(lab_->server_ns(), list).ok());
  ASSERT_TRUE(lab_->run(lab_->server_ns(), {"nft", "flush", "ruleset"}).ok());
  ASSERT_FALSE(lab_->run(lab_->server_ns(), list).ok());
  bool back = false;
  for (int i = 0; i < 80 && !back; i++) {
    std::this_thread::sleep_for(100ms);
    back = lab_->run(lab_->server_ns(), list).ok();
  }
  ASSERT_TRUE(back) << "rld puts its table back within 8 s";
  const std::string to = lab_->pair().server.ipv4;
  auto client =
      lab_->run(lab_->client_ns(), {"python3", "-c", kClient, to, std::to_string(kPort)}, 30s);
  ASSERT_TRUE(client.ok()) << client.describe();
  EXPECT_EQ(client.out, "111001\n") << "counted again: 3 held, 2 refused, 1 after a close";
}

// Holds 3 connections for 4 s, then closes them: long enough for rld to be restarted meanwhile.
constexpr char kHolder[] = R"(
import socket, sys, time
held = []
for i in range(3):
    c = socket.socket()
    c.settimeout(1.5)
    c.connect((sys.argv[1], int(sys.argv[2])))
    held.append(c)
print('held', file=sys.stderr, flush=True)
time.sleep(4)
for c in held:
    c.close()
print('closed', file=sys.stderr, flush=True)
)";

// A restarted rld adopts the pinned counts, but not the connections behind them: it counts
// from none, so connections it cannot see close do not hold their key at its limit for ever.
TEST_F(ConnectionsTest, ARestartedRldCountsFromNone) {
  write_connections_policy(3);
  start_rld();
  ASSERT_NO_FATAL_FAILURE(start_server());
  const std::string to = lab_->pair().server.ipv4;
  auto holder =
      lab_->spawn_in(lab_->client_ns(), {"python3", "-c", kHolder, to, std::to_string(kPort)});
  ASSERT_TRUE(holder.ok()) << holder.error().str();
  ASSERT_TRUE(holder->wait_for("held", 10s)) << holder->err();

  rld_.reset();  // killed: the pins stay, the counts in them too
  start_rld();
  ASSERT_TRUE(holder->wait_for("closed", 10s)) << holder->err();
  std::this_thread::sleep_for(300ms);
  auto client =
      lab_->run(lab_->client_ns(), {"python3", "-c", kClient, to, std::to_string(kPort)}, 30s);
  ASSERT_TRUE(client.ok()) << client.describe();
  EXPECT_EQ(client.out, "111001\n") << "the held connections closed: 3 again";
}

// How far the count lags the kernel's connections: a client opens connections one after another,
// and after each connect() returns the test reads the pinned count until it shows the new one.
// Printed, not asserted (a timing): the time the next SYN of the same key could meet a count that
// is one short. docs/datapath.md quotes these figures.
TEST_F(ConnectionsTest, ConnectionCountsFollowConntrackWithinAMeasuredLag) {
  constexpr int kConnections = 200;
  write_connections_policy(1000);
  start_rld();
  ASSERT_NO_FATAL_FAILURE(start_server());
  int open_map = bpf_obj_get((pin_root_ + "/maps/rl_conn_open").c_str());
  ASSERT_GE(open_map, 0) << "rl_conn_open is not pinned under " << pin_root_;

  std::vector<double> lag_us;
  std::vector<int> held;
  std::string failure;
  // A thread of its own enters the client namespace: the test's other threads stay where they are.
  std::thread client([&] {
    int ns = open(("/run/netns/" + lab_->client_ns()).c_str(), O_RDONLY | O_CLOEXEC);
    if (ns < 0 || setns(ns, CLONE_NEWNET) != 0) {
      failure = "cannot enter the client namespace";
      return;
    }
    close(ns);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(kPort);
    inet_pton(AF_INET, lab_->pair().server.ipv4.c_str(), &to.sin_addr);
    uint64_t hash = 0;
    for (int i = 0; i < kConnections && failure.empty(); i++) {
      int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
        failure = "connect " + std::to_string(i) + ": " + std::strerror(errno);
        close(fd);
        break;
      }
      auto opened = std::chrono::steady_clock::now();
      held.push_back(fd);
      // Bounded: 2 s for the count to show the connection.
      for (;;) {
        uint32_t n = 0;
        if (!hash) bpf_map_get_next_key(open_map, nullptr, &hash);
        if (hash && bpf_map_lookup_elem(open_map, &hash, &n) == 0 && n == uint32_t(i + 1)) break;
        if (std::chrono::steady_clock::now() - opened > 2s) {
          failure = "the count did not show connection " + std::to_string(i + 1);
          break;
        }
      }
      lag_us.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - opened)
              .count());
    }
  });
  client.join();
  for (int fd : held) close(fd);
  close(open_map);
  ASSERT_TRUE(failure.empty()) << failure;
  ASSERT_EQ(lag_us.size(), size_t(kConnections));
  std::sort(lag_us.begin(), lag_us.end());
  auto at = [&](double q) { return lag_us[size_t(q * double(lag_us.size() - 1))]; };
  std::printf(
      "count lag after connect(), %d connections: min %.0f us, median %.0f us, p90 %.0f us, "
      "p99 %.0f us, max %.0f us\n",
      kConnections, lag_us.front(), at(0.5), at(0.9), at(0.99), lag_us.back());
}

}  // namespace
}  // namespace rl::testing
