// SPDX-License-Identifier: GPL-2.0-only
#include "metrics/families.h"

#include <limits>

#include <array>
#include <string>
#include <utility>

namespace rl::metrics {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

MetricFamily family(std::string name, std::string help, MetricType type) {
  return MetricFamily{std::move(name), std::move(help), type, {}};
}

void add_sample(MetricFamily& f, double value, Labels labels = {}) {
  ClientMetric m;
  m.label = std::move(labels);
  if (f.type == MetricType::Counter)
    m.counter.value = value;
  else
    m.gauge.value = value;
  f.metric.push_back(std::move(m));
}

MetricFamily gauge(std::string name, std::string help, double value) {
  MetricFamily f = family(std::move(name), std::move(help), MetricType::Gauge);
  add_sample(f, value);
  return f;
}

MetricFamily counter(std::string name, std::string help, double value) {
  MetricFamily f = family(std::move(name), std::move(help), MetricType::Counter);
  add_sample(f, value);
  return f;
}

// ---- Data path global counters ----------------------------------------------------------------

// The counters' names and help come from abi/rl_counters.h.
struct GlobalCounter {
  rl_global_counter index;
  const char* packets;  // family counting packets, or events for counters that carry no bytes
  const char* bytes;    // "" where the data path counts an event, not a packet's bytes
  const char* list;     // value of the "list" label; several counters can share one family
  const char* help;     // "" for a counter whose family's first counter has the help
};

#define RL_GC_ROW(id, name, packets, bytes, list, help) {RL_GC_##id, packets, bytes, list, help},
constexpr GlobalCounter kGlobalCounters[] = {RL_GLOBAL_COUNTERS(RL_GC_ROW)};
#undef RL_GC_ROW
static_assert(std::size(kGlobalCounters) == RL_GC_MAX);

// Counters sharing a family (the "list" label) add samples to the family of their first entry.
MetricFamily& counter_family(std::vector<MetricFamily>& out, const char* name,
                             const std::string& help) {
  for (auto& f : out)
    if (f.name == name) return f;
  out.push_back(family(name, help, MetricType::Counter));
  return out.back();
}

void add_global_counters(std::vector<MetricFamily>& out, const Snapshot& s) {
  std::vector<MetricFamily> families;
  for (const auto& c : kGlobalCounters) {
    const rl_counter& v = s.global[c.index];
    Labels labels;
    if (*c.list) labels.push_back({"list", c.list});
    add_sample(counter_family(families, c.packets, c.help), double(v.pkts), labels);
    if (*c.bytes) {
      std::string help =
          std::string("Bytes of the frames counted by ") + c.packets + " (L2 header included).";
      add_sample(counter_family(families, c.bytes, help), double(v.bytes), labels);
    }
  }
  for (auto& f : families) out.push_back(std::move(f));
}

// ---- Rules --------------------------------------------------------------------------------------

struct Verdict {
  const char* name;
  __u64 rl_rule_counters::*packets;
  __u64 rl_rule_counters::*bytes;
};

constexpr std::array<Verdict, 4> kVerdicts{{
    {"matched", &rl_rule_counters::matched_pkts, &rl_rule_counters::matched_bytes},
    {"passed", &rl_rule_counters::passed_pkts, &rl_rule_counters::passed_bytes},
    {"dropped", &rl_rule_counters::dropped_pkts, &rl_rule_counters::dropped_bytes},
    {"monitored", &rl_rule_counters::monitored_pkts, &rl_rule_counters::monitored_bytes},
}};

// The verdicts overlap (matched = passed + dropped, monitored is part of passed), so the help
// says so: summing over the label would count packets twice.
constexpr char kVerdictNote[] =
    " verdict: matched = passed + dropped; monitored (over the limit under a monitor rule) is "
    "part of passed.";

void add_rules(std::vector<MetricFamily>& out, const Snapshot& s) {
  auto info = family("rl_rule_info", "A rule of the active policy and its action; always 1.",
                     MetricType::Gauge);
  auto packets = family("rl_rule_packets_total",
                        std::string("Packets matched by a rule, by verdict.") + kVerdictNote,
                        MetricType::Counter);
  auto bytes = family("rl_rule_bytes_total",
                      std::string("Bytes matched by a rule, by verdict.") + kVerdictNote,
                      MetricType::Counter);
  auto refused = family("rl_rule_limit_refused_packets_total",
                        "Packets of a rule with stacked limits that one of its limits refused "
                        "(dropped, or monitored under a monitor rule), by limit.",
                        MetricType::Counter);
  for (const auto& r : s.rules) {
    for (const auto& [limit, c] : r.limits)
      add_sample(refused, double(c.pkts), {{"rule", r.name}, {"limit", limit}});
    add_sample(info, 1, {{"rule", r.name}, {"action", r.action}});
    for (const auto& v : kVerdicts) {
      add_sample(packets, double(r.counters.*v.packets), {{"rule", r.name}, {"verdict", v.name}});
      add_sample(bytes, double(r.counters.*v.bytes), {{"rule", r.name}, {"verdict", v.name}});
    }
  }
  out.push_back(std::move(info));
  out.push_back(std::move(packets));
  out.push_back(std::move(bytes));
  out.push_back(std::move(refused));
}

// ---- State gauges
// ---------------------------------------------------------------------------------

void add_key_table(std::vector<MetricFamily>& out, const Snapshot& s) {
  out.push_back(
      gauge("rl_tracked_keys",
            "Keys in the key table that still hold state (limited, refilling or blocked).",
            double(s.keys_tracked)));
  out.push_back(
      gauge("rl_tracked_keys_capacity", "Key table slots in total.", double(s.keys_capacity)));
  out.push_back(gauge("rl_tracked_keys_capacity_in_use",
                      "Key table slots in the sets packets use: the table starts small and rld "
                      "grows it toward the capacity as keys arrive.",
                      double(s.keys_capacity_in_use)));
  out.push_back(gauge("rl_active_blocks", "Keys inside a block period.", double(s.active_blocks)));
  auto lists = family("rl_runtime_list_entries",
                      "Runtime allow/deny entries (rlctl allow|deny), both address families.",
                      MetricType::Gauge);
  add_sample(lists, double(s.runtime_allow_entries), {{"list", "allow"}});
  add_sample(lists, double(s.runtime_deny_entries), {{"list", "deny"}});
  out.push_back(std::move(lists));
  auto overrides = family(
      "rl_overrides",
      "Runtime overrides (rlctl override) of a rule's limits, both address families; at most " +
          std::to_string(RL_OVERRIDES_MAX) + " per family.",
      MetricType::Gauge);
  for (const auto& [rule, n] : s.overrides) add_sample(overrides, double(n), {{"rule", rule}});
  out.push_back(std::move(overrides));
}

void add_connections(std::vector<MetricFamily>& out, const Snapshot& s) {
  const ConnectionsSnapshot& c = s.connections;
  out.push_back(gauge("rl_connections_counted",
                      "Open connections counted against connection limits, from conntrack's "
                      "events.",
                      double(c.counted)));
  out.push_back(counter("rl_connection_events_lost_total",
                        "Times conntrack's event socket overran and events were lost: counts may "
                        "stay low until those connections close.",
                        double(c.events_lost)));
  out.push_back(counter("rl_connection_count_errors_total",
                        "conntrack events that could not be read or counted.", double(c.errors)));
}

void add_policy(std::vector<MetricFamily>& out, const Snapshot& s) {
  out.push_back(gauge("rl_policy_generation",
                      "Rule set generation counter; increments each time a policy is applied.",
                      double(s.generation)));
  auto reloads = family("rl_policy_reloads_total", "Policy reloads since rld started, by result.",
                        MetricType::Counter);
  add_sample(reloads, double(s.reloads_ok), {{"result", "success"}});
  add_sample(reloads, double(s.reloads_failed), {{"result", "failure"}});
  out.push_back(std::move(reloads));
  out.push_back(gauge("rl_policy_last_reload_success_timestamp_seconds",
                      "Unix time of the last successful policy load; 0 if none.",
                      s.last_reload_success_seconds));
  auto prefixes =
      family("rl_set_prefixes", "Prefixes of a source set of the policy in force, after repeats.",
             MetricType::Gauge);
  auto updated =
      family("rl_set_updated_timestamp_seconds",
             "Unix time the prefixes of a source set last changed in force.", MetricType::Gauge);
  for (const auto& set : s.sets) {
    add_sample(prefixes, double(set.prefixes), {{"set", set.name}});
    add_sample(updated, set.updated_seconds, {{"set", set.name}});
  }
  out.push_back(std::move(prefixes));
  out.push_back(std::move(updated));
  out.push_back(gauge(
      "rl_policy_last_reload_ok",
      "1 if the last policy reload succeeded, 0 if it failed (the previous rules stay active).",
      s.last_reload_ok ? 1 : 0));
}

void add_interfaces(std::vector<MetricFamily>& out, const Snapshot& s) {
  auto f = family("rl_interface_attached",
                  "An interface the XDP program is attached to, with its XDP mode; always 1.",
                  MetricType::Gauge);
  for (const auto& i : s.interfaces) add_sample(f, 1, {{"interface", i.name}, {"mode", i.mode}});
  out.push_back(std::move(f));
}

// A Redis Cluster's masters, one sample each, labelled by address; the families have no sample
// with one server, but are described all the same, as every family is.
void add_cluster_servers(std::vector<MetricFamily>& out, const ClusterSnapshot& c) {
  auto up = family("rl_cluster_redis_server_up",
                   "1 if the last call to this Redis Cluster master succeeded; no sample while "
                   "it holds none of this node's keys.",
                   MetricType::Gauge);
  auto slots = family("rl_cluster_redis_server_slots", "Slots this Redis Cluster master serves.",
                      MetricType::Gauge);
  auto rtt =
      family("rl_cluster_redis_server_round_trip_seconds",
             "Round trip of the last sync with this Redis Cluster master.", MetricType::Gauge);
  auto errors = family("rl_cluster_redis_server_errors_total",
                       "Calls to this Redis Cluster master that failed.", MetricType::Counter);
  auto redirects = family("rl_cluster_redis_redirects_total",
                          "MOVED and ASK replies from this Redis Cluster master, followed.",
                          MetricType::Counter);
  for (const auto& sv : c.servers) {
    if (sv.contacted) add_sample(up, sv.up ? 1 : 0, {{"server", sv.addr}});
    add_sample(slots, double(sv.slots), {{"server", sv.addr}});
    add_sample(rtt, sv.round_trip_seconds, {{"server", sv.addr}});
    add_sample(errors, double(sv.errors), {{"server", sv.addr}});
    add_sample(redirects, double(sv.moved), {{"server", sv.addr}, {"kind", "moved"}});
    add_sample(redirects, double(sv.ask), {{"server", sv.addr}, {"kind", "ask"}});
  }
  for (auto* f : {&up, &slots, &rtt, &errors, &redirects}) out.push_back(std::move(*f));
}

// Cluster sync: only when rld has a Redis configured.
void add_cluster(std::vector<MetricFamily>& out, const Snapshot& s) {
  const ClusterSnapshot& c = s.cluster;
  if (!c.enabled) return;
  out.push_back(
      gauge("rl_cluster_redis_up", "1 if the last call to Redis succeeded.", c.redis_up ? 1 : 0));
  auto add_counter = [&](const char* name, const char* help, uint64_t v) {
    out.push_back(counter(name, help, double(v)));
  };
  add_counter("rl_cluster_syncs_total", "Successful syncs with Redis (one round trip each).",
              c.syncs);
  add_counter("rl_cluster_early_syncs_total",
              "Syncs started before the timer because a key passed its share of a fleet limit.",
              c.early_syncs);
  add_counter("rl_cluster_keys_synced_total", "Key deltas sent to Redis.", c.keys_synced_total);
  out.push_back(gauge("rl_cluster_keys_last_sync", "Key deltas in the last successful sync.",
                      double(c.keys_last_sync)));
  out.push_back(
      gauge("rl_cluster_pending_keys",
            "Keys whose deltas wait for Redis (kept while it is unreachable, replayed after).",
            double(c.pending_keys)));
  add_counter("rl_cluster_pending_dropped_total",
              "Key deltas refused because the pending buffer was full.", c.pending_dropped);
  out.push_back(gauge("rl_cluster_active_blocks",
                      "Keys the fleet has used up, blocked in this node's kernel.",
                      double(c.active_blocks)));
  out.push_back(
      gauge("rl_cluster_peers", "Nodes seen alive in Redis (this one included).", double(c.peers)));
  add_counter("rl_cluster_masters_changed_total",
              "Connections to another Redis master than the one before (Sentinel), or slot maps "
              "unlike the one before (Redis Cluster): failovers and migrations followed.",
              c.servers_changed);
  add_cluster_servers(out, c);
  out.push_back(gauge("rl_cluster_last_pass_seconds",
                      "How long the last sync pass took, from reading the kernel's counts to "
                      "writing the fleet's blocks; above the sync interval, syncs fall behind.",
                      c.last_pass_seconds));
  auto errors =
      family("rl_cluster_sync_errors_total", "Failed sync steps, by kind.", MetricType::Counter);
  // Every kind the sync counts (docs/metrics.md), each from the start so that an alert's
  // rate() sees its first failure; and any kind counted beyond those, rather than none.
  std::map<std::string, uint64_t> kinds = c.errors;
  for (const char* kind : {"unavailable", "timeout", "auth", "permission", "tls", "redirect",
                           "rejected", "partial", "heartbeat", "datapath"})
    kinds.emplace(kind, 0);
  for (const auto& [kind, n] : kinds) add_sample(errors, double(n), {{"kind", kind}});
  out.push_back(std::move(errors));
  auto h = family("rl_cluster_sync_duration_seconds", "Round trip of one sync with Redis.",
                  MetricType::Histogram);
  ClientMetric m;
  m.histogram.sample_count = c.rtt_count;
  m.histogram.sample_sum = c.rtt_sum_seconds;
  for (size_t i = 0; i < c.rtt_bounds.size() && i < c.rtt_buckets.size(); i++)
    m.histogram.bucket.push_back({c.rtt_buckets[i], c.rtt_bounds[i]});
  m.histogram.bucket.push_back({c.rtt_count, std::numeric_limits<double>::infinity()});
  h.metric.push_back(std::move(m));
  out.push_back(std::move(h));
}

void add_process(std::vector<MetricFamily>& out, bool up) {
  out.push_back(gauge("rl_up", "1 if rld read the data path for this scrape, 0 if it could not.",
                      up ? 1 : 0));
  auto f = family("rl_build_info", "The running rld's version; always 1.", MetricType::Gauge);
  add_sample(f, 1, {{"version", std::string(version())}});
  out.push_back(std::move(f));
}

}  // namespace

std::string_view version() { return RL_VERSION; }

std::vector<MetricFamily> snapshot_families(const Snapshot& snapshot) {
  std::vector<MetricFamily> out;
  add_process(out, true);
  add_rules(out, snapshot);
  add_global_counters(out, snapshot);
  add_key_table(out, snapshot);
  add_connections(out, snapshot);
  add_policy(out, snapshot);
  add_interfaces(out, snapshot);
  add_cluster(out, snapshot);
  return out;
}

std::vector<MetricFamily> failed_scrape_families() {
  std::vector<MetricFamily> out;
  add_process(out, false);
  return out;
}

}  // namespace rl::metrics
