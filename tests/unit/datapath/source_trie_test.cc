// SPDX-License-Identifier: GPL-2.0-only
// The source tries' update steps (datapath/source_trie.h) against a model of the kernel's trie:
// after every single write of every step, each address of a small space gets, in each
// generation packets may read, the answer of the rule set that generation holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "datapath/source_trie.h"

namespace rl {
namespace {

using Entries = std::vector<compiler::SourceEntry>;

Prefix v4(uint32_t addr, uint8_t len) {
  Address a;
  a.family = 4;
  for (int i = 0; i < 4; i++) a.bytes[i] = static_cast<uint8_t>(addr >> (24 - 8 * i));
  return Prefix::of(a, len);
}

// The kernel's trie as a model: the longest prefix covering an address answers.
struct Trie {
  std::map<Prefix, rl_src_pair> entries;

  std::optional<rl_src_entry> lookup(const Address& a, uint32_t gen) const {
    const rl_src_pair* best = nullptr;
    int len = -1;
    for (const auto& [p, v] : entries)
      if (p.contains(a) && p.len > len) {
        best = &v;
        len = p.len;
      }
    if (!best) return std::nullopt;
    return best->gen[gen];
  }
};

rl_src_entry answer(const Entries& set, const Address& a) {
  rl_src_entry best{};
  int len = -1;
  for (const auto& e : set)
    if (e.prefix.contains(a) && e.prefix.len > len) {
      best = e.value;
      len = e.prefix.len;
    }
  return best;
}

bool same(const rl_src_entry& x, const rl_src_entry& y) {
  return x.class_id == y.class_id && x.flags == y.flags;
}

// Prefixes of 10.0.0.0/26 (and the /0), the addresses being the 64 of it.
Entries random_set(std::mt19937& rng) {
  std::map<Prefix, rl_src_entry> m;
  m[v4(0, 0)] = {static_cast<uint32_t>(rng() % 3), 0};
  const int n = static_cast<int>(rng() % 12);
  for (int i = 0; i < n; i++) {
    uint8_t len = static_cast<uint8_t>(26 + rng() % 7);
    m[v4(0x0a000000u | (rng() % 64), len)] = {static_cast<uint32_t>(rng() % 4),
                                              static_cast<uint32_t>(rng() % 2)};
  }
  Entries out;
  for (const auto& [p, v] : m) out.push_back({p, v});
  return out;
}

class Checker {
 public:
  // `reads`: whether packets of the generation in force ask the trie (plan_source_trie).
  Checker(const Entries& before, const Entries& after, uint32_t next_gen, bool reads = true)
      : before_(before), after_(after), b_(next_gen & 1), reads_{reads, reads} {}

  // Every address answers as `set` in generation `gen`.
  void expect(const Trie& t, uint32_t gen, const Entries& set, const char* when) const {
    for (uint32_t host = 0; host < 64; host++) {
      Address a = v4(0x0a000000u | host, 32).addr;
      auto got = t.lookup(a, gen);
      ASSERT_TRUE(got.has_value()) << when;
      ASSERT_TRUE(same(*got, answer(set, a)))
          << when << ": " << a.str() << " in generation " << gen << " answers class "
          << got->class_id << ", not " << answer(set, a).class_id;
    }
  }

  void run(Trie& t) const {
    auto current = [&] {
      std::vector<SourceTrieEntry> c;
      for (const auto& [p, v] : t.entries) c.push_back({p, v});
      return c;
    }();
    SourceTriePlan plan = plan_source_trie(current, after_, b_, reads_);
    for (const auto& e : plan.before) {
      t.entries[e.prefix] = e.value;
      if (!before_.empty() && reads_[0])
        expect(t, b_ ^ 1, before_, "step 1, the generation in force");
    }
    if (!reads_[0]) {
      EXPECT_TRUE(plan.after.empty()) << "nothing to level";
    }
    expect(t, b_, after_, "step 1 done, the new generation");
    for (const auto& e : plan.after) {
      ASSERT_TRUE(t.entries.count(e.prefix));
      t.entries[e.prefix] = e.value;
      expect(t, b_, after_, "step 3, writes");
    }
    for (const auto& p : plan.remove) {
      ASSERT_TRUE(t.entries.erase(p));
      expect(t, b_, after_, "step 3, removals");
    }
    std::map<Prefix, rl_src_pair> settled;
    for (const auto& e : settled_source_trie(after_)) settled[e.prefix] = e.value;
    ASSERT_EQ(t.entries.size(), settled.size());
    for (const auto& [p, v] : settled) {
      ASSERT_TRUE(t.entries.count(p)) << p.str();
      EXPECT_TRUE(same(t.entries[p].gen[0], v.gen[0]) && same(t.entries[p].gen[1], v.gen[1]))
          << p.str();
    }
  }

 private:
  const Entries& before_;
  const Entries& after_;
  uint32_t b_;
  bool reads_[2];
};

TEST(SourceTrieTest, EveryWriteOfEveryStepLeavesBothGenerationsWhole) {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; round++) {
    Trie t;
    Entries set = random_set(rng);
    Checker(Entries{}, set, 1, rng() % 2).run(t);
    uint32_t gen = 1;
    for (int update = 0; update < 6 && !HasFatalFailure(); update++) {
      Entries next = random_set(rng);
      // Now and then the generation in force does not read the trie (no source entry of its own).
      Checker(set, next, gen ^ 1, rng() % 4 != 0).run(t);
      set = std::move(next);
      gen ^= 1;
    }
    ASSERT_FALSE(HasFatalFailure()) << "round " << round;
  }
}

TEST(SourceTrieTest, AChangeWritesOnlyWhatItTouches) {
  Entries set;
  set.push_back({v4(0, 0), {1, 0}});
  for (uint32_t i = 0; i < 1000; i++) set.push_back({v4(0x0a000000u + (i << 8), 24), {2, 0}});
  Entries next = set;
  next[500].value = {3, 0};                       // one entry answers otherwise
  next.erase(next.begin() + 900);                 // one goes
  next.push_back({v4(0x0a02bc80u, 25), {3, 0}});  // one comes
  std::sort(next.begin(), next.end(),
            [](const auto& x, const auto& y) { return x.prefix < y.prefix; });
  const bool reads[2] = {true, true};
  SourceTriePlan plan = plan_source_trie(settled_source_trie(set), next, 0, reads);
  EXPECT_EQ(plan.before.size(), 3u);
  EXPECT_EQ(plan.after.size(), 2u);
  EXPECT_EQ(plan.remove.size(), 1u);
  EXPECT_TRUE(plan_source_trie(settled_source_trie(next), next, 1, reads).before.empty());
  const bool fresh[2] = {false, false};
  SourceTriePlan first = plan_source_trie({}, next, 1, fresh);
  EXPECT_EQ(first.before.size(), next.size()) << "a first rule set: one write per entry";
  EXPECT_TRUE(first.after.empty());
}

}  // namespace
}  // namespace rl
