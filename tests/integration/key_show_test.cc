// SPDX-License-Identifier: GPL-2.0-only
// `rlctl key show` on a rule that stacks a per-source and a per-/24 limit, against a real rld
// whose XDP program judged real packets from several sources of one /24: each limit's key, state
// and drops, checked against what the receiver got and the data path's counters.
// An IPv6 client is its /64 under key: source, found from any of its addresses.
#include <sstream>

#include "rld_fixture.h"

namespace rl::testing {
namespace {

// The per-source limit never refuses here (a burst of 1,000 for at most 100 packets a source);
// the /24's burst of 50 is shared by the four sources, so it refuses the rest. Both refill at one
// token a minute: nothing measurable during the test.
constexpr char kStackedPolicy[] =
    "rules:\n"
    "  - name: udp9\n"
    "    match: {protocol: udp, port: 9}\n"
    "    limits:\n"
    "      - {name: per-source, rate: 1/min, burst: 1000, key: source}\n"
    "      - {name: per-24, rate: 1/min, burst: 50, key: source_prefix,\n"
    "         prefix: {ipv4: 24, ipv6: 48}}\n";

TEST_F(RldTest, KeyShowListsEveryLimitOfAStackedRuleWithItsDrops) {
  write_policy("p.yaml", kStackedPolicy);
  start_rld();
  // 198.18.7.1 .. 198.18.7.4 in turn, 100 packets each.
  auto d = deliver({.src = "198.18.7.0/24", .sources = 4, .count = 400, .rate = 4000});
  ASSERT_TRUE(d.ok()) << d.error().str();
  ASSERT_EQ(d->sent.sent, 400u);
  EXPECT_EQ(d->got.received, 50u) << "the /24's burst, shared by its sources";
  EXPECT_EQ(d->got.sources.size(), 4u) << "each source had its turn within the burst";
  const uint64_t dropped = d->sent.sent - d->got.received;

  // The data path's exact counters: the per-24 limit refused every dropped packet.
  Json stats = ctl({"stats"});
  ASSERT_EQ(stats["rules"].size(), 1u) << stats.dump();
  const Json& st = stats["rules"][0];
  EXPECT_EQ(st["counters"]["dropped_packets"], dropped) << st.dump();
  ASSERT_EQ(st["limits"].size(), 2u) << st.dump();
  EXPECT_EQ(st["limits"][0]["refused_packets"], 0) << st.dump();
  EXPECT_EQ(st["limits"][1]["name"], "per-24");
  EXPECT_EQ(st["limits"][1]["refused_packets"], dropped) << st.dump();

  // The /24 key's offender report reaches rld through the ring buffer: wait for it (bounded).
  Json k;
  for (int i = 0; i < 50; i++) {
    k = ctl({"key", "show", "198.18.7.2"});
    if (k["rules"].size() == 1 && k["rules"][0]["limits"].size() == 2 &&
        k["rules"][0]["limits"][1]["drops"].get<uint64_t>() > 0)
      break;
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_EQ(k["rules"].size(), 1u) << k.dump(2);
  const Json& r = k["rules"][0];
  EXPECT_EQ(r["rule"], "udp9");
  ASSERT_EQ(r["limits"].size(), 2u) << k.dump(2);

  // The source's own limit: tracked, its bucket down by exactly what it got through (a packet
  // the /24 refused gave its token back), and no drops of its own.
  const Json& own = r["limits"][0];
  EXPECT_EQ(own["limit"], "per-source");
  EXPECT_EQ(own["key"], "198.18.7.2");
  ASSERT_TRUE(own["tracked"].get<bool>()) << k.dump(2);
  const double got = static_cast<double>(d->got.sources.at("198.18.7.2"));
  EXPECT_NEAR(own["state"]["tokens"].get<double>(), 1000 - got, 0.5) << k.dump(2);
  EXPECT_EQ(own["state"]["burst"].get<double>(), 1000);
  EXPECT_EQ(own["drops"], 0) << k.dump(2);

  // The /24's limit: its own key, empty, with every drop the data path counted for it.
  const Json& prefix = r["limits"][1];
  EXPECT_EQ(prefix["limit"], "per-24");
  EXPECT_EQ(prefix["key"], "198.18.7.0/24");
  ASSERT_TRUE(prefix["tracked"].get<bool>()) << k.dump(2);
  EXPECT_LT(prefix["state"]["tokens"].get<double>(), 1.0) << k.dump(2);
  EXPECT_EQ(prefix["state"]["burst"].get<double>(), 50);
  EXPECT_EQ(prefix["drops"], dropped) << k.dump(2);
  EXPECT_FALSE(prefix["last_drop"].is_null());

  // Another source of the /24 shares the /24 key and its drops; its own key is its own.
  Json other = ctl({"key", "show", "198.18.7.4", "--rule", "udp9"});
  const Json& ol = other["rules"][0]["limits"];
  ASSERT_EQ(ol.size(), 2u) << other.dump(2);
  EXPECT_EQ(ol[0]["key"], "198.18.7.4");
  EXPECT_NEAR(ol[0]["state"]["tokens"].get<double>(),
              1000 - static_cast<double>(d->got.sources.at("198.18.7.4")), 0.5);
  EXPECT_EQ(ol[1]["key"], "198.18.7.0/24");
  EXPECT_EQ(ol[1]["drops"], dropped);

  // The table: a row per limit, each with its key, state and drops.
  auto text = run({RL_RLCTL_PATH, "key", "show", "198.18.7.2", "-s", socket_path()});
  ASSERT_TRUE(text.ok()) << text.describe();
  std::istringstream lines(text.out);
  std::string header, source_row, prefix_row;
  std::getline(lines, header);
  std::getline(lines, source_row);
  std::getline(lines, prefix_row);
  EXPECT_NE(header.find("LIMIT"), std::string::npos) << text.out;
  for (const char* cell : {"udp9", "per-source", "198.18.7.2 ", "of 1000.0 packets left"})
    EXPECT_NE(source_row.find(cell), std::string::npos) << cell << " in\n" << text.out;
  for (const std::string& cell :
       {std::string("udp9"), std::string("per-24"), std::string("198.18.7.0/24"),
        std::string("of 50.0 packets left"), " " + std::to_string(dropped) + " "})
    EXPECT_NE(prefix_row.find(cell), std::string::npos) << cell << " in\n" << text.out;
}

// An IPv6 client is its /64: four addresses of one /64 share one bucket under key: source, and
// any address of it finds that key; with prefix {ipv6: 128} each address has its own.
constexpr char kClientPolicy[] =
    "rules:\n"
    "  - name: per-client\n"
    "    match: {protocol: udp, port: 9}\n"
    "    limit: {rate: 1/min, burst: 20}\n"
    "    key: source\n"
    "  - name: per-host\n"
    "    match: {protocol: udp, port: 10}\n"
    "    limit: {rate: 1/min, burst: 20}\n"
    "    key: source\n"
    "    prefix: {ipv6: 128}\n";

TEST_F(RldTest, AnIpv6ClientIsItsSlash64) {
  write_policy("p.yaml", kClientPolicy);
  start_rld();
  // 2001:db8:0:7::1 .. ::4 in turn, 25 datagrams each.
  auto d = deliver({.src = "2001:db8:0:7::/64", .sources = 4, .count = 100, .rate = 4000});
  ASSERT_TRUE(d.ok()) << d.error().str();
  ASSERT_EQ(d->sent.sent, 100u);
  EXPECT_EQ(d->got.received, 20u) << "one burst for the /64, whichever address sent";
  const uint64_t dropped = d->sent.sent - d->got.received;

  Json k;
  for (int i = 0; i < 50; i++) {  // the offender report comes through the ring buffer
    k = ctl({"key", "show", "2001:db8:0:7:abcd::1", "--rule", "per-client"});
    if (k["rules"].size() == 1 && k["rules"][0]["limits"][0]["drops"].get<uint64_t>() > 0) break;
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_EQ(k["rules"].size(), 1u) << k.dump(2);
  const Json& client = k["rules"][0]["limits"][0];
  EXPECT_EQ(client["key"], "2001:db8:0:7::/64") << "an address the lab never sent from";
  ASSERT_TRUE(client["tracked"].get<bool>()) << k.dump(2);
  EXPECT_LT(client["state"]["tokens"].get<double>(), 1.0) << k.dump(2);
  EXPECT_EQ(client["drops"], dropped) << k.dump(2);

  // The same senders against a rule keyed by /128: each address has its own burst.
  auto hosts =
      deliver({.src = "2001:db8:0:7::/64", .sources = 4, .dport = 10, .count = 100, .rate = 4000});
  ASSERT_TRUE(hosts.ok()) << hosts.error().str();
  EXPECT_EQ(hosts->got.received, 80u) << "four addresses, a burst of 20 each";
  Json h = ctl({"key", "show", "2001:db8:0:7::2", "--rule", "per-host"});
  EXPECT_EQ(h["rules"][0]["limits"][0]["key"], "2001:db8:0:7::2") << h.dump(2);
}

}  // namespace
}  // namespace rl::testing
