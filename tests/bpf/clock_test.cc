// SPDX-License-Identifier: GPL-2.0-only
// The coarse clock packets read (bpf/lib/clock.h): jiffies scaled by the tick the loader
// measured, against the kernel's own coarse clock and against real time.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "fixture.h"

namespace rl::testing {
namespace {

uint64_t coarse_resolution_ns() {
  auto res = coarse_clock_resolution_ns();
  EXPECT_TRUE(res.has_value());
  return res.value_or(0);
}

class ClockTest : public BpfTest {
 protected:
  void SetUp() override {
    BpfTest::SetUp();
    hooks().set_clock(0);  // real time
  }
};

uint64_t coarse_now_ns() {
  timespec ts{};
  EXPECT_EQ(clock_gettime(CLOCK_MONOTONIC_COARSE, &ts), 0);
  return timespec_ns(ts);
}

// Half a second of readings, a millisecond apart so that they fall at every phase of the tick:
// the packets' clock never goes back and is never ahead of the precise clock read beside it by
// more than the base's few microseconds; it is behind it by half a tick at the median; and it
// stays within a tick of the kernel's own coarse clock, which moves in steps of a tick too but
// not at the jiffies' boundaries (the timekeeper accumulates whole intervals from its own
// start). Both coarse clocks stall together when no CPU updates jiffies for a while (a
// preempted vCPU: the kernel lets that run up to 5 ticks), so only the median lag is bounded
// against the precise clock. This test process runs in the root time namespace, where
// clock_gettime() reads the kernel's clocks.
TEST_F(ClockTest, PacketsReadJiffiesScaledWithinATickOfTheKernelsClocks) {
  const uint64_t tick = coarse_resolution_ns();
  auto first = dp_->read_clocks();
  ASSERT_TRUE(first.ok()) << first.error().str();
  ASSERT_EQ(first->jiffy_ns, tick) << "the loader scales jiffies by CLOCK_MONOTONIC_COARSE's "
                                      "resolution (the kernel's tick)";
  const int64_t t = static_cast<int64_t>(tick), slack = 1'000'000;  // a late tick handler
  uint64_t last = 0;
  std::vector<int64_t> behind_all;
  int64_t behind_lo = INT64_MAX, behind_hi = INT64_MIN, coarse_lo = INT64_MAX,
          coarse_hi = INT64_MIN;
  for (int i = 0; i < 500; i++) {
    uint64_t coarse_before = coarse_now_ns();
    auto r = dp_->read_clocks();
    ASSERT_TRUE(r.ok()) << r.error().str();
    uint64_t coarse_after = coarse_now_ns();
    EXPECT_GE(r->packet_ns, last) << "reading " << i;
    last = r->packet_ns;
    int64_t behind = static_cast<int64_t>(r->precise_ns - r->packet_ns);
    behind_lo = std::min(behind_lo, behind);
    behind_hi = std::max(behind_hi, behind);
    behind_all.push_back(behind);
    coarse_lo = std::min(coarse_lo, static_cast<int64_t>(r->packet_ns - coarse_before));
    coarse_hi = std::max(coarse_hi, static_cast<int64_t>(r->packet_ns - coarse_after));
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_GT(behind_lo, -100'000) << "ahead of the precise clock";
  std::nth_element(behind_all.begin(), behind_all.begin() + behind_all.size() / 2,
                   behind_all.end());
  const int64_t behind_median = behind_all[behind_all.size() / 2];
  EXPECT_LT(behind_median, t) << "behind the precise clock";
  EXPECT_GT(coarse_lo, -t - slack) << "behind the kernel's coarse clock";
  EXPECT_LT(coarse_hi, t + slack) << "ahead of the kernel's coarse clock";
  std::printf(
      "tick %.3f ms; the packets' coarse clock behind the precise one by %.3f to %.3f "
      "ms (median %.3f); against the kernel's coarse clock %.3f to %.3f ms\n",
      t / 1e6, behind_lo / 1e6, behind_hi / 1e6, behind_median / 1e6, coarse_lo / 1e6,
      coarse_hi / 1e6);
}

// A rule on the coarse clock, judged in real time: its burst, nothing more at once, and its
// next token a period later.
TEST_F(ClockTest, ARuleOnTheCoarseClockRefillsInRealTime) {
  policy::Policy p;
  p.rules = {token_bucket("tb", 5, 1)};  // a token per 200 ms: fifty ticks at 250 Hz
  apply(p);
  ASSERT_EQ(compiled_.rules.at(0).flags & RL_RULE_F_PRECISE_CLOCK, 0u)
      << "a bucket of many ticks is on the coarse clock";
  auto f = udp4("198.18.0.1");
  EXPECT_EQ(passed(f, 5), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(260));
  EXPECT_EQ(passed(f, 5), 1) << "one token 200 ms later";
  const uint64_t admitted = dp_->now_ns();
  EXPECT_EQ(passed(f, 5), 0) << "the next one is due 200 ms after the last";
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  // On a loaded machine the sleep can run long; the token is due 200 ms after the admission.
  if (dp_->now_ns() - admitted < 150 * 1'000'000ULL) {
    EXPECT_EQ(passed(f, 5), 0) << "60 ms later the next token is still 140 ms away";
  }
}

}  // namespace
}  // namespace rl::testing
