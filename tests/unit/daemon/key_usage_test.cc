// SPDX-License-Identifier: GPL-2.0-only
// KeyUsageSampler: counts on its own thread, and between counts runs the cheaper look with the
// latest count (rld grows the key table from the keys inserted since).
#include "daemon/key_usage.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

namespace rl::daemon {
namespace {

using namespace std::chrono_literals;

// Polls `done` until it holds or 10 s pass: a loaded host may hold the sampler's thread up.
template <typename F>
bool eventually(F done) {
  for (auto until = std::chrono::steady_clock::now() + 10s;
       std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(5ms))
    if (done()) return true;
  return done();
}

TEST(KeyUsageSampler, LooksBetweenCountsWithTheLatestCount) {
  std::atomic<uint64_t> counts{0};
  std::mutex mu;
  std::set<uint64_t> seen;  // the counts the looks were given
  std::atomic<int> looks{0};
  KeyUsageSampler sampler(
      [&] {
        return std::pair<uint64_t, uint64_t>{++counts, 0};
      },
      300ms,
      [&](const KeyUsageSampler::Usage& u) {
        std::lock_guard lock(mu);
        seen.insert(u.tracked);
        looks++;
      },
      10ms);
  EXPECT_EQ(sampler.latest().tracked, 1u) << "the first count is taken before the constructor ends";
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(mu);
    return seen.count(1) && seen.count(2);
  })) << "looks after the first and the second count";
  std::lock_guard lock(mu);
  EXPECT_EQ(*seen.begin(), 1u);
  EXPECT_LE(*seen.rbegin(), counts.load()) << "a look never sees a count before it is taken";
  // Looks every 10 ms, counts every 300: many more looks than counts.
  EXPECT_GT(looks.load(), static_cast<int>(3 * counts.load()));
}

TEST(KeyUsageSampler, WithoutALookItOnlyCounts) {
  std::atomic<uint64_t> counts{0};
  {
    KeyUsageSampler sampler([&] { return std::pair<uint64_t, uint64_t>{++counts, 7}; }, 20ms);
    ASSERT_TRUE(eventually([&] { return sampler.latest().tracked >= 3; }));
    EXPECT_EQ(sampler.latest().blocked, 7u);
  }
  // Destroyed: the thread has stopped and counts no more.
  uint64_t at_stop = counts.load();
  std::this_thread::sleep_for(60ms);
  EXPECT_EQ(counts.load(), at_stop);
}

}  // namespace
}  // namespace rl::daemon
