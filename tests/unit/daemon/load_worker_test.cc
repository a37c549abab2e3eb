// SPDX-License-Identifier: GPL-2.0-only
// LoadWorker: one job at a time, `done` exactly once (at the end of the work or at the time
// limit), a late job's successor only after it ended, and `done` may submit the next job.
#include "daemon/policy/load_worker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

namespace rl::daemon {
namespace {

using namespace std::chrono_literals;

TEST(LoadWorker, DoneRunsOnceWhenTheWorkEnds) {
  LoadWorker w;
  auto result = std::make_shared<int>(0);
  int done = 0;
  bool late = true;
  w.submit({{},
            [result] { *result = 42; },
            [&](bool timed_out) {
              done++;
              late = timed_out;
            },
            5s});
  w.drain();
  EXPECT_EQ(done, 1);
  EXPECT_FALSE(late);
  EXPECT_EQ(*result, 42);
  EXPECT_FALSE(w.running());
}

TEST(LoadWorker, ALateJobIsAnsweredAtItsLimitAndTheNextWaitsForIt) {
  LoadWorker w;
  std::atomic<bool> release{false}, first_ended{false}, second_saw_first_ended{false};
  std::vector<std::string> order;
  w.submit({{},
            [&] {
              while (!release) std::this_thread::sleep_for(1ms);
              first_ended = true;
            },
            [&](bool timed_out) { order.emplace_back(timed_out ? "first late" : "first"); },
            50ms});
  w.submit({[&] { order.emplace_back("second starts"); },
            [&] { second_saw_first_ended = first_ended.load(); },
            [&](bool timed_out) { order.emplace_back(timed_out ? "second late" : "second"); }, 5s});
  auto t0 = std::chrono::steady_clock::now();
  while (order.empty() && std::chrono::steady_clock::now() - t0 < 5s) {
    std::this_thread::sleep_for(5ms);
    w.on_ready();
    w.check_deadline();
  }
  ASSERT_EQ(order, std::vector<std::string>{"first late"});
  EXPECT_TRUE(w.running()) << "the late job's thread runs on";
  std::this_thread::sleep_for(50ms);
  w.on_ready();
  w.check_deadline();
  EXPECT_EQ(order.size(), 1u) << "nothing starts beside a running job";
  release = true;
  while (order.size() < 3 && std::chrono::steady_clock::now() - t0 < 10s) {
    std::this_thread::sleep_for(5ms);
    w.on_ready();
    w.check_deadline();
  }
  EXPECT_EQ(order, (std::vector<std::string>{"first late", "second starts", "second"}));
  EXPECT_TRUE(second_saw_first_ended);
}

TEST(LoadWorker, DoneMaySubmitTheNextJob) {
  LoadWorker w;
  int done = 0;
  w.submit({{},
            [] {},
            [&](bool) {
              done++;
              w.submit({{}, [] {}, [&](bool timed_out) { done += timed_out ? 100 : 10; }, 5s});
            },
            5s});
  w.drain();
  w.drain();
  EXPECT_EQ(done, 11);
}

}  // namespace
}  // namespace rl::daemon
