// SPDX-License-Identifier: GPL-2.0-only
// /healthz and /readyz over real HTTP. /healthz: 200 while the data path reads (liveness),
// 503 otherwise. /readyz: 200 while rld enforces what it is configured with, 503 with the
// reasons otherwise. /metrics is unaffected.
#include <gtest/gtest.h>

#include "exporter_start.h"
#include "fixture_snapshot.h"
#include "http_get.h"
#include "metrics/exporter.h"
#include "metrics/health.h"

namespace rl::testing {
namespace {

using metrics::Exporter;
using metrics::Snapshot;

Snapshot with_interfaces(std::vector<metrics::InterfaceSnapshot> ifs) {
  Snapshot s = fixture_snapshot();
  s.interfaces = std::move(ifs);
  return s;
}

HttpResponse healthz(const Exporter& e, const std::string& path = "/healthz") {
  auto r = http_get(e.port(), path);
  if (!r) ADD_FAILURE() << r.error().str();
  return r ? *r : HttpResponse{};
}

TEST(Healthz, OkWhileEveryInterfaceRunsAProgram) {
  Exporter e = start_or_die([] {
    return Result<Snapshot>(with_interfaces({{"eth0", "native"}, {"eth1", "generic"}}));
  });
  auto r = healthz(e);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok\neth0: native\neth1: generic\n");
  EXPECT_NE(r.headers.find("text/plain"), std::string::npos) << r.headers;
  auto m = http_get(e.port(), "/metrics");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->status, 200);
  EXPECT_NE(m->body.find("rl_up 1"), std::string::npos);
}

// Liveness: a lost program is shown, not judged (a restart would not attach it again); readiness
// judges it.
TEST(Healthz, ALostProgramIsNotReadyButAlive) {
  Exporter e = start_or_die([] {
    Snapshot s = with_interfaces({{"eth0", "native"}, {"eth1", "none"}});
    s.not_ready = {"eth1: no XDP program attached (none)"};
    return Result<Snapshot>(s);
  });
  auto r = healthz(e);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body,
            "ok\neth0: native\neth1: none\nnot ready: eth1: no XDP program attached (none)\n");
  auto ready = healthz(e, "/readyz");
  EXPECT_EQ(ready.status, 503);
  EXPECT_EQ(ready.body, "not ready\neth1: no XDP program attached (none)\n");
}

TEST(Readyz, ReadyWithWhatIsEnforced) {
  Exporter e = start_or_die([] {
    Snapshot s = with_interfaces({{"eth0", "native"}});
    s.ready_summary = "enforcing 3 rules (generation 2) on 1 interfaces: eth0 (native)";
    return Result<Snapshot>(s);
  });
  auto r = healthz(e, "/readyz");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ready\nenforcing 3 rules (generation 2) on 1 interfaces: eth0 (native)\n");
  EXPECT_NE(r.headers.find("text/plain"), std::string::npos) << r.headers;
}

TEST(Readyz, DegradedIsNotReady) {
  Snapshot s = with_interfaces({{"eth0", "native"}});
  s.degraded = true;
  s.not_ready = {"degraded: the policy in /etc/rl/policies did not load"};
  auto h = metrics::readiness_of(s);
  EXPECT_FALSE(h.ok);
  EXPECT_EQ(h.text, "not ready\ndegraded: the policy in /etc/rl/policies did not load\n");
  EXPECT_TRUE(metrics::health_of(s).ok) << "alive all the same";
}

TEST(Healthz, UnavailableWhenTheDataPathCannotBeRead) {
  Exporter e = start_or_die([] { return Result<Snapshot>(Error{EBADF, "read rule counters"}); });
  auto r = healthz(e);
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body.find("cannot read the data path: read rule counters"), std::string::npos)
      << r.body;
  auto ready = healthz(e, "/readyz");
  EXPECT_EQ(ready.status, 503);
  EXPECT_NE(ready.body.find("cannot read the data path"), std::string::npos) << ready.body;
}

TEST(Healthz, AFailedReloadIsReportedButHealthy) {
  Snapshot s = with_interfaces({{"eth0", "native"}});
  s.last_reload_ok = false;
  s.not_ready = {"the last policy load failed (inotify); the policy before it is enforced"};
  auto h = metrics::health_of(s);
  EXPECT_TRUE(h.ok);
  EXPECT_NE(h.text.find("the last policy load failed"), std::string::npos) << h.text;
  EXPECT_FALSE(metrics::readiness_of(s).ok);
}

// Two exporters in one process each answer for their own snapshot.
TEST(Healthz, EachExporterAnswersForItsOwnDaemon) {
  Exporter a = start_or_die([] { return Result<Snapshot>(with_interfaces({{"a0", "native"}})); });
  Exporter b = start_or_die([] { return Result<Snapshot>(Error{EBADF, "read rule counters"}); });
  EXPECT_EQ(healthz(a).status, 200);
  EXPECT_EQ(healthz(b).status, 503);
  uint16_t port = b.port();
  b = std::move(a);  // the old b stops; its port no longer answers for anyone
  EXPECT_EQ(healthz(b).status, 200);
  EXPECT_FALSE(http_get(port, "/healthz", std::chrono::milliseconds(500)).ok());
}

}  // namespace
}  // namespace rl::testing
