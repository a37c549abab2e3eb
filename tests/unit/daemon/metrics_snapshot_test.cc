// SPDX-License-Identifier: GPL-2.0-only
// A metrics scrape over the in-memory data path: the counters of the rules the data path holds,
// each stacked limit under its name in the policy, the runtime lists counted by kind, and the
// cluster sync's figures only when cluster limits are on.
#include "daemon/metrics_snapshot.h"

#include <gtest/gtest.h>

#include "builders.h"
#include "fake_datapath.h"

namespace rl::daemon {
namespace {

using testing::FakeDatapath;

// "web" drops, per source and per /24; "dns" only monitors, with one limit.
policy::Policy web_and_dns() {
  policy::Rule web = testing::token_bucket("web", 100, 100);
  web.limit_name = "per-source";
  policy::StackedLimit per24;
  per24.name = "per-24";
  per24.limit = testing::token_bucket("", 1000, 1000).limit;
  per24.key = policy::KeyKind::kSourcePrefix;
  web.more.push_back(per24);
  policy::Rule dns = testing::token_bucket("dns", 10, 10);
  dns.action = policy::Action::kMonitor;
  policy::Policy p;
  p.rules = {web, dns};
  return p;
}

class MetricsSnapshot : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(policies_.apply(web_and_dns(), "test").ok);
    ASSERT_EQ(dp_.applied.back().names, (std::vector<std::string>{"web", "dns"}));
    web_ = dp_.applied.back().rules[0].stats_slot;
    dns_ = dp_.applied.back().rules[1].stats_slot;
  }
  Result<metrics::Snapshot> scrape(const StatusModel& status = {},
                                   const std::optional<ClusterStats>& cluster = std::nullopt) {
    return metrics_snapshot(
        dp_, dp_, dp_,
        [this] {
          rules_asked_++;
          return policies_.rules();
        },
        status, cluster);
  }

  FakeDatapath dp_;
  PolicyManager policies_{dp_, "/nonexistent", {}, {}};
  uint32_t web_ = 0, dns_ = 0;
  int rules_asked_ = 0;
};

TEST_F(MetricsSnapshot, CountersOfTheRulesInForceWithTheirLimitsByName) {
  dp_.global[0] = {3, 300};
  dp_.global[RL_GC_CLUSTER_LIMITED] = {5, 500};
  dp_.global[RL_GC_MAX - 1] = {9, 900};
  dp_.rules[web_].matched_pkts = 1000;
  dp_.rules[web_].dropped_pkts = 250;
  dp_.rules[dns_].matched_pkts = 40;
  dp_.limits[web_][0] = {200, 20'000};
  dp_.limits[web_][1] = {50, 5'000};

  auto s = scrape();
  ASSERT_TRUE(s) << s.error().str();
  EXPECT_EQ(s->global[0].pkts, 3u);
  EXPECT_EQ(s->global[RL_GC_CLUSTER_LIMITED].bytes, 500u);
  EXPECT_EQ(s->global[RL_GC_MAX - 1].bytes, 900u) << "every global counter, the last included";
  ASSERT_EQ(s->rules.size(), 2u);
  EXPECT_EQ(s->rules[0].name, "web");
  EXPECT_EQ(s->rules[0].action, "drop");
  EXPECT_EQ(s->rules[0].counters.matched_pkts, 1000u);
  EXPECT_EQ(s->rules[0].counters.dropped_pkts, 250u);
  ASSERT_EQ(s->rules[0].limits.size(), 2u);
  EXPECT_EQ(s->rules[0].limits[0].first, "per-source");
  EXPECT_EQ(s->rules[0].limits[0].second.pkts, 200u);
  EXPECT_EQ(s->rules[0].limits[1].first, "per-24");
  EXPECT_EQ(s->rules[0].limits[1].second.bytes, 5'000u);
  EXPECT_EQ(s->rules[1].name, "dns");
  EXPECT_EQ(s->rules[1].action, "monitor");
  EXPECT_EQ(s->rules[1].counters.matched_pkts, 40u);
  EXPECT_TRUE(s->rules[1].limits.empty()) << "one limit: the rule's counters tell it all";
  EXPECT_EQ(rules_asked_, 1) << "the policy's rules, copied once per scrape at most";
}

TEST_F(MetricsSnapshot, StatusRuntimeListsAndCluster) {
  dp_.runtime = {{*Prefix::parse("198.18.0.0/24"), RL_SRC_F_ALLOW, 0},
                 {*Prefix::parse("2001:db8::/32"), RL_SRC_F_ALLOW, 0},
                 {*Prefix::parse("198.18.9.9/32"), RL_SRC_F_DENY, 0}};
  StatusModel status;
  status.reloads_ok = 4;
  status.reloads_failed = 1;
  status.interfaces = {{"eth0", "native"}};
  status.keys_capacity = 1024;

  auto off = scrape(status);
  ASSERT_TRUE(off) << off.error().str();
  EXPECT_EQ(off->runtime_allow_entries, 2u);
  EXPECT_EQ(off->runtime_deny_entries, 1u);
  EXPECT_EQ(off->reloads_ok, 4u);
  EXPECT_EQ(off->reloads_failed, 1u);
  ASSERT_EQ(off->interfaces.size(), 1u);
  EXPECT_EQ(off->interfaces[0].mode, "native");
  EXPECT_EQ(off->keys_capacity, 1024u);
  EXPECT_FALSE(off->cluster.enabled);

  ClusterStats st;
  st.redis_up = true;
  st.syncs = 12;
  st.pending_keys = 5;
  st.errors["timeout"] = 2;
  st.peers = {{"node-a", 1}, {"node-b", 2}};
  st.rtt_buckets = {1, 3};  // the sync had seen round trips under the first two bounds only
  st.rtt_count = 3;
  auto on = scrape(status, st);
  ASSERT_TRUE(on) << on.error().str();
  EXPECT_TRUE(on->cluster.enabled);
  EXPECT_TRUE(on->cluster.redis_up);
  EXPECT_EQ(on->cluster.syncs, 12u);
  EXPECT_EQ(on->cluster.pending_keys, 5u);
  EXPECT_EQ(on->cluster.peers, 2u);
  EXPECT_EQ(on->cluster.errors.at("timeout"), 2u);
  ASSERT_EQ(on->cluster.rtt_bounds.size(), std::size(ClusterSync::kRttBuckets));
  ASSERT_EQ(on->cluster.rtt_buckets.size(), on->cluster.rtt_bounds.size()) << "one per bound";
  EXPECT_EQ(on->cluster.rtt_buckets[1], 3u);
  EXPECT_EQ(on->cluster.rtt_buckets.back(), 0u);
}

}  // namespace
}  // namespace rl::daemon
