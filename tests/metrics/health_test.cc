// SPDX-License-Identifier: GPL-2.0-only
// /healthz over real HTTP: 200 while every interface runs a program and the data path reads,
// 503 with the reason otherwise; /metrics is unaffected.
#include <gtest/gtest.h>

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

HttpResponse healthz(const Exporter& e) {
  auto r = http_get(e.port(), "/healthz");
  if (!r) ADD_FAILURE() << r.error().str();
  return r ? *r : HttpResponse{};
}

TEST(Healthz, OkWhileEveryInterfaceRunsAProgram) {
  auto e = Exporter::start("127.0.0.1:0", [] {
    return Result<Snapshot>(with_interfaces({{"eth0", "native"}, {"eth1", "generic"}}));
  });
  ASSERT_TRUE(e.ok()) << e.error().str();
  auto r = healthz(*e);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok\neth0: native\neth1: generic\n");
  EXPECT_NE(r.headers.find("text/plain"), std::string::npos) << r.headers;
  auto m = http_get(e->port(), "/metrics");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->status, 200);
  EXPECT_NE(m->body.find("rl_up 1"), std::string::npos);
}

TEST(Healthz, UnavailableWhenAnInterfaceLostItsProgram) {
  auto e = Exporter::start("127.0.0.1:0", [] {
    return Result<Snapshot>(with_interfaces({{"eth0", "native"}, {"eth1", "none"}}));
  });
  ASSERT_TRUE(e.ok()) << e.error().str();
  auto r = healthz(*e);
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, "unhealthy\neth0: native\neth1: no XDP program attached (none)\n");
}

TEST(Healthz, UnavailableWhenTheDataPathCannotBeRead) {
  auto e = Exporter::start("127.0.0.1:0", [] {
    return Result<Snapshot>(Error{EBADF, "read rule counters"});
  });
  ASSERT_TRUE(e.ok()) << e.error().str();
  auto r = healthz(*e);
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body.find("cannot read the data path: read rule counters"), std::string::npos)
      << r.body;
}

TEST(Healthz, AFailedReloadIsReportedButHealthy) {
  Snapshot s = with_interfaces({{"eth0", "native"}});
  s.last_reload_ok = false;
  auto h = metrics::health_of(s);
  EXPECT_TRUE(h.ok);
  EXPECT_NE(h.text.find("last policy reload failed"), std::string::npos) << h.text;
}

// Two exporters in one process each answer for their own snapshot.
TEST(Healthz, EachExporterAnswersForItsOwnDaemon) {
  auto a = Exporter::start("127.0.0.1:0", [] {
    return Result<Snapshot>(with_interfaces({{"a0", "native"}}));
  });
  auto b = Exporter::start("127.0.0.1:0", [] {
    return Result<Snapshot>(with_interfaces({{"b0", "none"}}));
  });
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(healthz(*a).status, 200);
  EXPECT_EQ(healthz(*b).status, 503);
  uint16_t port = b->port();
  *b = std::move(*a);  // the old b stops; its port no longer answers for anyone
  EXPECT_EQ(healthz(*b).status, 200);
  EXPECT_FALSE(http_get(port, "/healthz", std::chrono::milliseconds(500)).ok());
}

}  // namespace
}  // namespace rl::testing
