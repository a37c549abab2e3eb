// SPDX-License-Identifier: GPL-2.0-only
// The key table's growth (controller/datapath/key_sets.h) over a table in the test's memory,
// with packets modelled as the XDP program indexes (rl_set_index) and the kernel's grace period
// replaced by a function that plays the packets racing the split.
#include "datapath/key_sets.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "rl_hash.h"
#include "rl_layout.h"

namespace rl::testing {
namespace {

constexpr uint32_t kLowBits = 4;  // 16 sets at first (the product's tables start at 16,384)
constexpr uint32_t kCapacity = 256;

struct Table {
  std::vector<rl_set> sets = std::vector<rl_set>(kCapacity);
  std::vector<rl_set_summary> summary = std::vector<rl_set_summary>(rl_summary_lines(kCapacity));
  uint32_t active = 1u << kLowBits;

  uint32_t set_of(uint64_t h) const {
    return rl_set_index(rl_set_wide(rl_key_tag(h), h, kLowBits), active);
  }
  // A packet's insert: the key's set, a free way, its print in the summary.
  bool insert(uint64_t h, uint64_t state, uint32_t idle = 1) {
    return insert_in(set_of(h), h, state, idle);
  }
  bool insert_in(uint32_t set, uint64_t h, uint64_t state, uint32_t idle) {
    for (uint32_t w = 0; w < RL_WAYS; w++)
      if (sets[set].way[w].tag == RL_TAG_FREE) {
        summary[rl_summary_line(set)].print[rl_summary_row(set)][w] = rl_tag_print(rl_key_tag(h));
        sets[set].way[w] = rl_slot{rl_key_tag(h), idle, state};
        return true;
      }
    return false;
  }
  // A packet's lookup without insert: may the key be in its set, by the summary?
  bool summary_may_hold(uint64_t h) const {
    const uint32_t set = set_of(h);
    uint32_t prints;
    std::memcpy(&prints, summary[rl_summary_line(set)].print[rl_summary_row(set)], sizeof(prints));
    return rl_prints_match(prints, rl_tag_print(rl_key_tag(h)));
  }
  const rl_slot* find(uint64_t h) const {
    for (const auto& w : sets[set_of(h)].way)
      if (w.tag == rl_key_tag(h)) return &w;
    return nullptr;
  }
  rl_slot* find(uint64_t h) { return const_cast<rl_slot*>(std::as_const(*this).find(h)); }
  size_t keys() const {
    size_t n = 0;
    for (const auto& s : sets)
      for (const auto& w : s.way) n += w.tag != RL_TAG_FREE;
    return n;
  }
};

std::vector<uint64_t> hashes(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> out(n);
  for (auto& h : out) h = rng();
  return out;
}

TEST(KeySetsWanted, GrowsByDoublingsAboveOneKeyPerSet) {
  EXPECT_EQ(key_sets_wanted(0, 16384, 262144), 16384u);
  EXPECT_EQ(key_sets_wanted(16384, 16384, 262144), 16384u) << "one per set: not yet";
  EXPECT_EQ(key_sets_wanted(16385, 16384, 262144), 32768u);
  EXPECT_EQ(key_sets_wanted(131072, 16384, 262144), 131072u) << "doubled until one per set";
  EXPECT_EQ(key_sets_wanted(10'000'000, 16384, 262144), 262144u) << "never past the capacity";
  EXPECT_EQ(key_sets_wanted(0, 20000, 262144), 32768u) << "a doubling under way is finished";
  EXPECT_EQ(key_sets_wanted(0, 262144, 262144), 262144u);
}

TEST(KeySetGrowth, EveryKeyKeepsItsStateAcrossDoublings) {
  Table t;
  auto keys = hashes(300, 1);
  std::map<uint64_t, uint64_t> state;
  for (uint64_t h : keys)
    if (t.insert(h, h >> 8)) state[h] = h >> 8;
  ASSERT_GT(state.size(), 50u);
  int graces = 0;
  KeySetGrowth g(t.sets, t.summary, &t.active, kLowBits, [&] {
    graces++;
    return Status{};
  });
  // Chunks of 5 sets cross every doubling at an odd place.
  auto grown = g.grow_to(kCapacity, 5);
  ASSERT_TRUE(grown.ok()) << grown.error().str();
  EXPECT_EQ(*grown, kCapacity - 16);
  EXPECT_EQ(t.active, kCapacity);
  EXPECT_GE(graces, static_cast<int>((kCapacity - 16) / 5));
  for (const auto& [h, st] : state) {
    const rl_slot* s = t.find(h);
    ASSERT_NE(s, nullptr) << std::hex << h;
    EXPECT_EQ(s->state, st);
    EXPECT_TRUE(t.summary_may_hold(h)) << "a moved key's print is in its new set's summary";
  }
  EXPECT_EQ(t.keys(), state.size()) << "every original freed, nothing duplicated";
  // Up to the capacity there is nothing left to split.
  auto more = g.split(10);
  ASSERT_TRUE(more.ok());
  EXPECT_EQ(*more, 0u);
}

// What packets that read the old count do during the grace period: charge a moved key's
// original, block another, insert a key that belongs in the new set into the old one. None of
// it is lost.
TEST(KeySetGrowth, PacketsRacingASplitAreFoldedIn) {
  Table t;
  // Keys of set 0 at 16 sets: which ones move to set 16 depends on their tag's low bit.
  std::vector<uint64_t> in0, moving;
  for (uint64_t h : hashes(20000, 2)) {
    if (t.set_of(h) != 0) continue;
    bool moves = rl_set_wide(rl_key_tag(h), h, kLowBits) & 16;
    if (moves && moving.size() < 4) moving.push_back(h);
    if (!moves && in0.empty()) in0.push_back(h);
  }
  ASSERT_EQ(moving.size(), 4u);
  ASSERT_TRUE(t.insert(moving[0], 100));
  ASSERT_TRUE(t.insert(moving[1], 200));
  ASSERT_TRUE(t.insert(in0[0], 300));
  const uint64_t blocked = RL_STATE_BLOCKED | 5000;
  KeySetGrowth g(t.sets, t.summary, &t.active, kLowBits, [&] {
    // Published: a packet with the new count finds the copy in set 16 and charges it.
    EXPECT_EQ(t.active, 17u);
    rl_slot* copy = &t.sets[16].way[0];
    EXPECT_TRUE(copy->tag == rl_key_tag(moving[0]) || copy->tag == rl_key_tag(moving[1]));
    for (auto& w : t.sets[16].way)
      if (w.tag == rl_key_tag(moving[0])) w.state = 150;
    // Packets that read 16 act on set 0, where the originals still are.
    for (auto& w : t.sets[0].way) {
      if (w.tag == rl_key_tag(moving[0])) w.state = 120;  // less than the copy moved: kept 150
      if (w.tag == rl_key_tag(moving[1])) w.state = blocked;
    }
    EXPECT_TRUE(t.insert_in(0, moving[2], 400, 7));
    return Status{};
  });
  auto n = g.split(1);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1u);
  ASSERT_NE(t.find(moving[0]), nullptr);
  EXPECT_EQ(t.find(moving[0])->state, 150u);
  ASSERT_NE(t.find(moving[1]), nullptr);
  EXPECT_EQ(t.find(moving[1])->state, blocked) << "a block survives the move";
  ASSERT_NE(t.find(moving[2]), nullptr) << "inserted during the split: moved too";
  EXPECT_EQ(t.find(moving[2])->state, 400u);
  EXPECT_EQ(t.find(moving[2])->idle, 7u);
  EXPECT_EQ(t.set_of(moving[2]), 16u);
  for (int i = 0; i < 3; i++) EXPECT_TRUE(t.summary_may_hold(moving[i])) << i;
  ASSERT_NE(t.find(in0[0]), nullptr);
  EXPECT_EQ(t.find(in0[0])->state, 300u);
  EXPECT_EQ(t.keys(), 4u);
  for (const auto& w : t.sets[0].way) {
    EXPECT_TRUE(w.tag == RL_TAG_FREE || w.tag == rl_key_tag(in0[0]));
    // A packet takes a free way by one CAS of its tag, without resetting it: a freed original
    // (a block among them) must not leave its state to the next key.
    if (w.tag == RL_TAG_FREE) {
      EXPECT_EQ(w.state, 0u);
      EXPECT_EQ(w.idle, 0u);
    }
  }
}

// The summary rules out the keys a table does not hold, which is what it is for: of keys never
// inserted, only those whose print equals one of their set's (a byte in 256 per busy way) are
// not ruled out. A lookup never sees a false "absent": every inserted key's print is there.
TEST(KeySetSummary, RulesOutAbsentKeysAndNeverAPresentOne) {
  Table t;
  t.active = kCapacity;
  auto keys = hashes(kCapacity, 3);  // a quarter full: one key per set on average
  size_t inserted = 0;
  for (uint64_t h : keys) inserted += t.insert(h, 1);
  ASSERT_GT(inserted, kCapacity * 9 / 10);
  for (uint64_t h : keys) {
    if (!t.find(h)) continue;
    EXPECT_TRUE(t.summary_may_hold(h)) << std::hex << h;
  }
  size_t passed = 0;
  const auto absent = hashes(100000, 4);
  for (uint64_t h : absent) passed += t.summary_may_hold(h);
  // Expected: one busy way per set on average, each matching 1/256 of prints (0.4%); some of
  // the table's zero prints (free ways) match too.
  EXPECT_LT(passed, absent.size() * 2 / 100) << passed << " absent keys not ruled out";
}

TEST(RlPrintsMatch, FindsThePrintInAnyByte) {
  for (uint32_t w = 0; w < RL_WAYS; w++)
    for (uint32_t p : {0u, 1u, 0x7fu, 0x80u, 0xffu}) {
      uint32_t prints = 0x5a5a5a5aU & ~(0xffU << (8 * w));
      prints |= p << (8 * w);
      EXPECT_TRUE(rl_prints_match(prints, static_cast<uint8_t>(p))) << w << " " << p;
    }
  EXPECT_FALSE(rl_prints_match(0x01020304U, 0x05));
  EXPECT_FALSE(rl_prints_match(0xffffffffU, 0xfe));
  EXPECT_FALSE(rl_prints_match(0x00000000U, 0x01));
  EXPECT_FALSE(rl_prints_match(0x80808080U, 0x00)) << "no borrow makes a false match";
}

TEST(KeySetGrowth, AFailedGracePeriodIsAnError) {
  Table t;
  KeySetGrowth g(t.sets, t.summary, &t.active, kLowBits, [] {
    return Status(Error{EINVAL, "no RCU"});
  });
  auto n = g.split(4);
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.error().str().find("no RCU"), std::string::npos);
}

}  // namespace
}  // namespace rl::testing
