// SPDX-License-Identifier: GPL-2.0-only
// A persisting failure in the log: one line when it starts, a summary a minute while it lasts,
// one line when it ends; another kind of failure is a new start.
#include "common/failure_log.h"

#include <gtest/gtest.h>

namespace rl::log {
namespace {

using namespace std::chrono_literals;
using Clock = FailureLog::Clock;

std::string field(const FailureLog::Line& l, const std::string& key) {
  for (const auto& [k, v] : l.fields)
    if (k == key) return v;
  return "(none)";
}

TEST(FailureLog, OneLineWhenItStartsASummaryAMinuteOneWhenItEnds) {
  FailureLog log("cluster sync", 60s);
  const Clock::time_point t0{};
  auto first = log.failed(t0, "unavailable", "next attempt in 100 ms", {{"endpoint", "a:1"}});
  ASSERT_TRUE(first);
  EXPECT_EQ(first->level, Level::kError);
  EXPECT_EQ(first->msg, "cluster sync failing");
  EXPECT_EQ(field(*first, "kind"), "unavailable");
  EXPECT_EQ(field(*first, "endpoint"), "a:1");
  // Every 100 ms for a minute, each with another message: no line.
  int lines = 0;
  for (int i = 1; i < 600; i++)
    lines += log.failed(t0 + i * 100ms, "unavailable", "next attempt in " + std::to_string(i))
                 .has_value();
  EXPECT_EQ(lines, 0);
  auto summary = log.failed(t0 + 60s, "unavailable", "next attempt in 7 ms");
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->level, Level::kWarn);
  EXPECT_EQ(summary->msg, "cluster sync still failing");
  EXPECT_EQ(field(*summary, "failures"), "601");
  EXPECT_EQ(field(*summary, "for_s"), "60");
  EXPECT_FALSE(log.failed(t0 + 61s, "unavailable", "x"));
  auto end = log.succeeded(t0 + 90s);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->level, Level::kInfo);
  EXPECT_EQ(end->msg, "cluster sync recovered");
  EXPECT_EQ(field(*end, "failures"), "602");
  EXPECT_EQ(field(*end, "for_s"), "90");
  EXPECT_FALSE(log.failing());
  EXPECT_FALSE(log.succeeded(t0 + 91s)) << "nothing to end";
}

TEST(FailureLog, AnotherKindIsNews) {
  FailureLog log("cluster heartbeat");
  const Clock::time_point t0{};
  ASSERT_TRUE(log.failed(t0, "unavailable", "refused"));
  EXPECT_FALSE(log.failed(t0 + 1s, "unavailable", "refused"));
  auto tls = log.failed(t0 + 2s, "tls", "certificate verify failed");
  ASSERT_TRUE(tls);
  EXPECT_EQ(tls->msg, "cluster heartbeat failing");
  EXPECT_EQ(field(*tls, "kind"), "tls");
  EXPECT_TRUE(log.failing());
}

}  // namespace
}  // namespace rl::log
