// SPDX-License-Identifier: GPL-2.0-only
// New-source budgets end to end: a flood of a million spoofed IPv6 sources and 131,071 IPv4 ones,
// at kFloodRate, against a per-source rule with a budget. What reaches the server
// namespace's socket must stay within the budget's formula, whatever the number of sources, and a
// source known before the flood keeps its own full rate. The known source has a veth of its own
// (a side link), so that the flood's frames cannot crowd it out of a shared receive ring: that
// would measure the lab, not the limiter.
#include <thread>

#include "rld_fixture.h"

namespace rl::testing {
namespace {

constexpr uint64_t kBudgetRate = 1000, kBudgetBurst = 1000;  // new sources per second
constexpr uint64_t kRate = 50, kBurst = 50;                  // per source, and the shared bucket
constexpr char kKnown[] = "2001:db8:ffff::7";
// Frames a second of the floods: unpaced, the lab's AF_PACKET sender meets send errors (the
// veth's queue full) on a busy machine, and a frame not sent is not a frame the limiter judged.
constexpr uint64_t kFloodRate = 250'000;

class NewSourcesFlood : public RldTest {
 protected:
  NewSourcesFlood() { lab_options_.side_links = 1; }
};

TEST_F(NewSourcesFlood, FloodReachingTheStackIsBoundedByTheBudget) {
  write_policy("flood.yaml",
               "rules:\n"
               "  - name: guarded\n"
               "    match: {protocol: udp, port: 9}\n"
               "    limit: {rate: " +
                   std::to_string(kRate) + "/s, burst: " + std::to_string(kBurst) +
                   "}\n"
                   "    key: source\n"
                   "    prefix: {ipv6: 128}\n"  // every address of the flood a new key
                   "    new_sources: {rate: " +
                   std::to_string(kBudgetRate) + "/s, burst: " + std::to_string(kBudgetBurst) +
                   "}\n");
  start_rld();
  auto sink = start_sink(*lab_, 0, {.port = 9, .seconds = 60, .idle_ms = 2000});
  ASSERT_TRUE(sink.ok()) << sink.error().str();

  // The known source: one packet before the flood gives it a key of its own.
  auto first = rl::testing::send(*lab_, lab_->side_link(), {.src = kKnown, .count = 1});
  ASSERT_TRUE(first.ok()) << first.error().str();
  std::this_thread::sleep_for(200ms);

  // During the flood it sends 40/s, within its own 50/s: every packet must get through.
  const uint64_t known_count = 200;
  Result<SendSummary> known = Error{0, "not run"};
  std::thread known_sender([&] {
    known = rl::testing::send(*lab_, lab_->side_link(),
                              {.src = kKnown, .count = known_count, .rate = 40, .max_seconds = 20});
  });
  auto t0 = std::chrono::steady_clock::now();
  SendSummary v6 = send({.src = "2001:db8::/32",
                         .sources = 1'000'000,
                         .count = 1'000'000,
                         .rate = kFloodRate,
                         .max_seconds = 30});
  // Every address of 198.18.0.0/15 but the prefix's own: 131,071 sources, one of them twice.
  SendSummary v4 = send({.src = "198.18.0.0/15",
                         .sources = 131'071,
                         .count = 131'072,
                         .rate = kFloodRate,
                         .max_seconds = 30});
  double flood_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  known_sender.join();
  ASSERT_TRUE(known.ok()) << known.error().str();
  ASSERT_EQ(v6.sent, 1'000'000u);
  ASSERT_EQ(v4.sent, 131'072u);
  auto got = finish_sink(*sink, std::chrono::seconds(30));
  ASSERT_TRUE(got.ok()) << got.error().str();

  uint64_t known_got = got->sources.count(kKnown) ? got->sources.at(kKnown) : 0;
  EXPECT_EQ(known_got, 1 + known_count) << "the known source keeps its own full rate";
  uint64_t flood_got = got->received - known_got;
  // Admitted new sources pass their one packet each; the rest share one bucket of the rule's
  // limit. Both refill over the time the flood lasted: at most the senders' wall time, starting
  // processes included, and a margin for the clocks' ticks.
  double window = flood_seconds + 0.2;
  double bound = kBudgetBurst + kBudgetRate * window + kBurst + kRate * window;
  EXPECT_LE(flood_got, bound) << "in " << window << " s";
  EXPECT_GE(flood_got, kBudgetBurst) << "the budget's burst is spent on the first sources";

  Json stats = ctl({"stats"});
  uint64_t unadmitted = stats["global"]["new_unadmitted"]["packets"];
  uint64_t received = stats["global"]["received"]["packets"];
  EXPECT_GE(unadmitted, received - bound - known_count - 1 - 10);
  std::printf(
      "flood: %lu IPv6 sources in %.2f s (%.0f pps), %lu IPv4 sources in %.2f s (%.0f pps); "
      "XDP saw %lu frames; %lu flood packets reached the socket (bound %.0f over %.2f s), "
      "%lu unadmitted; known source %lu of %lu\n",
      (unsigned long)v6.sent, v6.seconds, v6.sent / v6.seconds, (unsigned long)v4.sent, v4.seconds,
      v4.sent / v4.seconds, (unsigned long)received, (unsigned long)flood_got, bound, window,
      (unsigned long)unadmitted, (unsigned long)known_got, (unsigned long)(known_count + 1));
}

// Stacked limits on the lab: a flood spread over one /24, every source new, is held to the /24's
// cap by the second limit, while a source known before, on its own veth, keeps its own rate.
TEST_F(NewSourcesFlood, AFloodSpreadOverASlash24IsHeldToItsCap) {
  constexpr uint64_t kCapRate = 100, kCapBurst = 100;
  write_policy("stacked.yaml",
               "rules:\n"
               "  - name: stacked\n"
               "    match: {protocol: udp, port: 9}\n"
               "    limits:\n"
               "      - {rate: 50/s, burst: 50, key: source}\n"
               "      - name: per-24\n"
               "        rate: " +
                   std::to_string(kCapRate) +
                   "/s\n"
                   "        burst: " +
                   std::to_string(kCapBurst) +
                   "\n"
                   "        key: source_prefix\n"
                   "        prefix: {ipv4: 24}\n");
  start_rld();
  auto sink = start_sink(*lab_, 0, {.port = 9, .seconds = 60, .idle_ms = 2000});
  ASSERT_TRUE(sink.ok()) << sink.error().str();
  const std::string known = "198.18.9.7";  // its own /24: the flood's cap is not its cap
  ASSERT_TRUE(rl::testing::send(*lab_, lab_->side_link(), {.src = known, .count = 1}).ok());
  std::this_thread::sleep_for(200ms);

  const uint64_t known_count = 120;
  Result<SendSummary> known_sent = Error{0, "not run"};
  std::thread known_sender([&] {
    known_sent = rl::testing::send(*lab_, lab_->side_link(),
                                   {.src = known, .count = known_count, .rate = 40});
  });
  // 254 sources of 198.18.7.0/24, 2,000 packets each: each source's own limit alone would pass
  // 50 of them (12,700 in all); the /24 cap holds the flood, and as its refusals give the
  // sources' tokens back, it does all the refusing.
  auto t0 = std::chrono::steady_clock::now();
  // Paced below what the lab's sender reaches without send errors on a busy machine.
  SendSummary flood = send({.src = "198.18.7.0/24",
                            .sources = 254,
                            .count = 508'000,
                            .rate = kFloodRate,
                            .max_seconds = 20});
  double flood_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  known_sender.join();
  ASSERT_TRUE(known_sent.ok()) << known_sent.error().str();
  ASSERT_EQ(flood.sent, 508'000u);
  auto got = finish_sink(*sink, std::chrono::seconds(30));
  ASSERT_TRUE(got.ok()) << got.error().str();

  uint64_t known_got = got->sources.count(known) ? got->sources.at(known) : 0;
  EXPECT_EQ(known_got, 1 + known_count) << "the known source keeps its own full rate";
  uint64_t flood_got = got->received - known_got;
  double bound = kCapBurst + kCapRate * (flood_seconds + 0.2);
  EXPECT_LE(flood_got, bound) << "over " << flood_seconds << " s";
  EXPECT_GE(flood_got, kCapBurst) << "the cap's burst passes";

  Json stats = ctl({"stats"});
  Json limits;
  for (const auto& r : stats["rules"])
    if (r["name"] == "stacked") limits = r["limits"];
  ASSERT_EQ(limits.size(), 2u) << stats.dump();
  EXPECT_EQ(limits[1]["name"], "per-24");
  EXPECT_GT(limits[1]["refused_packets"].get<uint64_t>(),
            limits[0]["refused_packets"].get<uint64_t>())
      << "the /24 cap does the refusing";
  std::printf(
      "stacked: %lu packets from 254 sources of one /24 in %.2f s (%.0f pps); %lu reached "
      "the socket (bound %.0f); refused by source %lu, by per-24 %lu; known source %lu of "
      "%lu\n",
      (unsigned long)flood.sent, flood.seconds, flood.sent / flood.seconds,
      (unsigned long)flood_got, bound, (unsigned long)limits[0]["refused_packets"].get<uint64_t>(),
      (unsigned long)limits[1]["refused_packets"].get<uint64_t>(), (unsigned long)known_got,
      (unsigned long)(known_count + 1));
}

}  // namespace
}  // namespace rl::testing
