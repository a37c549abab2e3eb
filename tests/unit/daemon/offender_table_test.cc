// SPDX-License-Identifier: GPL-2.0-only
// The offender table stays within its capacity, forgets the least recently seen offender first,
// and costs the same per report however many offenders a flood has reported.
#include "daemon/offenders/offender_table.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

namespace rl::daemon {
namespace {

OffenderEntry entry(uint32_t rule, uint64_t hash, int64_t at = 0) {
  OffenderEntry e;
  e.rule_id = rule;
  e.key_hash = hash;
  e.last_seen_ns = at;
  e.addr[0] = static_cast<uint32_t>(hash);
  return e;
}

std::vector<uint64_t> recent_hashes(const OffenderTable& t) {
  std::vector<uint64_t> out;
  t.for_each_recent([&](const OffenderEntry& e) {
    out.push_back(e.key_hash);
    return true;
  });
  return out;
}

TEST(OffenderTable, EvictsTheLeastRecentlySeen) {
  OffenderTable t(4);
  for (uint64_t h = 1; h <= 4; h++) t.record(entry(1, h));
  EXPECT_EQ(recent_hashes(t), (std::vector<uint64_t>{4, 3, 2, 1}));
  t.record(entry(1, 1));  // seen again: now the most recent
  t.record(entry(1, 5));  // full: 2 is the least recently seen
  EXPECT_EQ(t.size(), 4u);
  EXPECT_EQ(recent_hashes(t), (std::vector<uint64_t>{5, 1, 4, 3}));
  EXPECT_EQ(t.find(1, 2), nullptr);
  ASSERT_NE(t.find(1, 1), nullptr);
  EXPECT_EQ(t.find(2, 1), nullptr) << "the rule is part of the key";
}

TEST(OffenderTable, ARefreshUpdatesTheEntry) {
  OffenderTable t(8);
  t.record(entry(3, 42, 100));
  OffenderEntry e = entry(3, 42, 200);
  e.blocked = true;
  t.record(e);
  EXPECT_EQ(t.size(), 1u);
  const OffenderEntry* got = t.find(3, 42);
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->last_seen_ns, 200);
  EXPECT_TRUE(got->blocked);
}

// Against a plain model (a list in recency order) with random inserts, refreshes and
// evictions: the index must never lose or duplicate an entry across backward shifts.
TEST(OffenderTable, MatchesAModelUnderRandomTraffic) {
  constexpr uint32_t kCap = 257;
  OffenderTable t(kCap);
  std::vector<std::pair<uint32_t, uint64_t>> model;  // most recent first
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; i++) {
    // Few distinct hashes, so refreshes and collisions in the index are frequent.
    std::pair<uint32_t, uint64_t> k{static_cast<uint32_t>(rng() % 3), rng() % 600};
    t.record(entry(k.first, k.second));
    auto it = std::find(model.begin(), model.end(), k);
    if (it != model.end()) model.erase(it);
    model.insert(model.begin(), k);
    if (model.size() > kCap) model.pop_back();
    if (i % 997 == 0) {
      ASSERT_EQ(t.size(), model.size());
      std::vector<std::pair<uint32_t, uint64_t>> got;
      t.for_each_recent([&](const OffenderEntry& e) {
        got.emplace_back(e.rule_id, e.key_hash);
        return true;
      });
      ASSERT_EQ(got, model) << "after " << i << " records";
      for (const auto& [r, h] : model) ASSERT_NE(t.find(r, h), nullptr);
    }
  }
}

// A spoofed flood: a million distinct keys into the default table. The index work per report
// (probes and backward-shift steps) must stay a small constant, not grow with what was seen.
TEST(OffenderTable, AMillionNewKeysCostTheSamePerReport) {
  OffenderTable t(OffenderTable::kDefaultCapacity);
  std::mt19937_64 rng(1);
  // Index cells visited per report in each tenth of the flood; the table is full (and every
  // report evicts) from the second tenth on.
  constexpr int kReports = 1'000'000, kTenth = kReports / 10;
  std::vector<double> per_report;
  for (int i = 0; i < kReports; i++) {
    uint64_t before = t.probes();
    if (i % kTenth == 0) per_report.push_back(0);
    t.record(entry(1 + i % 4, rng()));
    per_report.back() += static_cast<double>(t.probes() - before) / kTenth;
  }
  EXPECT_EQ(t.size(), OffenderTable::kDefaultCapacity);
  for (double p : per_report) std::printf("%.2f ", p);
  std::printf("index cells visited per report, by tenth of 1,000,000 reports\n");
  // Per report: a miss, a hit for the evicted key, its backward shift and the insert's probe,
  // about 10 cells at load 1/2.
  for (size_t i = 1; i < per_report.size(); i++) {
    EXPECT_LT(per_report[i], 16.0) << "tenth " << i;
    EXPECT_LT(per_report[i], 1.3 * per_report[1]) << "per-report cost grew in tenth " << i;
  }
  EXPECT_EQ(OffenderTable::kBytesPerEntry, 64u) << "docs/metrics.md states 64 bytes per offender";
}

TEST(OffenderTable, WalkStopsWhenAsked) {
  OffenderTable t(16);
  for (uint64_t h = 1; h <= 10; h++) t.record(entry(1, h, static_cast<int64_t>(h)));
  int visited = 0;
  t.for_each_recent([&](const OffenderEntry& e) {
    visited++;
    return e.last_seen_ns > 7;
  });
  EXPECT_EQ(visited, 4) << "10, 9, 8 are in the window, 7 ends the walk";
}

}  // namespace
}  // namespace rl::daemon
