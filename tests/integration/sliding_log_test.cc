// SPDX-License-Identifier: GPL-2.0-only
// "At most 5 connection attempts in any 2 s per source" with real SYNs through the veth: the
// log admits 5, refuses every attempt while they are within the period, and admits 5 again
// once they have left it. rlctl shows the log and the key's entries.
#include <chrono>
#include <thread>

#include "rld_fixture.h"

namespace rl::testing {
namespace {

using namespace std::chrono_literals;

TEST_F(RldTest, ASlidingLogAdmitsItsAmountInAnyPeriod) {
  write_policy("logins.yaml",
               "rules:\n"
               "  - name: logins\n"
               "    match: {protocol: tcp, port: 22, tcp_flags: syn}\n"
               "    limit: {algorithm: sliding_log, rate: 5/2s}\n");
  start_rld();
  auto check = run({RL_RLCTL_PATH, "policy", "show", "logins", "-s", socket_path()});
  ASSERT_TRUE(check.ok()) << check.describe();
  EXPECT_NE(check.out.find("sliding_log 5/2s"), std::string::npos) << check.out;

  const SendSpec syns{.src = "198.18.70.1", .proto = "tcp", .dport = 22, .syn = true};
  auto burst = [&](uint64_t n) {
    SendSpec s = syns;
    s.count = n;
    s.rate = 1000;
    auto sent = send(s);
    EXPECT_EQ(sent.sent, n);
  };
  auto passed = [&] { return rule_stats("logins")["passed_packets"].get<uint64_t>(); };

  auto start = std::chrono::steady_clock::now();
  burst(8);
  EXPECT_EQ(passed(), 5u) << "5 of the first 8";
  Json k = ctl({"key", "show", "198.18.70.1"});
  ASSERT_EQ(k["rules"].size(), 1u) << k.dump();
  EXPECT_EQ(k["rules"][0]["state"]["algorithm"], "sliding_log") << k.dump();
  EXPECT_EQ(k["rules"][0]["state"]["count"], 5) << k.dump();

  // One second on: a fixed window of 2 s might have started afresh; the log has not.
  std::this_thread::sleep_until(start + 1s);
  burst(5);
  EXPECT_EQ(passed(), 5u) << "all refused within 2 s of the first 5";

  // Past 2 s (and the log's ticks of 2 s / 2,048): 5 again.
  std::this_thread::sleep_until(start + 2100ms);
  burst(8);
  EXPECT_EQ(passed(), 10u);
  Json c = rule_stats("logins");
  EXPECT_EQ(c["matched_packets"].get<uint64_t>(), 21u) << c.dump();
  EXPECT_EQ(c["dropped_packets"].get<uint64_t>(), 11u) << c.dump();
}

}  // namespace
}  // namespace rl::testing
