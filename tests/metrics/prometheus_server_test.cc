// SPDX-License-Identifier: GPL-2.0-only
// A real Prometheus server scrapes metrics_fixture_server and answers a query with the fixture's
// number: the exposition is not just well-formed but ingested as meant. Loopback only; every
// wait is bounded; both servers and the scratch directory go away even when an assertion fails.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "files.h"
#include "fixture_snapshot.h"
#include "http_get.h"
#include "ports.h"
#include "process.h"

namespace rl::testing {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto kDeadline = 30s;

// The port metrics_fixture_server printed, once it is listening.
std::optional<uint16_t> fixture_port(Process& fixture, Clock::time_point deadline) {
  static const std::regex kListening("listening on 127\\.0\\.0\\.1:([0-9]+)");
  while (Clock::now() < deadline && fixture.running()) {
    std::smatch m;
    std::string text = fixture.out() + fixture.err();
    if (std::regex_search(text, m, kListening)) return uint16_t(std::stoi(m[1]));
    std::this_thread::sleep_for(50ms);
  }
  return std::nullopt;
}

std::string prometheus_config(uint16_t target) {
  return "global:\n"
         "  scrape_interval: 1s\n"
         "  scrape_timeout: 1s\n"
         "  evaluation_interval: 1s\n"
         "scrape_configs:\n"
         "  - job_name: rl\n"
         "    static_configs:\n"
         "      - targets: ['127.0.0.1:" +
         std::to_string(target) + "']\n";
}

// The first sample's value of an instant query, or why there is none yet.
Result<std::string> query_value(uint16_t port, const std::string& promql) {
  auto r = http_get(port, "/api/v1/query?query=" + url_encode(promql));
  if (!r) return r.error();
  if (r->status != 200) return Error{0, "HTTP " + std::to_string(r->status) + ": " + r->body};
  auto j = nlohmann::json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Error{0, "not JSON: " + r->body};
  const auto& result = j["data"]["result"];
  if (!result.is_array() || result.empty()) return Error{0, "no sample yet: " + r->body};
  const auto& v = result[0]["value"];
  if (!v.is_array() || v.size() != 2 || !v[1].is_string())
    return Error{0, "unexpected answer: " + r->body};
  return v[1].get<std::string>();
}

struct Prometheus {
  Process process;
  uint16_t port;
};

// Starts Prometheus on a free loopback port; retries with another port if the first one was
// taken in the meantime. No remote write, alertmanager or service discovery is configured, so
// it opens no connection beyond the scrape target on 127.0.0.1.
Result<Prometheus> start_prometheus(const TempDir& dir, Clock::time_point deadline) {
  Error last{0, "no attempt"};
  for (int attempt = 0; attempt < 3 && Clock::now() < deadline; ++attempt) {
    auto port = free_loopback_port();
    if (!port) return port.error();
    auto p = Process::spawn({RL_PROMETHEUS, "--config.file=" + dir.path() + "/prometheus.yml",
                             "--storage.tsdb.path=" + dir.path() + "/data",
                             "--web.listen-address=127.0.0.1:" + std::to_string(*port),
                             "--web.external-url=http://127.0.0.1:" + std::to_string(*port) + "/",
                             "--storage.tsdb.retention.time=1h", "--log.level=info"});
    if (!p) return p.error();
    while (Clock::now() < deadline && p->running()) {
      auto ready = http_get(*port, "/-/ready", 1s);
      if (ready && ready->status == 200) return Prometheus{std::move(*p), *port};
      std::this_thread::sleep_for(100ms);
    }
    last = Error{0, "prometheus did not become ready:\n" + p->err()};
  }
  return last;
}

TEST(PrometheusServer, ScrapesTheExporterAndAnswersQueries) {
  ASSERT_FALSE(std::string(RL_PROMETHEUS).empty())
      << "prometheus is required: run scripts/install-deps.sh";
  const auto deadline = Clock::now() + kDeadline;
  auto dir = TempDir::create("rl-prometheus-");
  ASSERT_TRUE(dir.ok()) << dir.error().str();

  auto fixture = Process::spawn({RL_FIXTURE_SERVER});
  ASSERT_TRUE(fixture.ok()) << fixture.error().str();
  auto target = fixture_port(*fixture, deadline);
  ASSERT_TRUE(target) << "metrics_fixture_server did not start: " << fixture->err();

  ASSERT_TRUE(write_text(dir->path() + "/prometheus.yml", prometheus_config(*target)).ok());
  auto prom = start_prometheus(*dir, deadline);
  ASSERT_TRUE(prom.ok()) << prom.error().str();

  const std::string promql = std::string("rl_rule_packets_total{job=\"rl\",rule=\"") +
                             kFixtureDropRule + "\",verdict=\"dropped\"}";
  const std::string expected = std::to_string(kFixtureDropRuleDropped);
  Result<std::string> got = Error{0, "not queried"};
  while (Clock::now() < deadline) {
    got = query_value(prom->port, promql);
    if (got && *got == expected) break;
    std::this_thread::sleep_for(250ms);
  }
  ASSERT_TRUE(got.ok()) << got.error().str() << "\nprometheus log:\n" << prom->process.err();
  EXPECT_EQ(*got, expected);

  // Prometheus's own view of the target agrees: scraped, and rld reports itself up.
  auto up = query_value(prom->port, "up{job=\"rl\"}");
  ASSERT_TRUE(up.ok()) << up.error().str();
  EXPECT_EQ(*up, "1");
  auto rl_up = query_value(prom->port, "rl_up{job=\"rl\"}");
  ASSERT_TRUE(rl_up.ok()) << rl_up.error().str();
  EXPECT_EQ(*rl_up, "1");

  prom->process.stop();
  fixture->stop();
  EXPECT_FALSE(prom->process.running());
  EXPECT_FALSE(fixture->running());
}

}  // namespace
}  // namespace rl::testing
