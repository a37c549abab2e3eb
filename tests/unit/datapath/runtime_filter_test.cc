// SPDX-License-Identifier: GPL-2.0-only
// The runtime lists' filter (controller/datapath/runtime_filter.h) over words the test owns, with
// packets modelled as the XDP program reads them (bpf/lib/classify.h, rl_runtime_filter_hit: the
// switch word once, the address masked with rl_mask_addr and hashed, rl_rtf_bit) and the tries
// modelled by a set of prefixes.
#include "datapath/runtime_filter.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>
#include <vector>

#include "rl_hash.h"
#include "rl_key.h"

namespace rl::testing {
namespace {

struct Lab {
  std::vector<uint64_t> words = std::vector<uint64_t>(RL_RUNTIME_FILTER_ENTRIES);
  std::set<Prefix> tries;
  int grace_periods = 0;
  RuntimeFilter filter{words, [this] {
                         grace_periods++;
                         return Status{};
                       }};

  RuntimeFilter::Entries entries() {
    return [this]() -> Result<std::vector<Prefix>> {
      return std::vector<Prefix>(tries.begin(), tries.end());
    };
  }
  void add(const Prefix& p) {
    ASSERT_TRUE(filter.add(p, entries()).ok());
    tries.insert(p);
  }
  void remove(const Prefix& p) {
    if (!tries.erase(p)) return;
    ASSERT_TRUE(filter.removed(entries()).ok());
  }
  // What a packet from `a` concludes: may a runtime entry cover it?
  bool packet_hit(const Address& a) const {
    const uint64_t sw = words[0];
    if (!(sw & RL_RTF_BUILT)) return true;
    const uint32_t fam6 = a.family == 6;
    uint32_t addr[4];
    std::memcpy(addr, a.bytes.data(), sizeof(addr));
    rl_mask_addr(addr, a.family, rl_rtf_min_len(sw, fam6));
    const uint32_t bit = rl_rtf_bit(rl_filter_hash(addr, a.family));
    return (words[rl_rtf_index(rl_rtf_half(sw), fam6, bit)] >> (bit % 64)) & 1;
  }
  // Whether that packet asks its family's hosts' hash too.
  bool packet_asks_hosts(const Address& a) const {
    const uint64_t sw = words[0];
    return !(sw & RL_RTF_BUILT) || rl_rtf_hosts(sw, a.family == 6);
  }
};

Address random_in(const Prefix& p, std::mt19937_64& rng) {
  Address a = p.addr;
  for (size_t i = p.len; i < a.width(); i++)
    if (rng() & 1) a.bytes[i / 8] |= static_cast<uint8_t>(0x80 >> (i % 8));
  return a;
}

Prefix random_prefix(std::mt19937_64& rng) {
  Address a;
  a.family = (rng() & 1) ? 6 : 4;
  for (auto& b : a.bytes) b = static_cast<uint8_t>(rng());
  if (a.family == 4) std::fill(a.bytes.begin() + 4, a.bytes.end(), 0);
  const uint8_t len = static_cast<uint8_t>(a.family == 4 ? 8 + rng() % 25 : 16 + rng() % 113);
  return Prefix::of(a, len);
}

// The filter's one promise: a packet never skips a trie that holds an entry covering its source,
// whatever order entries come and go in (shorter ones after longer ones switch halves).
TEST(RuntimeFilter, NoSourceAnEntryCoversIsEverSkipped) {
  Lab lab;
  std::mt19937_64 rng(7);
  std::vector<Prefix> added;
  for (int step = 0; step < 3000; step++) {
    if (added.empty() || rng() % 3) {
      added.push_back(random_prefix(rng));
      ASSERT_NO_FATAL_FAILURE(lab.add(added.back()));
    } else {
      size_t i = rng() % added.size();
      ASSERT_NO_FATAL_FAILURE(lab.remove(added[i]));
      added.erase(added.begin() + static_cast<std::ptrdiff_t>(i));
    }
    for (const auto& p : lab.tries) {
      ASSERT_TRUE(lab.packet_hit(p.addr)) << p.str() << " at step " << step;
      ASSERT_TRUE(lab.packet_hit(random_in(p, rng))) << p.str() << " at step " << step;
      if (p.len == p.addr.width()) {
        ASSERT_TRUE(lab.packet_asks_hosts(p.addr)) << p.str() << " at step " << step;
      }
    }
  }
  EXPECT_GT(lab.grace_periods, 2) << "the test reached rebuilds after the first";
}

// What it is for: sources no entry covers skip the trie. 10,000 offenders' /32s and /64s leave
// about 10,000 of 1,048,576 bits set per family.
TEST(RuntimeFilter, MostSourcesNoEntryCoversSkipTheTries) {
  Lab lab;
  std::mt19937_64 rng(11);
  for (int i = 0; i < 10'000; i++)
    for (uint8_t family : {4, 6}) {
      Address a;
      a.family = family;
      for (size_t b = 0; b < a.width() / 8; b++) a.bytes[b] = static_cast<uint8_t>(rng());
      ASSERT_NO_FATAL_FAILURE(lab.add(Prefix::of(a, family == 4 ? 32 : 64)));
    }
  EXPECT_EQ(lab.grace_periods, 1) << "one rebuild per family's first entry, the first of them "
                                     "without a grace period; then bits only";
  int hits[2] = {0, 0};
  const int n = 100'000;
  for (int i = 0; i < n; i++)
    for (uint8_t family : {4, 6}) {
      Address a;
      a.family = family;
      for (size_t b = 0; b < a.width() / 8; b++) a.bytes[b] = static_cast<uint8_t>(rng());
      hits[family == 6] += lab.packet_hit(a);
    }
  // 1 - e^(-10,000 / 1,048,576) = 0.95% of the bits set; a covered address among random ones is
  // rare.
  EXPECT_LT(hits[0], n * 2 / 100);
  EXPECT_LT(hits[1], n * 2 / 100);
}

// A half is rewritten only after a grace period, and a rebuild switches halves, so a packet that
// read the switch before a rebuild reads the bitsets it was built with.
TEST(RuntimeFilter, AHalfIsRewrittenOnlyAfterAGracePeriod) {
  Lab lab;
  ASSERT_NO_FATAL_FAILURE(lab.add(*Prefix::parse("198.18.7.0/24")));
  EXPECT_EQ(lab.grace_periods, 0) << "before the first build no packet reads a half";
  const uint64_t first = lab.words[0];
  EXPECT_EQ(rl_rtf_min_len(first, 0), 24u);
  EXPECT_EQ(rl_rtf_min_len(first, 1), uint32_t{RL_RTF_NONE});
  // Same length or longer: a bit in the half in use, no rebuild.
  ASSERT_NO_FATAL_FAILURE(lab.add(*Prefix::parse("198.18.9.9/32")));
  EXPECT_EQ(lab.words[0], first | 1ULL << RL_RTF_HOSTS_SHIFT) << "and IPv4's hosts bit";
  EXPECT_EQ(lab.grace_periods, 0);
  // Shorter: a rebuild into the other half, after a grace period.
  std::vector<uint64_t> before = lab.words;
  ASSERT_NO_FATAL_FAILURE(lab.add(*Prefix::parse("198.18.0.0/16")));
  EXPECT_EQ(lab.grace_periods, 1);
  EXPECT_EQ(rl_rtf_half(lab.words[0]), rl_rtf_half(first) ^ 1);
  EXPECT_EQ(rl_rtf_min_len(lab.words[0], 0), 16u);
  const uint32_t old_half = rl_rtf_half(first);
  for (uint32_t w = 0; w < RL_RUNTIME_FILTER_WORDS; w++)
    ASSERT_EQ(lab.words[rl_rtf_index(old_half, 0, 0) + w], before[rl_rtf_index(old_half, 0, 0) + w])
        << "the half a packet may still read is left alone";
}

// A removed entry's bit stays until removed entries could hold half the bits; then a rebuild
// clears them and raises a min_len the removed entries held down.
TEST(RuntimeFilter, RemovalsRebuildOnceHalfTheBitsMayBeStale) {
  Lab lab;
  ASSERT_NO_FATAL_FAILURE(lab.add(*Prefix::parse("198.18.0.0/16")));
  std::vector<Prefix> hosts;
  for (int i = 0; i < 99; i++) {
    hosts.push_back(*Prefix::parse("198.19.0." + std::to_string(i) + "/32"));
    ASSERT_NO_FATAL_FAILURE(lab.add(hosts.back()));
  }
  ASSERT_NO_FATAL_FAILURE(lab.remove(*Prefix::parse("198.18.0.0/16")));
  EXPECT_EQ(rl_rtf_min_len(lab.words[0], 0), 16u) << "one removal of 100: no rebuild yet";
  const int before = lab.grace_periods;
  for (int i = 0; i < 49; i++) ASSERT_NO_FATAL_FAILURE(lab.remove(hosts[static_cast<size_t>(i)]));
  EXPECT_EQ(lab.grace_periods, before + 1) << "the 50th removal of 100";
  EXPECT_EQ(rl_rtf_min_len(lab.words[0], 0), 32u);
  EXPECT_FALSE(lab.packet_hit(hosts[0].addr) && lab.packet_hit(hosts[1].addr) &&
               lab.packet_hit(hosts[2].addr))
      << "removed entries' bits are gone (one may share a live entry's bit)";
  for (size_t i = 49; i < hosts.size(); i++) EXPECT_TRUE(lab.packet_hit(hosts[i].addr));
  EXPECT_TRUE(lab.packet_asks_hosts(hosts[49].addr));
  // The last hosts go; the next rebuild leaves IPv4's hosts bit clear.
  ASSERT_NO_FATAL_FAILURE(lab.add(*Prefix::parse("198.18.0.0/24")));
  for (size_t i = 49; i < hosts.size(); i++) ASSERT_NO_FATAL_FAILURE(lab.remove(hosts[i]));
  EXPECT_EQ(rl_rtf_min_len(lab.words[0], 0), 24u);
  EXPECT_FALSE(lab.packet_asks_hosts(hosts[0].addr)) << "packets skip an empty host table";
  EXPECT_TRUE(lab.packet_hit(*Address::parse("198.18.0.1")));
}

// A family's hash bit (hosts whose set of the host table was full) goes up before a host goes into
// the hash, stays through rebuilds while the hash holds hosts, and comes down once it is empty.
TEST(RuntimeFilter, TheHashBitHoldsThroughRebuildsUntilTheHashEmpties) {
  Lab lab;
  ASSERT_NO_FATAL_FAILURE(lab.add(*Prefix::parse("2001:db8::7/128")));
  EXPECT_FALSE(lab.words[0] & rl_rtf_hash_bit(1));
  lab.filter.hash_in_use(1);
  EXPECT_TRUE(lab.words[0] & rl_rtf_hash_bit(1));
  EXPECT_FALSE(lab.words[0] & rl_rtf_hash_bit(0)) << "one family's";
  EXPECT_TRUE(lab.filter.hash_may_hold(1));
  ASSERT_NO_FATAL_FAILURE(lab.add(*Prefix::parse("2001:db8::/32")));  // a shorter one: a rebuild
  EXPECT_TRUE(lab.words[0] & rl_rtf_hash_bit(1)) << "kept across the rebuild";
  lab.filter.hash_emptied(1);
  EXPECT_FALSE(lab.words[0] & rl_rtf_hash_bit(1));
  EXPECT_FALSE(lab.filter.hash_may_hold(1));
  ASSERT_TRUE(lab.filter.rebuild({*Prefix::parse("2001:db8::/32")}).ok());
  EXPECT_FALSE(lab.words[0] & rl_rtf_hash_bit(1)) << "and not brought back by one";
}

}  // namespace
}  // namespace rl::testing
