// SPDX-License-Identifier: GPL-2.0-only
// Stacked limits against their formulas with the controlled clock: every limit must admit a
// packet, and a packet one limit refuses costs the others nothing.
#include <algorithm>

#include "fixture.h"
#include "rl_layout.h"

namespace rl::testing {
namespace {

class StackedTest : public BpfTest {
 protected:
  void at(uint64_t ns) { hooks().set_clock(kT0 + ns); }

  static policy::StackedLimit stacked(const std::string& name, uint64_t rate, uint64_t burst,
                                      policy::KeyKind key) {
    policy::StackedLimit l;
    l.name = name;
    l.limit.rate = per_second(rate);
    l.limit.burst = burst;
    l.key = key;
    return l;
  }

  std::array<rl_counter, RL_MAX_LIMITS> refused(const std::string& rule) {
    auto c = dp_->limit_counters(ids_.by_name.at(rule).stats_slot);
    EXPECT_TRUE(c.ok());
    return c.ok() ? *c : std::array<rl_counter, RL_MAX_LIMITS>{};
  }
};

// A per-source limit and a per-/24 limit on one rule: each source keeps to its own, and the /24
// together keeps to the other.
TEST_F(StackedTest, PerSourceAndPerPrefixBothHold) {
  policy::Policy p;
  auto r = token_bucket("web", 10, 5);
  r.limit_name = "source";
  auto per24 = stacked("per-24", 1, 8, policy::KeyKind::kSourcePrefix);
  per24.v4_prefix = 24;
  r.more = {per24};
  p.rules = {r};
  apply(p);
  EXPECT_EQ(passed(udp4("198.18.1.1"), 10), 5) << "its own burst";
  auto d = send(udp4("198.18.1.1"));
  EXPECT_EQ(d.limit, 0u) << "refused by its own limit";
  EXPECT_EQ(passed(udp4("198.18.1.2"), 10), 3) << "what is left of the /24's 8";
  d = send(udp4("198.18.1.3"));
  EXPECT_EQ(d.reason, RL_REASON_LIMITED);
  EXPECT_EQ(d.limit, 1u) << "refused by the /24 limit";
  EXPECT_EQ(passed(udp4("198.18.2.1"), 10), 5) << "another /24 has a bucket of its own";
  auto by = refused("web");
  EXPECT_EQ(by[0].pkts, 5u + 1 + 5);
  EXPECT_EQ(by[1].pkts, 7u + 1);
  EXPECT_EQ(counters("web").dropped_pkts, by[0].pkts + by[1].pkts);
}

// A packet that the second limit refuses gives the first its token back.
TEST_F(StackedTest, RefusedPacketsCostTheOtherLimitsNothing) {
  policy::Policy p;
  auto r = token_bucket("guarded", 1, 5);                       // per source: 5, then 1/s
  r.more = {stacked("total", 100, 3, policy::KeyKind::kRule)};  // all sources: 3, then 100/s
  p.rules = {r};
  apply(p);
  auto f = udp4("198.18.0.1");
  EXPECT_EQ(passed(f, 10), 3);
  at(30'000'000);  // the total refilled 3; the source's own bucket has 2 left, not 0
  EXPECT_EQ(passed(f, 10), 2);
  auto by = refused("guarded");
  EXPECT_EQ(by[1].pkts, 7u);
  EXPECT_EQ(by[0].pkts, 8u);
}

// The refund finds the key in the table itself, not through the summary: a key another CPU has
// just inserted is in its set before its print is in the summary (rl_way_take).
TEST_F(StackedTest, TheRefundFindsAKeyTheSummaryDoesNotShowYet) {
  policy::Policy p;
  auto r = token_bucket("guarded", 1, 5);
  r.more = {stacked("total", 100, 3, policy::KeyKind::kRule)};
  p.rules = {r};
  apply(p);
  auto f = udp4("198.18.0.1");
  EXPECT_EQ(passed(f, 3), 3);
  auto* summary = const_cast<rl_set_summary*>(dp_->key_summary());
  std::fill_n(reinterpret_cast<uint8_t*>(summary),
              sizeof(rl_set_summary) * rl_summary_line(dp_->key_sets_active()), 0);
  EXPECT_EQ(send(f).limit, 1u) << "refused by the total";
  at(30'000'000);  // the total refilled 3; the source's own bucket has 2 left
  EXPECT_EQ(passed(f, 10), 2);
}

// Windows give back too: the source's fixed window counts only what passed.
TEST_F(StackedTest, WindowsGiveBack) {
  policy::Policy p;
  auto r = window("win", policy::Algorithm::kFixedWindow, 4, kSec);  // per source: 4 per second
  auto total = stacked("total", 0, 0, policy::KeyKind::kRule);
  total.limit = {policy::Algorithm::kFixedWindow, {3, kSec / 10, policy::Unit::kPackets}, 0};
  r.more = {total};
  p.rules = {r};
  apply(p);
  auto a = udp4("198.18.0.1");
  EXPECT_EQ(passed(a, 5), 3) << "the total's 3 per 100 ms";
  at(kSec / 10);  // a new window for the total, the same second for the source
  EXPECT_EQ(passed(a, 5), 1) << "the source counted 3 of its 4, not 4";
}

// A block belongs to the limit that was exceeded: the total is blocked, not the source's own key.
TEST_F(StackedTest, BlocksStayWithTheirLimit) {
  policy::Policy p;
  auto r = token_bucket("blk", 10, 5);
  r.more = {stacked("total", 1, 2, policy::KeyKind::kRule)};
  r.block_ns = 10 * kSec;
  p.rules = {r};
  apply(p);
  auto a = udp4("198.18.0.1");
  EXPECT_EQ(passed(a, 2), 2);
  auto d = send(a);
  EXPECT_EQ(d.reason, RL_REASON_LIMITED);
  EXPECT_EQ(d.limit, 1u);
  d = send(udp4("198.18.0.2"));
  EXPECT_EQ(d.reason, RL_REASON_BLOCKED) << "every source meets the blocked total";
  EXPECT_EQ(d.limit, 1u);
  at(10 * kSec + 1);
  EXPECT_EQ(passed(a, 10), 2) << "the total starts fresh; the source was never blocked";
}

}  // namespace
}  // namespace rl::testing
