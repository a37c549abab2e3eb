// SPDX-License-Identifier: GPL-2.0-only
// New-source budgets: what a flood of never-repeating sources gets past a per-source rule, against
// the formula (budget burst + rate, plus the rule's own limit on the shared key), with the
// controlled clock; and what a known source keeps meanwhile.
#include <arpa/inet.h>

#include <algorithm>
#include <iterator>
#include <map>

#include "fixture.h"
#include "rl_hash.h"
#include "rl_key.h"
#include "rl_layout.h"

namespace rl::testing {
namespace {

// 198.18.0.0/15, the i-th address (i < 131,072).
std::string spoofed4(uint32_t i) {
  return "198." + std::to_string(18 + i / 65536) + "." + std::to_string(i / 256 % 256) + "." +
         std::to_string(i % 256);
}

class NewSourcesTest : public BpfTest {
 protected:
  void at(uint64_t ns) { hooks().set_clock(kT0 + ns); }

  // The compiled rule of a policy of one rule, into *out (fatal if there is not exactly one).
  void only_rule(rl_rule* out) {
    auto rules = dp_->active_rules();
    ASSERT_TRUE(rules.ok() && rules->size() == 1u);
    *out = rules->front().second;
  }

  // One packet from each of n sources that were never seen, spoofed4(first) onwards; returns
  // how many passed.
  int flood(uint32_t first, uint32_t n) {
    int ok = 0;
    for (uint32_t i = first; i < first + n; i++) {
      auto d = send(udp4(spoofed4(i)));
      ok += d.verdict == XDP_PASS;
    }
    return ok;
  }
};

// Each admitted new source passes its first packet; the rest share the rule's own bucket.
TEST_F(NewSourcesTest, BudgetBoundsAFloodOfDistinctSources) {
  policy::Policy p;
  p.rules = {budgeted(1, 1, 10, 20)};  // 1/s burst 1 per source; 10 new sources/s, burst 20
  apply(p);
  EXPECT_EQ(flood(0, 1000), 20 + 1) << "the budget's burst, plus the shared bucket's burst";
  EXPECT_EQ(global(RL_GC_NEW_UNADMITTED), 980u);
  auto d = send(udp4("198.18.200.1"));
  EXPECT_EQ(d.unadmitted, 1u);
  EXPECT_EQ(d.reason, RL_REASON_LIMITED);

  at(kSec / 2);  // 5 budget tokens back; the shared 1/s bucket is still empty
  EXPECT_EQ(flood(1000, 1000), 5);
  at(kSec);  // 5 more tokens, and the shared bucket has one packet again
  EXPECT_EQ(flood(2000, 1000), 5 + 1);
  auto c = counters("guarded");
  EXPECT_EQ(c.passed_pkts, 21u + 5 + 6);
  EXPECT_EQ(c.dropped_pkts, 3001u - c.passed_pkts);
}

// A source known before the flood is judged by its own bucket throughout.
TEST_F(NewSourcesTest, KnownSourcesKeepTheirOwnRate) {
  policy::Policy p;
  p.rules = {budgeted(10, 5, 1, 1)};
  apply(p);
  auto known = udp4("192.0.2.7");
  EXPECT_EQ(send(known).reason, RL_REASON_ADMITTED);  // takes the budget's only token
  EXPECT_EQ(flood(0, 500), 5) << "unadmitted sources share one 10/s burst 5 bucket";
  EXPECT_EQ(passed(known, 10), 4) << "the rest of its own burst of 5";
  at(kSec);
  EXPECT_EQ(flood(500, 500), 1 + 5) << "one budget token, the shared bucket full again";
  EXPECT_EQ(passed(known, 20), 5) << "its own burst, full again";
  EXPECT_EQ(send(known).unadmitted, 0u);
}

// With key: source_prefix every /24 has its own budget and its own shared bucket.
TEST_F(NewSourcesTest, PerPrefixBudgets) {
  policy::Policy p;
  auto r = budgeted(1, 1, 1, 2);
  r.new_sources->key = policy::KeyKind::kSourcePrefix;
  r.new_sources->v4_prefix = 24;
  p.rules = {r};
  apply(p);
  EXPECT_EQ(flood(0, 100), 2 + 1) << "198.18.0.0/24: its budget's 2, its shared bucket's 1";
  EXPECT_EQ(flood(256, 100), 2 + 1) << "198.18.1.0/24 is not affected by the first /24";
  EXPECT_EQ(flood(512 + 200, 10), 2 + 1);
}

// An unadmitted flood is reported as its shared key, not once per source.
TEST_F(NewSourcesTest, UnadmittedSourcesReportAsOneKey) {
  policy::Policy p;
  p.rules = {budgeted(1, 1, 1, 1)};
  apply(p);
  flood(0, 2000);
  EXPECT_EQ(global(RL_GC_REPORTS), 1u);
}

// Reports from all keys together stop at the cap, whatever the number of keys over their limit.
TEST_F(NewSourcesTest, ReportsAreCappedAcrossKeys) {
  policy::Policy p;
  p.rules = {token_bucket("plain", 1, 1)};
  apply(p);
  for (uint32_t i = 0; i < 2000; i++) {
    auto f = udp4(spoofed4(i));
    send(f);
    send(f);  // over the limit: due a report
  }
  EXPECT_EQ(global(RL_GC_REPORTS), uint64_t{RL_REPORTS_PER_SEC});
  // Keys sharing an rl_offenders slot suppress each other before the cap is asked.
  EXPECT_GT(global(RL_GC_REPORTS_SHED), 900u);
  EXPECT_LE(global(RL_GC_REPORTS) + global(RL_GC_REPORTS_SHED), 2000u);
  at(kSec / 10);  // a tenth of the cap is back
  for (uint32_t i = 3000; i < 3500; i++) {
    auto f = udp4(spoofed4(i));
    send(f);
    send(f);
  }
  EXPECT_EQ(global(RL_GC_REPORTS), uint64_t{RL_REPORTS_PER_SEC} * 11 / 10);
}

// The set packets look for a source's key in: the key as rl_key_fill builds it for rule r,
// hashed with the table's seed.
uint32_t set_of_source(const BpfDatapath& dp, const rl_rule& r, const std::string& src) {
  __u32 saddr[4] = {}, daddr[4] = {};
  EXPECT_EQ(inet_pton(AF_INET, src.c_str(), saddr), 1);
  rl_key k{};
  rl_key_fill(&k, &r, 4, saddr, daddr, 53, 1);
  const uint64_t h = dp.key_hash(k);
  return rl_set_index(rl_set_wide(rl_key_tag(h), h, rl_set_low_bits(dp.key_sets())),
                      dp.key_sets_active());
}

// Every key in the sets packets use has its print in the summary: a lookup that asks the summary
// first never misses a key the table holds.
void expect_summary_holds_every_key(const BpfDatapath& dp) {
  const rl_set* sets = dp.key_table();
  const rl_set_summary* summary = dp.key_summary();
  size_t keys = 0;
  for (uint32_t s = 0; s < dp.key_sets_active(); s++)
    for (uint32_t w = 0; w < RL_WAYS; w++) {
      const uint32_t tag = sets[s].way[w].tag;
      if (tag == RL_TAG_FREE || tag == RL_TAG_CLAIMING) continue;
      keys++;
      ASSERT_EQ(summary[rl_summary_line(s)].print[rl_summary_row(s)][w], rl_tag_print(tag))
          << "set " << s << " way " << w;
    }
  EXPECT_GT(keys, 0u);
}

// A new source whose set has no free way learns it only when it claims one, after the summary
// let it take a token: the token goes back, so the budget grants exactly its burst to sources
// that got a slot.
TEST_F(NewSourcesTest, ATokenTakenForAFullSetGoesBack) {
  policy::Policy p;
  p.rules = {budgeted(1, 1, 1, 10)};  // 10 new sources at once, then 1 a second
  apply(p);
  rl_rule rule{};
  ASSERT_NO_FATAL_FAILURE(only_rule(&rule));
  std::map<uint32_t, std::vector<uint32_t>> by_set;
  uint32_t full_set = 0;
  for (uint32_t i = 0; i < 131072; i++) {
    const uint32_t set = set_of_source(*dp_, rule, spoofed4(i));
    auto& v = by_set[set];
    v.push_back(i);
    if (v.size() == RL_WAYS + 1) {
      full_set = set;
      break;
    }
  }
  const auto& same = by_set[full_set];
  ASSERT_EQ(same.size(), RL_WAYS + 1u);
  for (uint32_t w = 0; w < RL_WAYS; w++)
    EXPECT_EQ(send(udp4(spoofed4(same[w]))).unadmitted, 0u) << "a token and a way each";
  const uint32_t resets = dp_->key_resets();
  auto d = send(udp4(spoofed4(same[RL_WAYS])));
  EXPECT_EQ(d.unadmitted, 1u) << "no way left in its set";
  EXPECT_EQ(dp_->key_resets(), resets + 1) << "the budget's word went down: the CPUs' memos learn";
  EXPECT_EQ(d.reason, RL_REASON_ADMITTED) << "the shared bucket's one packet";
  // Six tokens left: the fifth source's came back.
  int admitted = 0;
  for (uint32_t i = 131071, n = 0; n < 7; i--) {
    if (set_of_source(*dp_, rule, spoofed4(i)) == full_set) continue;
    admitted += send(udp4(spoofed4(i))).unadmitted == 0;
    n++;
  }
  EXPECT_EQ(admitted, 6);
  expect_summary_holds_every_key(*dp_);
}

// A key another CPU has just inserted may not have its print in the summary yet (rl_way_take
// writes the tag first). Its packet then takes a budget token before it finds the key: the token
// goes back, because it let no new key in.
TEST_F(NewSourcesTest, ATokenForAKeyAlreadyInTheTableGoesBack) {
  policy::Policy p;
  p.rules = {budgeted(1, 1000, 1, 2)};  // two new sources at once; each may send 1000
  apply(p);
  rl_rule rule{};
  ASSERT_NO_FATAL_FAILURE(only_rule(&rule));
  const uint32_t set = set_of_source(*dp_, rule, spoofed4(0));
  ASSERT_EQ(send(udp4(spoofed4(0))).unadmitted, 0u);
  // The moment before the inserting CPU's print store, as a second CPU sees it.
  auto* line = const_cast<rl_set_summary*>(dp_->key_summary()) + rl_summary_line(set);
  std::fill(std::begin(line->print[rl_summary_row(set)]),
            std::end(line->print[rl_summary_row(set)]), 0);
  auto d = send(udp4(spoofed4(0)));
  EXPECT_EQ(d.unadmitted, 0u) << "judged on its own key";
  EXPECT_EQ(d.reason, RL_REASON_ADMITTED);
  EXPECT_EQ(send(udp4(spoofed4(1))).unadmitted, 0u) << "the budget's second token is still there";
  EXPECT_EQ(send(udp4(spoofed4(2))).unadmitted, 1u) << "and there were two";
}

// A packet takes a free way by one CAS of its tag, without resetting its state, which rld
// zeroes when it frees a way. A way freed with a state left in it (as an older rld left them)
// is cleared by the key that takes it: a block left there does not block the new key.
TEST_F(NewSourcesTest, AFreeWaysLeftoverStateIsNotTheNextKeys) {
  policy::Policy p;
  p.rules = {token_bucket("plain", 1, 1)};
  apply(p);
  rl_rule rule{};
  ASSERT_NO_FATAL_FAILURE(only_rule(&rule));
  const uint32_t set = set_of_source(*dp_, rule, spoofed4(7));
  auto& ways = const_cast<rl_set*>(dp_->key_table())[set].way;
  for (auto& w : ways) {
    ASSERT_EQ(w.tag, RL_TAG_FREE);
    w.state = RL_STATE_BLOCKED | (kT0 + 3600 * kSec);
    w.idle = 1;
  }
  auto d = send(udp4(spoofed4(7)));
  EXPECT_EQ(d.verdict, XDP_PASS) << "a new key starts with a full bucket";
  EXPECT_EQ(d.reason, RL_REASON_ADMITTED);
  EXPECT_EQ(send(udp4(spoofed4(7))).reason, RL_REASON_LIMITED) << "and its own limit holds";
  int taken = 0;
  for (const auto& w : ways) {
    if (w.tag == RL_TAG_FREE) continue;
    taken++;
    EXPECT_FALSE(w.state & RL_STATE_BLOCKED);
  }
  EXPECT_EQ(taken, 1);
}

// The summary follows the keys when rld splits sets to grow the table: the copies get their
// prints before packets can look for them in their new sets.
class SummaryGrowthTest : public NewSourcesTest {
 protected:
  void options(LoadOptions& o) override { o.key_capacity = 1 << 18; }
};

TEST_F(SummaryGrowthTest, EveryKeyKeepsItsPrintAcrossSplits) {
  policy::Policy p;
  p.rules = {budgeted(1, 1, 1, 20000)};
  apply(p);
  std::vector<uint32_t> known;  // the sources that got a slot (a few find their set full)
  for (uint32_t i = 0; i < 20000; i++)
    if (send(udp4(spoofed4(i))).unadmitted == 0) known.push_back(i);
  EXPECT_GT(known.size(), 19000u);
  expect_summary_holds_every_key(*dp_);
  auto grown = dp_->grow_key_table(1 << 16);  // four times the sets: two doublings
  ASSERT_TRUE(grown.ok()) << grown.error().str();
  EXPECT_EQ(dp_->key_sets_active(), 1u << 16);
  expect_summary_holds_every_key(*dp_);
  // Every source is still known: its second packet meets its own bucket (1/s burst 1, spent),
  // not the shared one.
  for (uint32_t i : known) {
    auto d = send(udp4(spoofed4(i)));
    ASSERT_EQ(d.unadmitted, 0u) << spoofed4(i);
    ASSERT_EQ(d.reason, RL_REASON_LIMITED) << spoofed4(i);
  }
}

}  // namespace
}  // namespace rl::testing
