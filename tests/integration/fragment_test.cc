// SPDX-License-Identifier: GPL-2.0-only
// Fragmented reflection floods against the shipped reflection policy, with real packets: the
// first fragment of each reply has the reflector's source port and meets the reply rule, the
// later ones have no port and meet the fragment rule, each under its own per-sender limit.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "rld_fixture.h"

namespace rl::testing {
namespace {

std::string shipped(const std::string& name) {
  std::ifstream in(std::string(RL_SOURCE_DIR) + "/policies/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_F(RldTest, TheShippedReflectionPolicyLimitsFragmentedReplies) {
  const std::string policy = shipped("reflection.yaml");
  ASSERT_NE(policy.find("fragment: later"), std::string::npos) << policy;
  write_policy("reflection.yaml", policy);
  start_rld();

  // One reflector's large DNS replies: first fragments from port 53, then the later fragments,
  // which carry no port; IPv4 and IPv6. Each kind from its own reflector, so that each meets a
  // fresh per-sender bucket (burst 100, 50/s).
  constexpr uint64_t kCount = 400;
  struct Flood {
    const char* src;
    const char* fragment;
  };
  const Flood floods[] = {{"198.18.60.1", "first"},
                          {"198.18.60.2", "later"},
                          {"2001:db8:60::1", "first"},
                          {"2001:db8:61::1", "later"}};
  double seconds[2] = {0, 0};  // sending time of the first fragments, of the later ones
  for (const Flood& f : floods) {
    auto sent = send({.src = f.src,
                      .sport = 53,
                      .dport = 33000,
                      .size = 1000,
                      .fragment = f.fragment,
                      .count = kCount,
                      .rate = 2000});
    ASSERT_EQ(sent.sent, kCount) << f.src;
    seconds[std::string(f.fragment) == "later"] += sent.seconds;
  }

  // The reply rule saw the first fragments only, the fragment rule the later ones only.
  Json replies = rule_stats("udp-reflection");
  Json tails = rule_stats("udp-fragments");
  EXPECT_EQ(replies["matched_packets"].get<uint64_t>(), 2 * kCount) << replies.dump();
  EXPECT_EQ(tails["matched_packets"].get<uint64_t>(), 2 * kCount) << tails.dump();
  std::printf("first fragments: %s of %lu passed in %.2f s; later fragments: %s passed in %.2f s\n",
              replies["passed_packets"].dump().c_str(), (unsigned long)(2 * kCount), seconds[0],
              tails["passed_packets"].dump().c_str(), seconds[1]);
  // Two reflectors each, each held to its burst of 100 plus 50/s while it sent.
  for (int later = 0; later < 2; later++) {
    Json c = later ? tails : replies;
    uint64_t passed = c["passed_packets"];
    EXPECT_GE(passed, 2u * 100) << c.dump();
    EXPECT_LE(passed, 2 * 100 + 50 * seconds[later] + 4) << c.dump();
    EXPECT_EQ(passed + c["dropped_packets"].get<uint64_t>(), 2 * kCount) << c.dump();
  }
  // The data path counts the later fragments (rl_fragments_total).
  Json st = ctl({"stats"});
  EXPECT_EQ(st["global"]["fragments"]["packets"].get<uint64_t>(), 2 * kCount) << st.dump();
}

}  // namespace
}  // namespace rl::testing
