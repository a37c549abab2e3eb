// SPDX-License-Identifier: GPL-2.0-only
// The status model as `rlctl status` and a metrics scrape render it: the same facts in both.
#include <gtest/gtest.h>

#include "daemon/status.h"

namespace rl::daemon {
namespace {

StatusModel model() {
  StatusModel m;
  m.version = "1.2.3";
  m.policy_dir = "/etc/rl/policies";
  m.pin_root = "/sys/fs/bpf/rl";
  m.uptime = std::chrono::seconds(42);
  m.last_reload.ok = false;
  m.last_reload.trigger = "inotify";
  m.last_reload.generation = 7;
  m.last_reload.errors = {"a.yaml:3:5: error: unknown key 'rat'"};
  m.last_good_reload =
      std::chrono::system_clock::time_point{} + std::chrono::seconds(1'700'000'000);
  m.reloads_ok = 6;
  m.reloads_failed = 1;
  m.rules = 3;
  m.interfaces = {{"eth0", "native"}, {"eth1", "generic"}};
  m.keys.tracked = 1000;
  m.keys.blocked = 10;
  m.keys_capacity = 1 << 20;
  return m;
}

TEST(Status, JsonAndSnapshotTellTheSameStory) {
  StatusModel m = model();
  m.keys.at = std::chrono::steady_clock::now();
  control::Json j = status_json(m, m.keys.at + std::chrono::milliseconds(250));
  metrics::Snapshot s;
  fill_snapshot(m, s);

  EXPECT_EQ(j["generation"], 7);
  EXPECT_EQ(s.generation, 7u);
  EXPECT_EQ(j["reloads"]["ok"], 6);
  EXPECT_EQ(s.reloads_ok, 6u);
  EXPECT_EQ(j["reloads"]["failed"], 1);
  EXPECT_EQ(s.reloads_failed, 1u);
  EXPECT_FALSE(j["last_reload"]["ok"]);
  EXPECT_FALSE(s.last_reload_ok);
  EXPECT_EQ(j["last_good_reload"], 1'700'000'000);
  EXPECT_DOUBLE_EQ(s.last_reload_success_seconds, 1.7e9);
  EXPECT_EQ(j["keys"]["tracked"], 1000);
  EXPECT_EQ(s.keys_tracked, 1000u);
  EXPECT_EQ(j["keys"]["blocked"], 10);
  EXPECT_EQ(s.active_blocks, 10u);
  EXPECT_EQ(j["keys"]["capacity"], 1 << 20);
  EXPECT_EQ(s.keys_capacity, 1u << 20);
  EXPECT_EQ(j["keys"]["counted_ms_ago"], 250);
  ASSERT_EQ(j["interfaces"].size(), 2u);
  ASSERT_EQ(s.interfaces.size(), 2u);
  EXPECT_EQ(j["interfaces"][1]["mode"], "generic");
  EXPECT_EQ(s.interfaces[1].mode, "generic");
  EXPECT_TRUE(j["pins_outlive_rld"]);
  EXPECT_EQ(j["uptime_seconds"], 42);
  EXPECT_FALSE(j.contains("reload_running")) << "known on the event loop only";
}

TEST(Status, BeforeTheFirstReloadNothingHasFailed) {
  StatusModel m;
  control::Json j = status_json(m);
  metrics::Snapshot s;
  fill_snapshot(m, s);
  EXPECT_TRUE(s.last_reload_ok);
  EXPECT_TRUE(j["last_reload"]["at"].is_null());
  EXPECT_TRUE(j["last_good_reload"].is_null());
  m.pin_warning = "pins live in a private bpffs";
  m.reload_running = true;
  j = status_json(m);
  EXPECT_FALSE(j["pins_outlive_rld"]);
  EXPECT_TRUE(j["reload_running"]);
}

// A model of an rld that enforces its policy on its interfaces, as readiness sees it.
StatusModel ready_model() {
  StatusModel m = model();
  m.last_reload.ok = true;
  m.last_reload.errors.clear();
  m.configured_interfaces = {"eth0", "eth1"};
  return m;
}

TEST(Readiness, ReadyWhenThePolicyIsEnforcedOnEveryInterface) {
  Readiness r = readiness(ready_model());
  EXPECT_TRUE(r.ready);
  EXPECT_FALSE(r.degraded);
  EXPECT_TRUE(r.reasons.empty());
  EXPECT_EQ(r.summary,
            "enforcing 3 rules (generation 7) on 2 interfaces: eth0 (native), eth1 (generic)");
}

TEST(Readiness, AnEmptyPolicyDirectoryIsAnEnforcedEmptyRuleSet) {
  StatusModel m = ready_model();
  m.rules = 0;
  m.last_reload.no_files = true;
  Readiness r = readiness(m);
  EXPECT_TRUE(r.ready);
  EXPECT_NE(r.summary.find("enforcing 0 rules"), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("/etc/rl/policies holds no policy files"), std::string::npos)
      << r.summary;
}

TEST(Readiness, AFailedLoadIsNotReady) {
  StatusModel m = ready_model();
  m.last_reload.ok = false;
  m.last_reload.errors = {"/etc/rl/policies/a.yaml:3:5: error: unknown key 'rat'"};
  Readiness r = readiness(m);
  EXPECT_FALSE(r.ready);
  EXPECT_FALSE(r.degraded) << "the directory's policy was enforced before";
  ASSERT_EQ(r.reasons.size(), 1u);
  EXPECT_EQ(r.reasons[0],
            "the last policy load failed (inotify); the policy before it is enforced: "
            "/etc/rl/policies/a.yaml:3:5: error: unknown key 'rat'");
}

TEST(Readiness, AnAdoptedRuleSetWhosePolicyFailedIsDegraded) {
  StatusModel m = ready_model();
  m.adopted = true;
  m.reloads_ok = 0;
  m.last_reload.ok = false;
  m.last_reload.trigger = "startup";
  m.last_reload.errors = {"/etc/rl/policies/a.yaml:3:5: error: unknown key 'rat'"};
  Readiness r = readiness(m);
  EXPECT_FALSE(r.ready);
  EXPECT_TRUE(r.degraded);
  ASSERT_EQ(r.reasons.size(), 1u);
  EXPECT_EQ(r.reasons[0],
            "degraded: the policy in /etc/rl/policies did not load; enforcing the 3 rules adopted "
            "from the pinned state: /etc/rl/policies/a.yaml:3:5: error: unknown key 'rat'");
  control::Json j = status_json(m);
  EXPECT_FALSE(j["ready"]);
  EXPECT_TRUE(j["degraded"]);
  EXPECT_EQ(j["not_ready"][0], r.reasons[0]);
  metrics::Snapshot s;
  fill_snapshot(m, s);
  EXPECT_TRUE(s.degraded);
  EXPECT_EQ(s.not_ready, r.reasons);

  // A valid policy since: what it is configured with is enforced.
  m.reloads_ok = 1;
  m.last_reload.ok = true;
  m.last_reload.trigger = "inotify";
  EXPECT_TRUE(readiness(m).ready);
  EXPECT_FALSE(readiness(m).degraded);
}

TEST(Readiness, NoPolicyYetIsNotReady) {
  StatusModel m = ready_model();
  m.reloads_ok = 0;
  m.last_reload = {};
  Readiness r = readiness(m);
  EXPECT_FALSE(r.ready);
  ASSERT_EQ(r.reasons.size(), 1u);
  EXPECT_EQ(r.reasons[0], "no policy enforced yet");
}

TEST(Readiness, EveryConfiguredInterfaceMustRunTheProgram) {
  StatusModel m = ready_model();
  m.configured_interfaces = {"eth0", "eth1", "bond0"};
  m.interfaces = {{"eth0", "native"}, {"eth1", "none"}};
  Readiness r = readiness(m);
  EXPECT_FALSE(r.ready);
  EXPECT_EQ(r.reasons, (std::vector<std::string>{"bond0: not attached",
                                                 "eth1: no XDP program attached (none)"}));
  control::Json j = status_json(m);
  EXPECT_FALSE(j["ready"]);
  EXPECT_FALSE(j["degraded"]);
}

}  // namespace
}  // namespace rl::daemon
