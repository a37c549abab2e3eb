// SPDX-License-Identifier: GPL-2.0-only
// rlflood's frame rewrite (tools/rlflood/flood_frame.bpf.h), which the XDP program and the packet
// ring share: frame n carries the source and port the flood promised, and checksums that verify
// from scratch, whatever the template's slot held before.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "flood_frame.bpf.h"
#include "flood_plan.h"
#include "options.h"

namespace rl::rlflood {
namespace {

FloodPlan plan(std::vector<std::string> extra) {
  std::vector<std::string> args{"rlflood",           "--iface", "veth0", "--dst-mac",
                                "02:00:00:00:00:01", "--count", "100"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  auto parsed = parse_options(static_cast<int>(argv.size()), argv.data());
  EXPECT_TRUE(parsed) << parsed.error().str();
  auto p = plan_flood(parsed->options, {0x02, 0, 0, 0, 0, 0x02}, 1500);
  EXPECT_TRUE(p) << p.error().str();
  return *p;
}

uint32_t word(const std::vector<uint8_t>& f, size_t off) { return (f[off] << 8) | f[off + 1]; }

// The one's complement sum of [off, off + len) plus sum, folded: 0xffff when a checksum in it is
// right.
uint16_t sum16(const std::vector<uint8_t>& f, size_t off, size_t len, uint32_t sum = 0) {
  for (size_t i = 0; i + 1 < len; i += 2) sum += word(f, off + i);
  if (len % 2) sum += f[off + len - 1] << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(sum);
}

// Checks frame f's IP and transport checksums from scratch.
void expect_valid(const std::vector<uint8_t>& f, bool v6, bool tcp) {
  size_t ip = 14, l4 = v6 ? 54 : 34, l4_len = f.size() - l4;
  uint32_t pseudo = (tcp ? 6 : 17) + static_cast<uint32_t>(l4_len);
  if (v6) {
    for (size_t i = 0; i < 32; i += 2) pseudo += word(f, ip + 8 + i);
  } else {
    EXPECT_EQ(sum16(f, ip, 20), 0xffff) << "IPv4 header checksum";
    for (size_t i = 0; i < 8; i += 2) pseudo += word(f, ip + 12 + i);
  }
  EXPECT_EQ(sum16(f, l4, l4_len, pseudo), 0xffff) << (tcp ? "TCP" : "UDP") << " checksum";
  if (!tcp) {
    EXPECT_NE(word(f, l4 + 6), 0u) << "a UDP checksum of 0 means none";
  }
}

// Frame n written into a slot that held frame `before`, as a recycled page or ring slot does.
std::vector<uint8_t> frame(const FloodPlan& p, uint64_t n, uint64_t before = 0) {
  std::vector<uint8_t> f = p.frame;
  flood_frame_write(&p.spec, f.data(), before);
  flood_frame_write(&p.spec, f.data(), n);
  return f;
}

TEST(FloodFrame, Ipv4UdpFramesCarryTheirSourceAndValidChecksums) {
  FloodPlan p = plan({"--src", "198.18.64.0/18", "--sources", "1000", "--dst", "192.0.2.2"});
  ASSERT_EQ(p.frame.size(), 64u);
  for (uint64_t n : {0ull, 1ull, 999ull, 1000ull, 123457ull}) {
    auto f = frame(p, n, n + 17);
    uint32_t src = 0xc6124000u + 1 + static_cast<uint32_t>(n % 1000);  // 198.18.64.0 + 1 + k
    EXPECT_EQ(word(f, 26), src >> 16) << n;
    EXPECT_EQ(word(f, 28), src & 0xffff) << n;
    expect_valid(f, false, false);
  }
}

TEST(FloodFrame, Ipv6AndTcpFramesVerifyFromScratch) {
  for (const char* proto : {"udp", "tcp-syn"}) {
    bool tcp = std::string(proto) == "tcp-syn";
    FloodPlan v6 = plan({"--src", "2001:db8:5::/48", "--sources", "70000", "--dst", "3fff::2",
                         "--proto", proto, "--size", "128"});
    FloodPlan v4 = plan(
        {"--src", "198.18.0.0/15", "--sources", "131071", "--dst", "192.0.2.2", "--proto", proto});
    for (uint64_t n = 0; n < 200000; n += 4999) {
      expect_valid(frame(v6, n, n * 7 + 3), true, tcp);
      expect_valid(frame(v4, n, n * 7 + 3), false, tcp);
    }
    // The source's last 32 bits: prefix + 1 + n mod sources.
    auto f = frame(v6, 65536);
    EXPECT_EQ(word(f, 14 + 20), 1u);
    EXPECT_EQ(word(f, 14 + 22), 1u);
  }
}

TEST(FloodFrame, SourcePortsCycleAndKeepTheChecksumsRight) {
  FloodPlan p =
      plan({"--src", "198.18.9.7/32", "--dst", "192.0.2.2", "--sport", "1024", "--sports", "500"});
  std::set<uint32_t> ports;
  for (uint64_t n = 0; n < 1000; n++) {
    auto f = frame(p, n, n + 250);
    EXPECT_EQ(word(f, 26), 0xc612u);
    EXPECT_EQ(word(f, 28), 0x0907u);
    EXPECT_EQ(word(f, 34), 1024 + n % 500);
    ports.insert(word(f, 34));
    expect_valid(f, false, false);
  }
  EXPECT_EQ(ports.size(), 500u);
}

TEST(FloodFrame, TheShuffledOrderIsAPermutationOfEachCycle) {
  FloodPlan p = plan(
      {"--src", "198.18.0.0/16", "--sources", "5000", "--order", "random", "--dst", "192.0.2.2"});
  ASSERT_TRUE(p.spec.shuffle);
  for (uint64_t cycle = 0; cycle < 2; cycle++) {
    std::set<uint32_t> seen;
    for (uint64_t n = cycle * 5000; n < (cycle + 1) * 5000; n++) {
      auto f = frame(p, n);
      seen.insert((word(f, 26) << 16) | word(f, 28));
    }
    EXPECT_EQ(seen.size(), 5000u);
    EXPECT_EQ(*seen.begin(), 0xc6120001u);
    EXPECT_EQ(*seen.rbegin(), 0xc6120000u + 5000);
  }
}

}  // namespace
}  // namespace rl::rlflood
