// SPDX-License-Identifier: GPL-2.0-only
// "At most 3 connections open per source" with real TCP clients through the veth: a client in
// the client namespace opens 3 connections to a server in the server namespace and holds them;
// the next ones are refused in XDP until one of the 3 closes. The count comes from conntrack's
// events, which rld reads once it turned conntrack on with a table of its own.
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
    c = socket.socket()
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
held.pop(0).close()
time.sleep(1.0)
c = attempt()
out.append(1 if c else 0)
print(''.join(map(str, out)), flush=True)
for c in held + ([c] if c else []):
    c.close()
)";

TEST_F(RldTest, AConnectionLimitHoldsASourceToItsOpenConnections) {
  write_policy("conns.yaml",
               "rules:\n"
               "  - name: conns\n"
               "    match: {ports: [" +
                   std::to_string(kPort) +
                   "]}\n"
                   "    limit: {connections: 3}\n"
                   "    key: source\n");
  start_rld();
  EXPECT_TRUE(lab_->run(lab_->server_ns(), {"nft", "list", "table", "inet", "rl_conntrack"}).ok())
      << "rld turns conntrack on for connection limits";

  auto server =
      lab_->spawn_in(lab_->server_ns(), {"python3", "-c", kServer, std::to_string(kPort)});
  ASSERT_TRUE(server.ok()) << server.error().str();
  ASSERT_TRUE(server->wait_for("listening", 10s)) << server->err();

  auto client =
      lab_->run(lab_->client_ns(),
                {"python3", "-c", kClient, lab_->pair().server.ipv4, std::to_string(kPort)}, 30s);
  ASSERT_TRUE(client.ok()) << client.describe();
  EXPECT_EQ(client.out, "111001\n")
      << "3 held, the 4th and 5th refused, one more once one of the 3 closed";

  Json c = rule_stats("conns");
  EXPECT_GE(c["dropped_packets"].get<uint64_t>(), 2u) << c.dump();
  EXPECT_EQ(c["passed_packets"].get<uint64_t>(), 4u)
      << "one SYN per opened connection " << c.dump();

  // The client closed everything: the count goes back to 0 with conntrack's events.
  Json k;
  for (int i = 0; i < 50; i++) {
    k = ctl({"key", "show", lab_->pair().client.ipv4});
    if (!k["rules"][0]["tracked"].get<bool>()) break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_FALSE(k["rules"][0]["tracked"].get<bool>()) << k.dump();

  // Without a connection limit, rld's conntrack table goes.
  auto before = ctl({"status"})["generation"].get<uint64_t>();
  write_policy("conns.yaml",
               "rules:\n"
               "  - name: rate\n"
               "    limit: {rate: 100/s}\n");
  wait_reload(before);
  EXPECT_FALSE(lab_->run(lab_->server_ns(), {"nft", "list", "table", "inet", "rl_conntrack"}).ok());
}

}  // namespace
}  // namespace rl::testing
