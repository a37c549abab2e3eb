// SPDX-License-Identifier: GPL-2.0-only
// rlflood end to end: frames the kernel makes in live-frames mode (or, where the kernel refuses
// live frames, frames from the packet ring) leave the client end of a veth and reach the server
// namespace with the sources the flood promised and checksums the server's kernel accepts;
// unpaced, the flood offers more than the receiving side takes; the packet ring, asked for by
// name, sends the same flood; and rlflood refuses what it must refuse.
//
// A veth only accepts XDP_TX frames when its peer has NAPI running, that is when the peer has an
// XDP program or GRO on (drivers/net/veth.c, veth_xdp_xmit: rq->napi); without either every frame
// is dropped silently. The server ends here have GRO turned on, as the live benchmark's do.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "lab.h"
#include "traffic.h"

namespace rl::testing {
namespace {

// Frames a second for the tests that count every frame at the far end.
constexpr uint64_t kExactRate = 50000;

struct Flood {
  std::string src;
  uint32_t sources = 1;
  std::string order = "seq";
  std::string proto = "udp";
  uint16_t dport = 9;
  size_t size = 0;
  uint64_t count = 1;
  uint64_t rate = 0;
  double max_seconds = 20;
  uint32_t sports = 1;
  std::string engine = "auto";
};

std::vector<std::string> rlflood_argv(const Pair& p, const Flood& f) {
  bool v6 = f.src.find(':') != std::string::npos;
  return {RL_RLFLOOD_PATH, "--quiet",
          "--iface",       p.client.ifname,
          "--dst-mac",     p.server.mac,
          "--src",         f.src,
          "--sources",     std::to_string(f.sources),
          "--order",       f.order,
          "--dst",         v6 ? p.server.ipv6 : p.server.ipv4,
          "--proto",       f.proto,
          "--dport",       std::to_string(f.dport),
          "--size",        std::to_string(f.size),
          "--count",       std::to_string(f.count),
          "--rate",        std::to_string(f.rate),
          "--sports",      std::to_string(f.sports),
          "--engine",      f.engine,
          "--max-seconds", std::to_string(f.max_seconds)};
}

// One protocol's counters from /proc/net/snmp in ns: {"Udp": {"InDatagrams": N, ...}, ...}.
std::map<std::string, std::map<std::string, uint64_t>> snmp(const Lab& lab, const std::string& ns) {
  auto out = lab.run(ns, {"cat", "/proc/net/snmp", "/proc/net/snmp6"});
  EXPECT_TRUE(out.ok()) << out.describe();
  std::map<std::string, std::map<std::string, uint64_t>> m;
  std::istringstream in(out.out);
  std::string names, values;
  // /proc/net/snmp: a line of names then a line of values per protocol, "Udp: a b" / "Udp: 1 2".
  // /proc/net/snmp6: one "Udp6InDatagrams 5" per line; it goes under "6".
  std::string line;
  std::vector<std::string> pending;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string head;
    ls >> head;
    if (head.empty()) continue;
    if (head.back() != ':') {
      uint64_t v = 0;
      ls >> v;
      m["6"][head] = v;
      continue;
    }
    std::vector<std::string> words;
    for (std::string w; ls >> w;) words.push_back(w);
    if (pending.empty() || pending[0] != head) {
      pending = {head};
      pending.insert(pending.end(), words.begin(), words.end());
      continue;
    }
    auto& proto = m[head.substr(0, head.size() - 1)];
    for (size_t i = 0; i < words.size() && i + 1 < pending.size(); i++)
      proto[pending[i + 1]] = std::stoull(words[i][0] == '-' ? "0" : words[i]);
    pending.clear();
  }
  return m;
}

class RlfloodTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "the lab needs root (network namespaces): run the tests as root";
    const Pair& p = lab_.pair();
    auto gro = lab_.run(p.server.ns, {"ethtool", "-K", p.server.ifname, "gro", "on"});
    ASSERT_TRUE(gro.ok()) << gro.describe();
  }

  nlohmann::json flood(const Flood& f, int expect_code = 0) {
    auto timeout = std::chrono::milliseconds(static_cast<int64_t>(f.max_seconds * 1000) + 10000);
    auto out = lab_.run(lab_.client_ns(), rlflood_argv(lab_.pair(), f), timeout);
    EXPECT_EQ(out.code, expect_code) << out.describe();
    if (out.code != 0) return {};
    return nlohmann::json::parse(out.out);
  }

  // Sends f paced, so nothing is lost on the way, into a UDP socket; returns what it counted.
  // The pace (kExactRate) leaves the receiver 5 ms of the veth ring's 256 frames and over
  // 100 ms of the sink's buffer to fall behind on a busy machine before a frame is lost.
  SinkSummary deliver(const Flood& f) {
    auto sink =
        start_sink(lab_, 0, {.port = f.dport, .seconds = 30, .expect = f.count, .idle_ms = 2000});
    EXPECT_TRUE(sink.ok()) << sink.error().str();
    if (!sink.ok()) return {};
    auto sent = flood(f);
    EXPECT_EQ(sent.value("sent", 0ull), f.count);
    if (f.engine != "auto") {
      EXPECT_EQ(sent.value("engine", ""), f.engine);
    }
    auto got = finish_sink(*sink, std::chrono::seconds(40));
    EXPECT_TRUE(got.ok()) << got.error().str();
    return got.ok() ? *got : SinkSummary{};
  }

  Lab lab_;
};

// Every source once per cycle: N sources and count = k * N give exactly k datagrams each, from
// the addresses prefix+1 .. prefix+N and no other.
void expect_each_source(const SinkSummary& got, const std::string& first_three_octets_or_prefix,
                        uint32_t sources, uint64_t each) {
  EXPECT_EQ(got.sources.size(), sources);
  for (const auto& [src, n] : got.sources) {
    EXPECT_EQ(src.rfind(first_three_octets_or_prefix, 0), 0u) << src;
    EXPECT_EQ(n, each) << src;
  }
}

TEST_F(RlfloodTest, Ipv4SourcesAndChecksumsReachTheSocket) {
  auto before = snmp(lab_, lab_.server_ns());
  Flood f{.src = "198.18.64.0/18", .sources = 1000, .count = 100000, .rate = kExactRate};
  auto got = deliver(f);
  EXPECT_EQ(got.received, 100000u);
  expect_each_source(got, "198.18.6", 1000, 100);
  EXPECT_TRUE(got.sources.count("198.18.64.1") && got.sources.count("198.18.67.232"));
  auto after = snmp(lab_, lab_.server_ns());
  EXPECT_EQ(after["Udp"]["InCsumErrors"], before["Udp"]["InCsumErrors"]);
  EXPECT_EQ(after["Ip"]["InHdrErrors"], before["Ip"]["InHdrErrors"]);
}

TEST_F(RlfloodTest, Ipv6SourcesAndChecksumsReachTheSocket) {
  auto before = snmp(lab_, lab_.server_ns());
  Flood f{
      .src = "2001:db8:5::/48", .sources = 1000, .size = 128, .count = 100000, .rate = kExactRate};
  auto got = deliver(f);
  EXPECT_EQ(got.received, 100000u);
  expect_each_source(got, "2001:db8:5::", 1000, 100);
  EXPECT_EQ(got.bytes, 100000u * (128 - 14 - 40 - 8));
  EXPECT_TRUE(got.sources.count("2001:db8:5::1") && got.sources.count("2001:db8:5::3e8"));
  auto after = snmp(lab_, lab_.server_ns());
  EXPECT_EQ(after["6"]["Udp6InCsumErrors"], before["6"]["Udp6InCsumErrors"]);
}

// --sports: one source, a new source port in each frame, cycling through N; each frame's
// transport checksum follows its port, so the socket gets every datagram.
TEST_F(RlfloodTest, SourcePortsCycleWithRightChecksums) {
  auto before = snmp(lab_, lab_.server_ns());
  auto got =
      deliver(Flood{.src = "198.18.9.7/32", .count = 20000, .rate = kExactRate, .sports = 500});
  EXPECT_EQ(got.received, 20000u);
  expect_each_source(got, "198.18.9.7", 1, 20000);
  EXPECT_EQ(got.source_ports, 500u);
  got =
      deliver(Flood{.src = "2001:db8:9::7/128", .count = 2000, .rate = kExactRate, .sports = 2000});
  EXPECT_EQ(got.received, 2000u);
  EXPECT_EQ(got.source_ports, 2000u);
  auto after = snmp(lab_, lab_.server_ns());
  EXPECT_EQ(after["Udp"]["InCsumErrors"], before["Udp"]["InCsumErrors"]);
  EXPECT_EQ(after["6"]["Udp6InCsumErrors"], before["6"]["Udp6InCsumErrors"]);
}

// The shuffled order is a permutation per cycle: every source once in each run of N frames, so
// a whole number of cycles gives every source the same count.
TEST_F(RlfloodTest, ShuffledOrderVisitsEverySourceOncePerCycle) {
  Flood f{.src = "198.18.0.0/16",
          .sources = 5000,
          .order = "random",
          .count = 15000,
          .rate = kExactRate};
  auto got = deliver(f);
  EXPECT_EQ(got.received, 15000u);
  expect_each_source(got, "198.18.", 5000, 3);
}

// The server has no listener: its TCP checks each SYN's checksum before it answers with a reset
// (InCsumErrors and InErrs count a bad one).
TEST_F(RlfloodTest, TcpSynChecksumsPassTheServersTcp) {
  for (const char* src : {"198.18.1.0/24", "2001:db8:6::/64"}) {
    bool v6 = std::string(src).find(':') != std::string::npos;
    auto before = snmp(lab_, lab_.server_ns());
    auto sent = flood({.src = src,
                       .sources = 200,
                       .proto = "tcp-syn",
                       .dport = 80,
                       .count = 20000,
                       .rate = kExactRate});
    EXPECT_EQ(sent.value("sent", 0ull), 20000u) << src;
    auto after = snmp(lab_, lab_.server_ns());
    // TCP's counters are shared by both families (/proc/net/snmp).
    EXPECT_EQ(after["Tcp"]["InSegs"] - before["Tcp"]["InSegs"], 20000u) << src;
    EXPECT_EQ(after["Tcp"]["InCsumErrors"], before["Tcp"]["InCsumErrors"]) << src;
    EXPECT_EQ(after["Tcp"]["InErrs"], before["Tcp"]["InErrs"]) << src;
    if (!v6) {  // IPv6 gives up on a reset with no route back before counting it
      EXPECT_EQ(after["Tcp"]["OutRsts"] - before["Tcp"]["OutRsts"], 20000u) << src;
      EXPECT_EQ(after["Ip"]["InHdrErrors"], before["Ip"]["InHdrErrors"]);
    }
  }
}

// Unpaced, the generator sends every frame it was asked for, as fast as the kernel makes them.
// Whether the receiver keeps up depends on the machine: the benchmark reports that share
// (scripts/bench-live.sh), this test only prints it.
TEST_F(RlfloodTest, UnpacedFloodSendsEveryFrame) {
  auto before = lab_.server_stats();
  ASSERT_TRUE(before.ok()) << before.error().str();
  auto sent = flood({.src = "198.18.0.0/16", .sources = 1000, .count = 2'000'000});
  auto after = lab_.server_stats();
  ASSERT_TRUE(after.ok()) << after.error().str();
  uint64_t received = after->rx_packets - before->rx_packets;
  EXPECT_EQ(sent.value("sent", 0ull), 2'000'000u);
  EXPECT_GT(received, 0u);
  std::printf("unpaced: the receiver took %llu of 2,000,000 frames in %.2f s (%s)\n",
              static_cast<unsigned long long>(received), sent.value("seconds", 0.0),
              sent.value("engine", "?").c_str());
}

// The packet ring by name, whichever engine auto picks on this kernel: the same sources, ports
// and checksums, paced and unpaced, and a summary that names it.
TEST_F(RlfloodTest, ThePacketRingSendsTheSameFlood) {
  auto before = snmp(lab_, lab_.server_ns());
  auto got = deliver({.src = "198.18.64.0/18",
                      .sources = 1000,
                      .order = "random",
                      .count = 20000,
                      .rate = kExactRate,
                      .engine = "packet"});
  EXPECT_EQ(got.received, 20000u);
  expect_each_source(got, "198.18.6", 1000, 20);
  got = deliver({.src = "2001:db8:9::7/128",
                 .size = 100,
                 .count = 5000,
                 .rate = kExactRate,
                 .sports = 1000,
                 .engine = "packet"});
  EXPECT_EQ(got.received, 5000u);
  EXPECT_EQ(got.source_ports, 1000u);
  auto syn = flood({.src = "198.18.1.0/24",
                    .sources = 200,
                    .proto = "tcp-syn",
                    .dport = 80,
                    .count = 5000,
                    .rate = kExactRate,
                    .engine = "packet"});
  EXPECT_EQ(syn.value("sent", 0ull), 5000u);
  auto unpaced =
      flood({.src = "198.18.0.0/16", .sources = 1000, .count = 200000, .engine = "packet"});
  EXPECT_EQ(unpaced.value("sent", 0ull), 200000u);
  EXPECT_EQ(unpaced.value("engine", ""), "packet");
  auto after = snmp(lab_, lab_.server_ns());
  EXPECT_EQ(after["Tcp"]["InSegs"] - before["Tcp"]["InSegs"], 5000u);
  EXPECT_EQ(after["Tcp"]["InCsumErrors"], before["Tcp"]["InCsumErrors"]);
  EXPECT_EQ(after["Udp"]["InCsumErrors"], before["Udp"]["InCsumErrors"]);
  EXPECT_EQ(after["6"]["Udp6InCsumErrors"], before["6"]["Udp6InCsumErrors"]);
  EXPECT_EQ(after["Ip"]["InHdrErrors"], before["Ip"]["InHdrErrors"]);
}

TEST_F(RlfloodTest, RefusesAnUnknownEngine) {
  auto out = lab_.run(lab_.client_ns(),
                      rlflood_argv(lab_.pair(), {.src = "198.18.0.1", .engine = "pktgen"}));
  EXPECT_EQ(out.code, 2) << out.describe();
  EXPECT_NE(out.err.find("--engine"), std::string::npos) << out.err;
}

TEST_F(RlfloodTest, RefusesAddressesOutsideTheLabRanges) {
  for (const char* src : {"10.0.0.0/24", "192.0.2.1", "2001:db9::/48", "198.20.0.0/16"}) {
    auto out = lab_.run(lab_.client_ns(), rlflood_argv(lab_.pair(), {.src = src}));
    EXPECT_EQ(out.code, 2) << src << ": " << out.describe();
    EXPECT_NE(out.err.find("refused"), std::string::npos) << out.err;
  }
  Flood wrong_dst{.src = "198.18.0.1"};
  auto argv = rlflood_argv(lab_.pair(), wrong_dst);
  *std::next(std::find(argv.begin(), argv.end(), "--dst")) = "10.1.2.3";
  auto out = lab_.run(lab_.client_ns(), argv);
  EXPECT_EQ(out.code, 2) << out.describe();
}

TEST_F(RlfloodTest, RefusesTheHostNamespace) {
  auto out = run(rlflood_argv(lab_.pair(), {.src = "198.18.0.1"}));
  EXPECT_EQ(out.code, 2) << out.describe();
  EXPECT_NE(out.err.find("lab namespace"), std::string::npos) << out.err;
}

TEST_F(RlfloodTest, RefusesMoreSourcesThanThePrefixHolds) {
  auto out = lab_.run(lab_.client_ns(),
                      rlflood_argv(lab_.pair(), {.src = "198.18.1.0/24", .sources = 256}));
  EXPECT_EQ(out.code, 2) << out.describe();
}

TEST_F(RlfloodTest, RefusesABurstOutsideItsRange) {
  for (const char* burst : {"0", "4097", "-1"}) {
    auto argv = rlflood_argv(lab_.pair(), {.src = "198.18.0.1", .rate = 1000});
    argv.insert(argv.end(), {"--burst", burst});
    auto out = lab_.run(lab_.client_ns(), argv);
    EXPECT_EQ(out.code, 2) << burst << ": " << out.describe();
    EXPECT_NE(out.err.find("--burst"), std::string::npos) << out.err;
  }
}

// Paced in bursts, every frame asked for goes out, and the summary says whether the pacing had to
// give any up.
TEST_F(RlfloodTest, PacedInBurstsSendsEveryFrame) {
  auto argv = rlflood_argv(
      lab_.pair(),
      {.src = "198.18.0.0/16", .sources = 1000, .count = 20000, .rate = 100000, .max_seconds = 20});
  argv.insert(argv.end(), {"--burst", "16"});
  auto out = lab_.run(lab_.client_ns(), argv);
  ASSERT_EQ(out.code, 0) << out.describe();
  auto j = nlohmann::json::parse(out.out);
  EXPECT_EQ(j.value("sent", 0ull), 20000u);
  EXPECT_TRUE(j.contains("late_bursts") && j.contains("skipped")) << out.out;
}

}  // namespace
}  // namespace rl::testing
