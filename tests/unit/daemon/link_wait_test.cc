// SPDX-License-Identifier: GPL-2.0-only
// Waiting for interfaces at start, in the test's own network namespace: "lo" is there, a name
// nobody creates is waited for up to the bound and reported. (tests/integration/startup_test.cc
// creates one while rld waits.)
#include <gtest/gtest.h>

#include "daemon/service/link_wait.h"

namespace rl::daemon {
namespace {

using namespace std::chrono_literals;

constexpr char kNobody[] = "rl-nolink0";  // 10 characters: a valid name no test creates

TEST(LinkWait, PresentLinksNeedNoWait) {
  int ticks = 0;
  auto t0 = std::chrono::steady_clock::now();
  auto missing = wait_for_links({"lo"}, 5s, [&](const auto&) { ticks++; });
  EXPECT_TRUE(missing.empty());
  EXPECT_EQ(ticks, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
}

TEST(LinkWait, AMissingLinkIsWaitedForUpToTheBound) {
  std::vector<std::vector<std::string>> ticks;
  auto t0 = std::chrono::steady_clock::now();
  auto missing =
      wait_for_links({"lo", kNobody}, 1500ms, [&](const auto& m) { ticks.push_back(m); });
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(missing, std::vector<std::string>{kNobody});
  EXPECT_GE(took, 1500ms);
  EXPECT_LT(took, 3s);
  ASSERT_GE(ticks.size(), 2u) << "a tick at least once a second";
  EXPECT_EQ(ticks.front(), std::vector<std::string>{kNobody});
}

TEST(LinkWait, NoBoundMeansOneLook) {
  EXPECT_EQ(wait_for_links({kNobody}, 0ms, {}), std::vector<std::string>{kNobody});
  EXPECT_EQ(missing_links({"lo", kNobody}), std::vector<std::string>{kNobody});
}

TEST(LinkWait, NamesReadAsAList) {
  EXPECT_EQ(name_list({"eth1"}), "eth1");
  EXPECT_EQ(name_list({"eth1", "bond0"}), "eth1 and bond0");
  EXPECT_EQ(name_list({"eth1", "bond0", "vlan7"}), "eth1, bond0 and vlan7");
}

}  // namespace
}  // namespace rl::daemon
