// SPDX-License-Identifier: GPL-2.0-only
// Collector without a server: Snapshot in, metric families out.
#include "metrics/collector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "fixture_snapshot.h"

namespace rl::testing {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using LabelMap = std::map<std::string, std::string>;

std::vector<MetricFamily> collect(metrics::SnapshotFn fn) {
  return metrics::Collector(std::move(fn)).Collect();
}

std::vector<MetricFamily> collect_fixture() {
  return collect([]() -> Result<metrics::Snapshot> { return fixture_snapshot(); });
}

const MetricFamily* find(const std::vector<MetricFamily>& fams, const std::string& name) {
  for (const auto& f : fams)
    if (f.name == name) return &f;
  return nullptr;
}

LabelMap labels_of(const ClientMetric& m) {
  LabelMap l;
  for (const auto& x : m.label) l[x.name] = x.value;
  return l;
}

// The value of the one sample of `name` whose labels are exactly `labels`; NaN if none.
double value(const std::vector<MetricFamily>& fams, const std::string& name,
             const LabelMap& labels = {}) {
  const MetricFamily* f = find(fams, name);
  if (!f) return std::nan("");
  for (const auto& m : f->metric)
    if (labels_of(m) == labels)
      return f->type == MetricType::Counter ? m.counter.value : m.gauge.value;
  return std::nan("");
}

TEST(Collector, EveryFamilyHasHelpAUniqueNameAndTheRightSuffix) {
  auto fams = collect_fixture();
  std::set<std::string> names;
  for (const auto& f : fams) {
    SCOPED_TRACE(f.name);
    EXPECT_TRUE(names.insert(f.name).second) << "duplicate family";
    EXPECT_FALSE(f.help.empty());
    EXPECT_EQ(f.name.rfind("rl_", 0), 0u);
    bool total = f.name.size() > 6 && f.name.substr(f.name.size() - 6) == "_total";
    ASSERT_TRUE(f.type == MetricType::Counter || f.type == MetricType::Gauge ||
                f.type == MetricType::Histogram);
    EXPECT_EQ(total, f.type == MetricType::Counter);
    if (f.type == MetricType::Histogram) {
      EXPECT_EQ(f.name.substr(f.name.size() - 8), "_seconds") << "histograms here measure time";
    }
  }
}

TEST(Collector, UpAndBuildInfo) {
  auto fams = collect_fixture();
  EXPECT_EQ(value(fams, "rl_up"), 1);
  EXPECT_EQ(value(fams, "rl_build_info", {{"version", RL_TEST_EXPECTED_VERSION}}), 1);
}

TEST(Collector, RuleCountersByVerdict) {
  auto fams = collect_fixture();
  auto pk = [&](const char* rule, const char* verdict) {
    return value(fams, "rl_rule_packets_total", {{"rule", rule}, {"verdict", verdict}});
  };
  auto by = [&](const char* rule, const char* verdict) {
    return value(fams, "rl_rule_bytes_total", {{"rule", rule}, {"verdict", verdict}});
  };
  EXPECT_EQ(pk("ssh-per-source", "matched"), 5000);
  EXPECT_EQ(pk("ssh-per-source", "passed"), 5000 - 1234);
  EXPECT_EQ(pk("ssh-per-source", "dropped"), 1234);
  EXPECT_EQ(pk("ssh-per-source", "monitored"), 0);
  EXPECT_EQ(by("ssh-per-source", "matched"), 400000);
  EXPECT_EQ(by("ssh-per-source", "dropped"), 1234 * 80);
  EXPECT_EQ(pk("api-burst", "monitored"), 120);
  EXPECT_EQ(by("api-burst", "monitored"), 144000);
  EXPECT_EQ(by("api-burst", "passed"), 960000);
  EXPECT_EQ(find(fams, "rl_rule_packets_total")->metric.size(), 8u);
  EXPECT_EQ(find(fams, "rl_rule_bytes_total")->metric.size(), 8u);
}

TEST(Collector, RuleInfo) {
  auto fams = collect_fixture();
  EXPECT_EQ(value(fams, "rl_rule_info", {{"rule", "ssh-per-source"}, {"action", "drop"}}), 1);
  EXPECT_EQ(value(fams, "rl_rule_info", {{"rule", "api-burst"}, {"action", "monitor"}}), 1);
  EXPECT_EQ(find(fams, "rl_rule_info")->metric.size(), 2u);
}

// Each data path counter lands in its own series; fixture counter i holds (i + 1) * 11 packets.
TEST(Collector, GlobalCountersByName) {
  struct Expect {
    rl_global_counter index;
    const char* packets;
    const char* bytes;  // nullptr: no bytes series
    LabelMap labels;
  };
  const Expect expected[] = {
      {RL_GC_RX, "rl_received_packets_total", "rl_received_bytes_total", {}},
      {RL_GC_MALFORMED, "rl_malformed_packets_total", "rl_malformed_bytes_total", {}},
      {RL_GC_NON_IP, "rl_non_ip_packets_total", "rl_non_ip_bytes_total", {}},
      {RL_GC_ALLOWLISTED,
       "rl_allowlisted_packets_total",
       "rl_allowlisted_bytes_total",
       {{"list", "policy"}}},
      {RL_GC_RUNTIME_ALLOWED,
       "rl_allowlisted_packets_total",
       "rl_allowlisted_bytes_total",
       {{"list", "runtime"}}},
      {RL_GC_DENYLISTED,
       "rl_denylisted_packets_total",
       "rl_denylisted_bytes_total",
       {{"list", "policy"}}},
      {RL_GC_RUNTIME_DENIED,
       "rl_denylisted_packets_total",
       "rl_denylisted_bytes_total",
       {{"list", "runtime"}}},
      {RL_GC_UNMATCHED, "rl_unmatched_packets_total", "rl_unmatched_bytes_total", {}},
      {RL_GC_KEY_INSERTED, "rl_key_inserts_total", nullptr, {}},
      {RL_GC_KEY_OVERFLOW, "rl_key_overflow_packets_total", "rl_key_overflow_bytes_total", {}},
      {RL_GC_CAS_EXHAUSTED, "rl_cas_exhausted_packets_total", "rl_cas_exhausted_bytes_total", {}},
      {RL_GC_BLOCKED, "rl_blocked_packets_total", "rl_blocked_bytes_total", {}},
      {RL_GC_REPORTS, "rl_offender_reports_total", nullptr, {}},
      {RL_GC_REPORTS_LOST, "rl_offender_reports_lost_total", nullptr, {}},
      {RL_GC_FRAGMENTS, "rl_fragments_total", "rl_fragment_bytes_total", {}},
      {RL_GC_CLUSTER_LIMITED,
       "rl_cluster_limited_packets_total",
       "rl_cluster_limited_bytes_total",
       {}},
      {RL_GC_NEW_UNADMITTED,
       "rl_new_source_unadmitted_packets_total",
       "rl_new_source_unadmitted_bytes_total",
       {}},
      {RL_GC_REPORTS_SHED, "rl_offender_reports_shed_total", nullptr, {}},
      {RL_GC_SYNCOOKIE_SENT, "rl_syn_cookies_sent_total", nullptr, {}},
      {RL_GC_SYNCOOKIE_ACCEPTED, "rl_syn_cookies_accepted_total", nullptr, {}},
      {RL_GC_SYNCOOKIE_REJECTED,
       "rl_syn_cookies_rejected_packets_total",
       "rl_syn_cookies_rejected_bytes_total",
       {}},
      {RL_GC_TRAFFIC_SAMPLED, "rl_traffic_samples_total", "rl_traffic_sampled_bytes_total", {}},
      {RL_GC_TRAFFIC_SHED, "rl_traffic_samples_shed_total", nullptr, {}},
  };
  ASSERT_EQ(std::size(expected), size_t(RL_GC_MAX));
  auto fams = collect_fixture();
  for (const auto& e : expected) {
    SCOPED_TRACE(e.packets);
    EXPECT_EQ(find(fams, e.packets)->type, MetricType::Counter);
    EXPECT_EQ(value(fams, e.packets, e.labels), (e.index + 1) * 11);
    if (e.bytes) {
      EXPECT_EQ(value(fams, e.bytes, e.labels), (e.index + 1) * 1100);
    }
  }
  EXPECT_EQ(find(fams, "rl_allowlisted_packets_total")->metric.size(), 2u);
  EXPECT_EQ(find(fams, "rl_denylisted_bytes_total")->metric.size(), 2u);
  EXPECT_EQ(find(fams, "rl_key_inserts_bytes_total"), nullptr);
}

TEST(Collector, StateGauges) {
  auto fams = collect_fixture();
  EXPECT_EQ(value(fams, "rl_tracked_keys"), 850000);
  EXPECT_EQ(value(fams, "rl_tracked_keys_capacity"), 1048576);
  EXPECT_EQ(value(fams, "rl_active_blocks"), 17);
  EXPECT_EQ(value(fams, "rl_runtime_list_entries", {{"list", "allow"}}), 2);
  EXPECT_EQ(value(fams, "rl_runtime_list_entries", {{"list", "deny"}}), 5);
  EXPECT_EQ(value(fams, "rl_policy_generation"), 4);
  EXPECT_EQ(find(fams, "rl_tracked_keys")->type, MetricType::Gauge);
}

TEST(Collector, PolicyReloads) {
  auto fams = collect_fixture();
  EXPECT_EQ(value(fams, "rl_policy_reloads_total", {{"result", "success"}}), 3);
  EXPECT_EQ(value(fams, "rl_policy_reloads_total", {{"result", "failure"}}), 1);
  EXPECT_EQ(value(fams, "rl_policy_last_reload_success_timestamp_seconds"), 1700000000);
  EXPECT_EQ(value(fams, "rl_policy_last_reload_ok"), 1);

  fams = collect([]() -> Result<metrics::Snapshot> {
    auto s = fixture_snapshot();
    s.last_reload_ok = false;
    return s;
  });
  EXPECT_EQ(value(fams, "rl_policy_last_reload_ok"), 0);
}

TEST(Collector, Interfaces) {
  auto fams = collect_fixture();
  EXPECT_EQ(value(fams, "rl_interface_attached", {{"interface", "eth0"}, {"mode", "native"}}), 1);
  EXPECT_EQ(value(fams, "rl_interface_attached", {{"interface", "eth1"}, {"mode", "generic"}}), 1);
  EXPECT_EQ(find(fams, "rl_interface_attached")->metric.size(), 2u);
}

// An idle rld (no policy, not attached) still describes every family.
TEST(Collector, EmptySnapshotKeepsEveryFamily) {
  auto full = collect_fixture();
  auto empty = collect([]() -> Result<metrics::Snapshot> {
    metrics::Snapshot s;
    s.cluster.enabled = true;  // the fixture's rld has a Redis
    return s;
  });
  ASSERT_EQ(empty.size(), full.size());
  for (size_t i = 0; i < full.size(); ++i) EXPECT_EQ(empty[i].name, full[i].name);
  EXPECT_TRUE(find(empty, "rl_rule_packets_total")->metric.empty());
  EXPECT_TRUE(find(empty, "rl_interface_attached")->metric.empty());
  EXPECT_EQ(value(empty, "rl_up"), 1);
}

// Without a Redis in its configuration rld exports no rl_cluster_* family at all: a node that
// does not take part in a fleet must not look like one whose Redis is down.
TEST(Collector, ClusterFamiliesOnlyWithCluster) {
  auto fams = collect([]() -> Result<metrics::Snapshot> { return metrics::Snapshot{}; });
  // rl_cluster_limited_* are data path counters: every node exports them.
  for (const char* sync_family :
       {"rl_cluster_redis_up", "rl_cluster_syncs_total", "rl_cluster_early_syncs_total",
        "rl_cluster_keys_synced_total", "rl_cluster_keys_last_sync", "rl_cluster_pending_keys",
        "rl_cluster_pending_dropped_total", "rl_cluster_active_blocks", "rl_cluster_peers",
        "rl_cluster_last_pass_seconds", "rl_cluster_sync_errors_total",
        "rl_cluster_sync_duration_seconds"}) {
    EXPECT_EQ(find(fams, sync_family), nullptr) << sync_family;
    EXPECT_NE(find(collect_fixture(), sync_family), nullptr) << sync_family;
  }
  auto full = collect_fixture();
  EXPECT_EQ(value(full, "rl_cluster_redis_up"), 1);
  EXPECT_EQ(value(full, "rl_cluster_peers"), 3);
  EXPECT_EQ(value(full, "rl_cluster_last_pass_seconds"), 0.042);
  EXPECT_EQ(value(full, "rl_cluster_sync_errors_total", {{"kind", "timeout"}}), 1);
}

// Every error kind the sync counts reaches /metrics, the refusals an operator must mend (a user,
// a permission, a certificate, a cluster node named as one server) included; each is there at 0
// before its first failure.
TEST(Collector, EveryCountedErrorKindIsExported) {
  auto none = collect([]() -> Result<metrics::Snapshot> {
    metrics::Snapshot s;
    s.cluster.enabled = true;
    return s;
  });
  for (const char* kind : {"unavailable", "timeout", "auth", "permission", "tls", "redirect",
                           "rejected", "partial", "heartbeat", "datapath"})
    EXPECT_EQ(value(none, "rl_cluster_sync_errors_total", {{"kind", kind}}), 0) << kind;
  auto fams = collect([]() -> Result<metrics::Snapshot> {
    metrics::Snapshot s;
    s.cluster.enabled = true;
    s.cluster.errors = {{"tls", 315},
                        {"auth", 2},
                        {"permission", 7},
                        {"redirect", 4},
                        {"a-kind-not-yet-listed", 1}};
    return s;
  });
  EXPECT_EQ(value(fams, "rl_cluster_sync_errors_total", {{"kind", "tls"}}), 315);
  EXPECT_EQ(value(fams, "rl_cluster_sync_errors_total", {{"kind", "auth"}}), 2);
  EXPECT_EQ(value(fams, "rl_cluster_sync_errors_total", {{"kind", "permission"}}), 7);
  EXPECT_EQ(value(fams, "rl_cluster_sync_errors_total", {{"kind", "redirect"}}), 4);
  EXPECT_EQ(value(fams, "rl_cluster_sync_errors_total", {{"kind", "a-kind-not-yet-listed"}}), 1);
}

// A Redis Cluster's masters, one sample per master and family; no sample with one server.
TEST(Collector, ClusterMastersEachHaveTheirSamples) {
  auto one_server = collect([]() -> Result<metrics::Snapshot> {
    metrics::Snapshot s;
    s.cluster.enabled = true;
    return s;
  });
  ASSERT_NE(find(one_server, "rl_cluster_redis_server_up"), nullptr);
  EXPECT_TRUE(find(one_server, "rl_cluster_redis_server_up")->metric.empty());
  auto fams = collect([]() -> Result<metrics::Snapshot> {
    metrics::Snapshot s;
    s.cluster.enabled = true;
    s.cluster.servers = {{"10.0.0.5:6379", 8192, true, 0, 4, 1, 0.0005},
                         {"10.0.0.6:6379", 8192, false, 3, 0, 0, 0}};
    return s;
  });
  EXPECT_EQ(value(fams, "rl_cluster_redis_server_up", {{"server", "10.0.0.5:6379"}}), 1);
  EXPECT_EQ(value(fams, "rl_cluster_redis_server_up", {{"server", "10.0.0.6:6379"}}), 0);
  EXPECT_EQ(value(fams, "rl_cluster_redis_server_slots", {{"server", "10.0.0.6:6379"}}), 8192);
  EXPECT_EQ(
      value(fams, "rl_cluster_redis_server_round_trip_seconds", {{"server", "10.0.0.5:6379"}}),
      0.0005);
  EXPECT_EQ(value(fams, "rl_cluster_redis_server_errors_total", {{"server", "10.0.0.6:6379"}}), 3);
  EXPECT_EQ(value(fams, "rl_cluster_redis_redirects_total",
                  {{"server", "10.0.0.5:6379"}, {"kind", "moved"}}),
            4);
  EXPECT_EQ(value(fams, "rl_cluster_redis_redirects_total",
                  {{"server", "10.0.0.5:6379"}, {"kind", "ask"}}),
            1);
}

// A master that holds none of this node's keys was never asked anything: it has its other
// samples but no up sample, so that an alert on up == 0 cannot fire for a healthy master.
TEST(Collector, AMasterNeverAskedHasNoUpSample) {
  auto fams = collect([]() -> Result<metrics::Snapshot> {
    metrics::Snapshot s;
    s.cluster.enabled = true;
    s.cluster.servers = {{"10.0.0.5:6379", 8192, true, 0, 0, 0, 0.0005, true},
                         {"10.0.0.6:6379", 8192, false, 0, 0, 0, 0, false}};
    return s;
  });
  const auto* up = find(fams, "rl_cluster_redis_server_up");
  ASSERT_NE(up, nullptr);
  ASSERT_EQ(up->metric.size(), 1u);
  EXPECT_EQ(up->metric[0].label[0].value, "10.0.0.5:6379");
  EXPECT_EQ(value(fams, "rl_cluster_redis_server_slots", {{"server", "10.0.0.6:6379"}}), 8192);
}

void expect_failed_scrape(const std::vector<MetricFamily>& fams) {
  ASSERT_EQ(fams.size(), 2u);
  EXPECT_EQ(value(fams, "rl_up"), 0);
  EXPECT_EQ(find(fams, "rl_up")->type, MetricType::Gauge);
  EXPECT_EQ(value(fams, "rl_build_info", {{"version", RL_TEST_EXPECTED_VERSION}}), 1);
}

TEST(Collector, SnapshotErrorExportsOnlyUpZeroAndBuildInfo) {
  expect_failed_scrape(collect([]() -> Result<metrics::Snapshot> {
    return Error{EPERM, "reading rl_global_stats"};
  }));
}

TEST(Collector, ThrowingSnapshotIsAFailedScrape) {
  expect_failed_scrape(
      collect([]() -> Result<metrics::Snapshot> { throw std::runtime_error("boom"); }));
}

TEST(Collector, MissingSnapshotFnIsAFailedScrape) { expect_failed_scrape(collect(nullptr)); }

// Every scrape reads afresh: nothing is cached between scrapes.
TEST(Collector, ReadsTheSnapshotAtEachScrape) {
  int calls = 0;
  metrics::Collector c([&]() -> Result<metrics::Snapshot> {
    ++calls;
    auto s = fixture_snapshot();
    s.rules[0].counters.dropped_pkts = calls;
    if (calls == 3) return Error{0, "gone"};
    return s;
  });
  auto dropped = [](const std::vector<MetricFamily>& f) {
    return value(f, "rl_rule_packets_total", {{"rule", "ssh-per-source"}, {"verdict", "dropped"}});
  };
  EXPECT_EQ(dropped(c.Collect()), 1);
  EXPECT_EQ(dropped(c.Collect()), 2);
  EXPECT_EQ(value(c.Collect(), "rl_up"), 0);
  EXPECT_EQ(dropped(c.Collect()), 4);
  EXPECT_EQ(calls, 4);
}

}  // namespace
}  // namespace rl::testing
