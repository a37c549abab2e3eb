// SPDX-License-Identifier: GPL-2.0-only
// Windows follow the Redis server's clock (TIME inside the script), never a node's: every
// check here is against the server time each reply carries, or that the test reads from Redis.
#include <chrono>
#include <thread>

#include "redis_test.h"

namespace rl::testing {
namespace {

using namespace std::chrono_literals;

class ClockTest : public RedisTest {
 protected:
  // Waits (at most two windows) until the server's clock is at least `min_ms` and less than
  // `max_ms` into a window; returns that server time.
  uint64_t wait_for_phase(uint64_t window, uint64_t min_ms, uint64_t max_ms) {
    auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(2 * window);
    while (std::chrono::steady_clock::now() < give_up) {
      auto now = server_->time_ms();
      EXPECT_TRUE(now);
      if (!now) return 0;
      uint64_t at = *now % window;
      if (at >= min_ms && at < max_ms) return *now;
      std::this_thread::sleep_for(1ms);
    }
    ADD_FAILURE() << "the server clock never reached the phase";
    return 0;
  }
};

// Two nodes, 200 ms windows, limit 0 so that every reply carries the key's estimate: each
// estimate equals the model's at the reply's server time, and the stored window index is
// always the server's.
TEST_F(ClockTest, TwoNodesFollowTheServerWindows) {
  auto a = store(), b = store();
  ASSERT_TRUE(a && b);
  const uint64_t kWindow = 200;
  std::optional<WindowState> model;
  uint64_t first_index = 0, last_index = 0;
  // About 1.5 s: bounded by count and by time.
  auto stop = std::chrono::steady_clock::now() + 1500ms;
  for (int i = 0; i < 100 && std::chrono::steady_clock::now() < stop; i++) {
    auto& node = i % 2 ? b : a;
    uint64_t delta = 1 + i % 3;
    auto reply = node->sync({key_delta("shared", "k", delta, 0, kWindow)});
    ASSERT_TRUE(reply) << reply.error().str();
    uint64_t now = reply->server_time_ms;
    model = window_add(model, delta, now, kWindow);
    ASSERT_EQ(reply->over.size(), 1u);
    EXPECT_EQ(reply->over[0].estimate, window_estimate(model, now, kWindow)) << "sync " << i;
    EXPECT_EQ(reply->over[0].for_ms, window_settle_ms(model, now, kWindow, 0)) << "sync " << i;
    auto s = stored("shared", "k", kWindow);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->index, now / kWindow);
    EXPECT_EQ(s->cur, model->cur);
    EXPECT_EQ(s->prev, model->prev);
    if (!first_index) first_index = s->index;
    last_index = s->index;
    std::this_thread::sleep_for(15ms);
  }
  EXPECT_GE(last_index - first_index, 5u) << "too few windows went by to judge rollovers";
}

// A delta just before the server's window boundary and one just after: the second finds the
// first in the previous window, whatever time the node thinks it is.
TEST_F(ClockTest, RolloverHappensOnTheServerBoundary) {
  auto store = this->store();
  ASSERT_TRUE(store);
  const uint64_t kWindow = 200;
  // The first delta must land in the window it was sent in. A sync that the machine delayed
  // past the boundary (30 to 50 ms away) says nothing of the store: the attempt is made again,
  // with a rule of its own so that the late delta cannot count.
  std::string rule;
  uint64_t index = 0;
  for (int attempt = 0; attempt < 5 && rule.empty(); attempt++) {
    uint64_t before = wait_for_phase(kWindow, 150, 170);
    ASSERT_NE(before, 0u);
    std::string r = "edge" + std::to_string(attempt);
    auto r1 = store->sync({key_delta(r, "k", 5, 1000, kWindow)});
    ASSERT_TRUE(r1) << r1.error().str();
    if (r1->server_time_ms / kWindow != before / kWindow) continue;
    rule = r;
    index = r1->server_time_ms / kWindow;
  }
  ASSERT_FALSE(rule.empty()) << "five syncs in a row crossed the window's boundary";
  auto s1 = stored(rule, "k", kWindow);
  ASSERT_TRUE(s1);
  EXPECT_EQ(s1->index, index);
  EXPECT_EQ(s1->cur, 5u);

  uint64_t after = wait_for_phase(kWindow, 10, 50);
  ASSERT_EQ(after / kWindow, index + 1);
  auto r2 = store->sync({key_delta(rule, "k", 1, 1000, kWindow)});
  ASSERT_TRUE(r2) << r2.error().str();
  ASSERT_EQ(r2->server_time_ms / kWindow, index + 1);
  auto s2 = stored(rule, "k", kWindow);
  ASSERT_TRUE(s2);
  EXPECT_EQ(s2->index, index + 1);
  EXPECT_EQ(s2->prev, 5u);
  EXPECT_EQ(s2->cur, 1u);
}

// After the last delta the estimate decays with the previous window's weight and the key is
// gone two windows later.
TEST_F(ClockTest, OldWindowsDecayAndExpire) {
  auto store = this->store();
  ASSERT_TRUE(store);
  const uint64_t kWindow = 200;
  ASSERT_NE(wait_for_phase(kWindow, 20, 60), 0u);
  auto first = store->sync({key_delta("decay", "k", 1000, 0, kWindow)});
  ASSERT_TRUE(first) << first.error().str();
  auto model = window_add(std::nullopt, 1000, first->server_time_ms, kWindow);
  uint64_t last_estimate = 1000;
  int decayed = 0;
  bool gone = false;
  auto stop = std::chrono::steady_clock::now() + 700ms;
  for (int i = 0; i < 100 && std::chrono::steady_clock::now() < stop; i++) {
    std::this_thread::sleep_for(20ms);
    auto reply = store->sync({key_delta("decay", "k", 0, 0, kWindow)});
    ASSERT_TRUE(reply) << reply.error().str();
    uint64_t expect = window_estimate(model, reply->server_time_ms, kWindow);
    if (expect == 0) {
      EXPECT_TRUE(reply->over.empty());
      gone = true;
      continue;
    }
    EXPECT_FALSE(gone) << "the estimate came back";
    ASSERT_EQ(reply->over.size(), 1u);
    EXPECT_EQ(reply->over[0].estimate, expect);
    EXPECT_LE(expect, last_estimate);
    if (expect < 1000) decayed++;
    last_estimate = expect;
  }
  EXPECT_GT(decayed, 3);
  EXPECT_TRUE(gone);
  // Delta 0 never writes, so the key expired at the end of the window after its last write.
  auto exists = server_->command({"EXISTS", cluster::rule_hash("rl", "decay", kWindow)});
  ASSERT_TRUE(exists);
  EXPECT_EQ(exists->integer, 0);
}

}  // namespace
}  // namespace rl::testing
