// SPDX-License-Identifier: GPL-2.0-only
// The offender log alone: reports as the ring hands them over, the names it gives them and the
// table `rlctl top` reads.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>

#include "daemon/offenders/offenders.h"

namespace rl::daemon {
namespace {

rl_event report(uint32_t rule_id, const char* v4, uint64_t hash,
                uint8_t key_kind = RL_KEY_SRC_ADDR) {
  rl_event ev{};
  ev.kind = RL_EVENT_OVER_LIMIT;
  ev.rule_id = rule_id;
  ev.key_hash = hash;
  ev.family = 4;
  ev.key_kind = key_kind;
  inet_pton(AF_INET, v4, &ev.addr[0]);
  return ev;
}

TEST(OffenderLog, ACallForAnEarlySyncIsNoOffender) {
  int syncs = 0;
  OffenderLog log(
      -1, [](uint32_t) { return RuleRef{"r"}; }, [](uint64_t) { return 0; });
  log.on_cluster_sync([&] { syncs++; });
  rl_event ev{};
  ev.kind = RL_EVENT_CLUSTER_SYNC;
  log.handle(ev);
  EXPECT_EQ(syncs, 1);
  EXPECT_TRUE(log.top(10, "", std::chrono::seconds(60)).empty());
}

TEST(OffenderLog, ARuleNotYetInForceIsAskedAgain) {
  std::map<uint32_t, RuleRef> in_force;
  int asked = 0;
  OffenderLog log(
      -1,
      [&](uint32_t id) {
        asked++;
        auto it = in_force.find(id);
        return it == in_force.end() ? RuleRef{} : it->second;
      },
      [](uint64_t) { return 1; });
  log.handle(report(7, "198.18.0.1", 1));
  auto before = log.top(10, "", std::chrono::seconds(60));
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].rule, "") << "an adopted rule set may not know its names yet";

  in_force[7] = RuleRef{"web", 32, 128};
  auto after = log.top(10, "web", std::chrono::seconds(60));
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].rule, "web");
  int asked_once_known = asked;
  log.handle(report(7, "198.18.0.2", 2));
  log.top(10, "web", std::chrono::seconds(60));
  EXPECT_EQ(asked, asked_once_known) << "a known name is kept: rule ids are never reused";
}

TEST(OffenderLog, TopRanksByDropsAndShowsPrefixKeysMasked) {
  std::map<uint64_t, uint64_t> drops{{1, 10}, {2, 700}, {3, 40}};
  OffenderLog log(
      -1,
      [](uint32_t id) {
        return id == 1 ? RuleRef{"per-source"} : RuleRef{"per-24", 24, 64};
      },
      [&](uint64_t h) { return drops[h]; });
  log.handle(report(1, "198.18.0.1", 1));
  log.handle(report(2, "198.18.5.0", 2, RL_KEY_SRC_PREFIX));
  log.handle(report(1, "198.18.0.3", 3));

  auto top = log.top(2, "", std::chrono::seconds(60));
  ASSERT_EQ(top.size(), 2u) << "n caps the list";
  EXPECT_EQ(top[0].key, "198.18.5.0/24");
  EXPECT_EQ(top[0].drops, 700u);
  EXPECT_EQ(top[1].key, "198.18.0.3");
  EXPECT_EQ(log.top(10, "per-source", std::chrono::seconds(60)).size(), 2u);
}

TEST(OffenderLog, TheTableKeepsItsCapacityUnderNewKeys) {
  OffenderLog log(
      -1, [](uint32_t) { return RuleRef{"r"}; }, [](uint64_t) { return 1; },
      /*max_log_lines_per_second=*/0, /*capacity=*/8);
  for (uint64_t i = 1; i <= 100; i++) log.handle(report(1, "198.18.0.1", i));
  auto top = log.top(1000, "", std::chrono::seconds(60));
  EXPECT_EQ(top.size(), 8u) << "the least recently seen keys make room";
}

}  // namespace
}  // namespace rl::daemon
