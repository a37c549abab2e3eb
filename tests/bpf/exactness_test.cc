// SPDX-License-Identifier: GPL-2.0-only
// Two threads on two CPUs hit the same key at once through BPF_PROG_TEST_RUN (each call runs
// its repeats in the kernel on the calling CPU). With the clock frozen the formula admits a
// known number; the kernel must admit exactly that many, whatever the interleaving.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <thread>

#include "fixture.h"

namespace rl::testing {
namespace {

class ExactnessTest : public BpfTest {
 protected:
  static constexpr uint32_t kChunk = 5000;  // packets per call

  // Runs `per_thread` packets of `frame` on each of CPU 0 and CPU 1 concurrently.
  void contend(const std::vector<uint8_t>& frame, uint32_t per_thread) {
    ASSERT_GE(std::thread::hardware_concurrency(), 2u) << "needs two CPUs";
    auto worker = [&](int cpu) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
      // Long calls, so that both CPUs run the program at once for most of the test. Each call
      // of more than one repeat adds the program to the kernel's XDP dispatcher and takes it out
      // after, each change waiting for an RCU grace period: calls of a few packets would spend
      // nearly all their time there, one CPU at a time, and race on the key only now and then.
      for (uint32_t done = 0; done < per_thread; done += kChunk) {
        auto r = hooks().run(frame, std::min(kChunk, per_thread - done));
        EXPECT_TRUE(r.ok());
      }
    };
    std::thread a(worker, 0), b(worker, 1);
    a.join();
    b.join();
  }
};

TEST_F(ExactnessTest, TokenBucketAdmitsExactlyTheBurst) {
  policy::Policy p;
  p.rules = {token_bucket("tb", 1000, 5000)};
  apply(p);
  auto f = udp4("198.18.0.1");
  uint64_t expected = 0;
  for (int round = 0; round < 5; round++) {
    hooks().set_clock(kT0 + static_cast<uint64_t>(round) * 2 *
                                kSec);  // each round refills 2000 tokens (the first: 5000)
    contend(f, 20000);
    expected += round == 0 ? 5000 : 2000;
    auto c = counters("tb");
    ASSERT_EQ(c.passed_pkts, expected) << "round " << round;
    ASSERT_EQ(c.matched_pkts, 40000u * (round + 1));
  }
  EXPECT_EQ(global(RL_GC_CAS_EXHAUSTED), 0u);
}

TEST_F(ExactnessTest, FixedWindowAdmitsExactlyTheLimit) {
  policy::Policy p;
  p.rules = {window("fw", policy::Algorithm::kFixedWindow, 7777, kSec)};
  apply(p);
  contend(udp4("198.18.0.1"), 20000);
  EXPECT_EQ(counters("fw").passed_pkts, 7777u);
}

TEST_F(ExactnessTest, SlidingWindowAdmitsExactlyTheLimit) {
  policy::Policy p;
  p.rules = {window("sw", policy::Algorithm::kSlidingWindow, 6543, kSec)};
  apply(p);
  contend(udp4("198.18.0.1"), 20000);
  EXPECT_EQ(counters("sw").passed_pkts, 6543u);
}

// The log's entries and its oldest one change in one CAS, so two CPUs admit exactly the amount
// in each window, the clock moved a window on between the rounds.
TEST_F(ExactnessTest, SlidingLogAdmitsExactlyItsEntries) {
  policy::Policy p;
  p.rules = {window("log", policy::Algorithm::kSlidingLog, 8, kSec)};
  apply(p);
  auto f = udp4("198.18.0.1");
  for (uint64_t round = 0; round < 5; round++) {
    hooks().set_clock(kT0 + round * 2 * kSec);
    contend(f, 2000);
    ASSERT_EQ(counters("log").passed_pkts, 8 * (round + 1)) << "round " << round;
  }
  EXPECT_EQ(global(RL_GC_CAS_EXHAUSTED), 0u);
}

TEST_F(ExactnessTest, BytesAndAggregateKey) {
  policy::Policy p;
  auto r = token_bucket("agg", 0, 0);
  r.key = policy::KeyKind::kRule;
  r.limit.rate = per_second(1'000'000, policy::Unit::kBytes);
  r.limit.burst = 600'000;
  p.rules = {r};
  apply(p);
  auto f = udp4("198.18.0.1");
  ASSERT_EQ(f.size(), 60u);
  contend(f, 20000);
  EXPECT_EQ(counters("agg").passed_pkts, 10000u);
}

// A flood of distinct sources on both CPUs (the program varies each packet's IPv6 source, see
// rl_bench_src_spread) against one new-source budget: exactly the budget's burst of sources gets
// a bucket, and every other packet is judged by the one shared bucket.
TEST_F(ExactnessTest, NewSourceBudgetGrantsExactlyItsBurst) {
  LoadOptions o;
  o.key_capacity = 1 << 20;  // no set fills up: every token finds room
  o.bench_src_spread = 1u << 30;
  auto dp = BpfDatapath::load(o);
  ASSERT_TRUE(dp.ok()) << dp.error().str();
  dp_ = std::move(*dp);
  hooks().set_clock(kT0);
  policy::Policy p;
  auto r = token_bucket("flooded", 1, 1);
  policy::NewSources ns;
  ns.rate = per_second(1000);
  ns.burst = 5000;
  r.new_sources = ns;
  p.rules = {r};
  apply(p);
  auto f = packet::Builder().ipv6("2001:db8::1", "2001:db8:ff::2").udp(40000, 53).build();
  contend(f, 20000);
  EXPECT_EQ(counters("flooded").passed_pkts, 5000u + 1) << "the budget, plus the shared bucket";
  EXPECT_EQ(global(RL_GC_NEW_UNADMITTED), 40000u - 5000);
  EXPECT_EQ(global(RL_GC_CAS_EXHAUSTED), 0u);
}

// Stacked limits on two CPUs: the total admits exactly its burst, and every packet it refused
// gave the source's own limit its token back, so the source has exactly what it did not pass.
TEST_F(ExactnessTest, StackedLimitsAdmitExactlyAndGiveBackExactly) {
  policy::Policy p;
  auto r = token_bucket("stacked", 1, 5000);  // the source: 5,000, then 1 per second
  policy::StackedLimit total;
  total.name = "total";
  total.key = policy::KeyKind::kRule;
  total.limit.rate = per_second(3000);
  total.limit.burst = 3000;
  r.more = {total};
  p.rules = {r};
  apply(p);
  auto f = udp4("198.18.0.1");
  contend(f, 10000);
  EXPECT_EQ(counters("stacked").passed_pkts, 3000u) << "the total's burst";
  hooks().set_clock(kT0 + kSec);  // the total is full again; the source gained one token
  contend(f, 10000);
  EXPECT_EQ(counters("stacked").passed_pkts, 3000u + 2000 + 1) << "what the source had left";
  EXPECT_EQ(global(RL_GC_CAS_EXHAUSTED), 0u);
}

}  // namespace
}  // namespace rl::testing
