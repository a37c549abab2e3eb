// SPDX-License-Identifier: GPL-2.0-only
// Key texts are what every node names a key by in Redis: they must be exactly the canonical
// address text (inet_ntop's), whatever the formatting shortcut.
#include "common/key_text.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "common/prefix.h"

namespace rl::daemon {
namespace {

std::string text(uint8_t kind, const Address& a, uint16_t dport = 0, uint8_t v4 = 24,
                 uint8_t v6 = 64) {
  __u32 words[4] = {};
  std::memcpy(words, a.bytes.data(), a.family == 4 ? 4 : 16);
  return key_text(kind, a.family, words, dport, v4, v6);
}

TEST(KeyText, MatchesTheCanonicalAddressText) {
  std::mt19937 rng(7);
  for (int i = 0; i < 100'000; i++) {
    Address a;
    a.family = i % 4 == 3 ? 6 : 4;
    for (size_t b = 0; b < (a.family == 4 ? 4u : 16u); b++)
      a.bytes[b] = static_cast<uint8_t>(i % 5 == 0 ? (rng() % 3 ? 0 : rng()) : rng());
    ASSERT_EQ(text(RL_KEY_SRC_ADDR, a, 0, 32, 128), a.str());
  }
}

TEST(KeyText, EveryKind) {
  auto v4 = *Address::parse("198.18.0.7");
  auto v6 = *Address::parse("2001:db8:1::");
  EXPECT_EQ(text(RL_KEY_RULE, v4), "*");
  EXPECT_EQ(text(RL_KEY_SRC_ADDR, v4), "198.18.0.7");
  EXPECT_EQ(text(RL_KEY_SRC_PREFIX, *Address::parse("198.18.0.0"), 0, 24), "198.18.0.0/24");
  EXPECT_EQ(text(RL_KEY_SRC_ADDR_DPORT, v4, 53), "198.18.0.7|53");
  EXPECT_EQ(text(RL_KEY_SRC_ADDR_DPORT, *Address::parse("0.0.0.0"), 65535), "0.0.0.0|65535");
  EXPECT_EQ(text(RL_KEY_SRC_PREFIX, v6, 0, 24, 64), "2001:db8:1::/64");
  EXPECT_EQ(text(RL_KEY_SRC_ADDR_DPORT, *Address::parse("2001:db8::1"), 443, 32, 128),
            "2001:db8::1|443");
  // A per-source IPv6 key is its client's prefix, unless the rule keys by /128.
  EXPECT_EQ(text(RL_KEY_SRC_ADDR, *Address::parse("2001:db8:0:7::"), 0, 32, 64),
            "2001:db8:0:7::/64");
  EXPECT_EQ(text(RL_KEY_SRC_ADDR_DPORT, *Address::parse("2001:db8:0:7::"), 443, 32, 56),
            "2001:db8:0:7::/56|443");
  EXPECT_EQ(text(RL_KEY_SRC_ADDR, *Address::parse("2001:db8::1"), 0, 32, 128), "2001:db8::1");
  EXPECT_EQ(text(RL_KEY_SRC_ADDR, *Address::parse("255.255.255.255")), "255.255.255.255");
  __u32 none[4] = {};
  EXPECT_EQ(key_text(RL_KEY_UNADMITTED, 0, none, 0, 24, 64), "new:*");
  EXPECT_EQ(text(RL_KEY_UNADMITTED, *Address::parse("198.18.1.0"), 24, 32, 128),
            "new:198.18.1.0/24");
  EXPECT_EQ(text(RL_KEY_UNADMITTED, *Address::parse("2001:db8:7::"), 48), "new:2001:db8:7::/48");
  EXPECT_EQ(text(RL_KEY_DST_PREFIX, *Address::parse("192.0.2.10"), 0, 32, 128), "dst:192.0.2.10");
  EXPECT_EQ(text(RL_KEY_DST_PREFIX, *Address::parse("192.0.2.0"), 0, 24, 64), "dst:192.0.2.0/24");
  EXPECT_EQ(text(RL_KEY_DST_PREFIX, *Address::parse("3fff::1"), 0, 32, 128), "dst:3fff::1");
  EXPECT_EQ(text(RL_KEY_DST_PREFIX, *Address::parse("3fff:0:0:1::"), 0, 32, 64),
            "dst:3fff:0:0:1::/64");
  __u32 pair4[4] = {};
  std::memcpy(&pair4[0], Address::parse("198.18.0.7")->bytes.data(), 4);
  std::memcpy(&pair4[1], Address::parse("192.0.2.10")->bytes.data(), 4);
  EXPECT_EQ(key_text(RL_KEY_SRC_DST, 4, pair4, 0, 24, 64), "198.18.0.7>192.0.2.10");
  __u32 pair6[4] = {};
  std::memcpy(&pair6[0], Address::parse("2001:db8:0:5::")->bytes.data(), 8);
  std::memcpy(&pair6[2], Address::parse("3fff:0:0:1::")->bytes.data(), 8);
  EXPECT_EQ(key_text(RL_KEY_SRC_DST, 6, pair6, 0, 24, 64), "2001:db8:0:5::/64>3fff:0:0:1::/64");
}

}  // namespace
}  // namespace rl::daemon
