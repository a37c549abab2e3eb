// SPDX-License-Identifier: GPL-2.0-only
// The exporter over real HTTP on loopback, and promtool's verdict on what it serves.
#include "metrics/exporter.h"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <type_traits>

#include "exporter_start.h"
#include "files.h"
#include "fixture_snapshot.h"
#include "http_get.h"
#include "process.h"

namespace rl::testing {
namespace {

using metrics::Exporter;

static_assert(!std::is_copy_constructible_v<Exporter>);
static_assert(std::is_nothrow_move_constructible_v<Exporter>);

Result<metrics::Snapshot> fixture() { return fixture_snapshot(); }

std::string get_metrics(uint16_t port) {
  auto r = http_get(port, "/metrics");
  if (!r) {
    ADD_FAILURE() << r.error().str();
    return "";
  }
  EXPECT_EQ(r->status, 200);
  return r->body;
}

// promtool check metrics reads the exposition on stdin and prints one line per problem.
void expect_promtool_clean(const std::string& text) {
  ASSERT_FALSE(std::string(RL_PROMTOOL).empty())
      << "promtool is required: run scripts/install-deps.sh";
  auto dir = TempDir::create("rl-metrics-");
  ASSERT_TRUE(dir.ok()) << dir.error().str();
  std::string in = dir->path() + "/metrics.txt";
  ASSERT_TRUE(write_text(in, text).ok());
  Output r = run({RL_PROMTOOL, "check", "metrics"}, std::chrono::seconds(30), in);
  EXPECT_EQ(r.code, 0) << r.describe();
  EXPECT_EQ(r.out + r.err, "");
}

// Stopping must not wait out civetweb's 2 s accept poll: rld stops and restarts with it.
TEST(Exporter, StopsPromptlyAfterScrapes) {
  for (int i = 0; i < 3; i++) {
    std::optional<Exporter> e(start_or_die(fixture));
    ASSERT_NE(e->port(), 0);
    get_metrics(e->port());
    auto start = std::chrono::steady_clock::now();
    e.reset();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1)) << "stop " << i;
  }
}

TEST(Exporter, ServesTheSnapshotOverHttp) {
  Exporter e = start_or_die(fixture);
  ASSERT_NE(e.port(), 0);
  std::string text = get_metrics(e.port());
  EXPECT_NE(text.find("# TYPE rl_rule_packets_total counter\n"), std::string::npos) << text;
  EXPECT_NE(text.find("rl_rule_packets_total{rule=\"ssh-per-source\",verdict=\"dropped\"} 1234\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("rl_up 1\n"), std::string::npos);
  EXPECT_NE(text.find("rl_build_info{version=\"" RL_TEST_EXPECTED_VERSION "\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("rl_tracked_keys_capacity 1048576\n"), std::string::npos);
  EXPECT_NE(text.find("rl_interface_attached{interface=\"eth1\",mode=\"generic\"} 1\n"),
            std::string::npos);
  expect_promtool_clean(text);
}

TEST(Exporter, OtherPathsAreNotFound) {
  Exporter e = start_or_die(fixture);
  auto r = http_get(e.port(), "/");
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(r->status, 404);
}

// Rule names come from the policy file: quotes, backslashes and UTF-8 must be escaped, not
// break the exposition.
TEST(Exporter, EscapesRuleNames) {
  Exporter e = start_or_die([]() -> Result<metrics::Snapshot> {
    auto s = fixture_snapshot();
    s.rules.push_back({"odd \"rule\" \\ ñ", "drop", {}});
    return s;
  });
  std::string text = get_metrics(e.port());
  EXPECT_NE(text.find("rl_rule_info{rule=\"odd \\\"rule\\\" \\\\ ñ\",action=\"drop\"} 1\n"),
            std::string::npos)
      << text;
  expect_promtool_clean(text);
}

TEST(Exporter, FailedSnapshotServesUpZero) {
  Exporter e = start_or_die([]() -> Result<metrics::Snapshot> { return Error{EIO, "map read"}; });
  std::string text = get_metrics(e.port());
  EXPECT_NE(text.find("rl_up 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("rl_build_info{"), std::string::npos);
  EXPECT_EQ(text.find("rl_rule_"), std::string::npos);
  EXPECT_EQ(text.find("rl_received_"), std::string::npos);
  expect_promtool_clean(text);
}

TEST(Exporter, BusyPortIsAnErrorValue) {
  Exporter first = start_or_die(fixture);
  std::string address = "127.0.0.1:" + std::to_string(first.port());
  auto second = Exporter::start(address, fixture);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find(address), std::string::npos) << second.error().message;
  EXPECT_NE(second.error().message.find("in use"), std::string::npos) << second.error().message;
  // The first one is unaffected.
  EXPECT_NE(get_metrics(first.port()).find("rl_up 1\n"), std::string::npos);
}

TEST(Exporter, InvalidAddressIsAnErrorValue) {
  for (const char* a : {"not an address", "127.0.0.1:99999", "", "192.0.2.1:9464"}) {
    SCOPED_TRACE(a);
    auto e = Exporter::start(a, fixture);
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().message.find("metrics: cannot serve on"), std::string::npos);
  }
}

TEST(Exporter, MovedExporterKeepsServing) {
  Exporter a = start_or_die(fixture);
  uint16_t port = a.port();
  Exporter b = std::move(a);
  EXPECT_EQ(a.port(), 0);  // NOLINT(bugprone-use-after-move): moved-from state is specified
  EXPECT_EQ(b.port(), port);
  EXPECT_NE(get_metrics(port).find("rl_up 1\n"), std::string::npos);
}

TEST(Exporter, DestructionClosesThePort) {
  uint16_t port;
  {
    Exporter e = start_or_die(fixture);
    port = e.port();
    get_metrics(port);
  }
  auto r = http_get(port, "/metrics", std::chrono::seconds(2));
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace rl::testing
