// SPDX-License-Identifier: GPL-2.0-only
// rlctl's text output from responses, without an rld: the lines and tables each command prints.
#include <gtest/gtest.h>

#include <sstream>

#include "common/cli_exit.h"
#include "rlctl/commands/render.h"

namespace rlctl {
namespace {

template <class F>
std::string text(F render) {
  std::ostringstream out;
  render(out);
  return out.str();
}

TEST(Render, Numbers) {
  EXPECT_EQ(num(2.25), "2.2");
  EXPECT_EQ(num(0.0), "0.0");
  EXPECT_EQ(num(uint64_t{12}), "12");
  EXPECT_EQ(num(int64_t{-3}), "-3");
  EXPECT_EQ(num(std::optional<double>{}), "-");
  EXPECT_EQ(num(std::optional<uint64_t>{7}), "7");
}

TEST(Render, Status) {
  proto::StatusResponse s;
  s.version = "1.2.3";
  s.uptime_seconds = 60;
  s.interfaces = {{"eth0", "native"}};
  s.generation = 4;
  s.rules = 2;
  s.policy_dir = "/etc/rl/policies";
  s.last_reload = {true, "inotify", 1700000000, {}};
  s.keys = {10, 1, 40, 20, 0};
  EXPECT_EQ(text([&](auto& o) { render_status(s, o); }),
            "rld 1.2.3, up 60 s\n"
            "interface eth0: native\n"
            "policy: generation 4, 2 rules from /etc/rl/policies\n"
            "last reload: ok (inotify)\n"
            "keys: 10 tracked of 40 (25.0%), 1 blocked; table in use 20\n");
  s.adopted = true;
  s.interfaces.clear();
  s.pins_outlive_rld = false;
  s.pin_warning = "/sys/fs/bpf is not a BPF file system";
  s.not_ready = {"eth0: not attached"};
  s.last_reload = {false, "rlctl", std::nullopt, {"a.yaml:1:1: error: x"}};
  s.keys = {0, 0, 0, 0, 0};
  EXPECT_EQ(text([&](auto& o) { render_status(s, o); }),
            "rld 1.2.3, up 60 s (adopted a running data path)\n"
            "no interface attached\n"
            "WARNING: /sys/fs/bpf is not a BPF file system\n"
            "NOT READY: eth0: not attached\n"
            "policy: generation 4, 2 rules from /etc/rl/policies\n"
            "last reload: FAILED (rlctl)\n"
            "  a.yaml:1:1: error: x\n"
            "keys: 0 tracked of 0 (0.0%), 0 blocked; table in use 0\n");
  // Degraded: the rules in force are the ones adopted from the pins, not the policy directory's.
  s.interfaces = {{"eth0", "native"}};
  s.pins_outlive_rld = true;
  s.degraded = true;
  s.pin_root = "/sys/fs/bpf/rl";
  s.not_ready = {"degraded: the policy in /etc/rl/policies did not load"};
  s.last_reload = {false, "startup", std::nullopt, {"a.yaml:1:1: error: x"}};
  EXPECT_EQ(text([&](auto& o) { render_status(s, o); }),
            "rld 1.2.3, up 60 s (adopted a running data path)\n"
            "interface eth0: native\n"
            "NOT READY: degraded: the policy in /etc/rl/policies did not load\n"
            "policy: generation 4, 2 rules adopted from the pins in /sys/fs/bpf/rl (the policy "
            "in /etc/rl/policies did not load)\n"
            "last reload: FAILED (startup)\n"
            "  a.yaml:1:1: error: x\n"
            "keys: 0 tracked of 0 (0.0%), 0 blocked; table in use 0\n");
}

// rlctl status exits 4 (kExitNotReady) whenever rld gives a reason it is not ready, and 0 when
// it gives none (also from an rld older than the readiness fields).
TEST(Render, StatusExitCode) {
  proto::StatusResponse s;
  s.ready = true;
  EXPECT_EQ(status_exit_code(s), rl::kExitOk);
  s.ready = false;
  EXPECT_EQ(status_exit_code(s), rl::kExitOk) << "no reasons: an rld without readiness fields";
  s.not_ready = {"eth0: not attached"};
  EXPECT_EQ(status_exit_code(s), rl::kExitNotReady);
  EXPECT_EQ(rl::kExitNotReady, 4);
  s.not_ready = {"degraded: the policy in /etc/rl/policies did not load"};
  s.degraded = true;
  EXPECT_EQ(status_exit_code(s), rl::kExitNotReady);
}

TEST(Render, AttachDetachUnblockAndLists) {
  EXPECT_EQ(text([](auto& o) {
              render_attach("eth0", {"eth0", "generic", false, ""}, o);
            }),
            "attached to eth0 (generic)\n");
  EXPECT_EQ(text([](auto& o) {
              render_attach("eth0", {"eth0", "generic", false, "no native XDP"}, o);
            }),
            "attached to eth0 (generic)\nwarning: no native XDP\n");
  EXPECT_EQ(text([](auto& o) { render_detach("eth0", o); }), "detached from eth0\n");
  EXPECT_EQ(text([](auto& o) {
              render_unblock({"198.18.0.7", 3}, o);
            }),
            "reset 3 keys of 198.18.0.7\n");
  EXPECT_EQ(text([](auto& o) {
              render_acl_add("deny", {"deny", "198.18.0.0/24", 600}, o);
            }),
            "deny 198.18.0.0/24\n");
  EXPECT_EQ(text([](auto& o) { render_acl_del({"198.18.0.0/24"}, o); }), "removed 198.18.0.0/24\n");
  proto::AclListResponse list{{{"deny", "198.18.0.0/24", 30}, {"deny", "2001:db8::/32", {}}}};
  EXPECT_EQ(text([&](auto& o) { render_acl_list(list, o); }),
            "CIDR           EXPIRES IN (s)\n"
            "198.18.0.0/24  30\n"
            "2001:db8::/32  -\n");
  EXPECT_EQ(text([](auto& o) { render_acl_list({}, o); }), "CIDR  EXPIRES IN (s)\n(none)\n");
}

TEST(Render, Overrides) {
  proto::OverrideView v{"web", "per-source", "198.18.0.0/16", "1000/s", 2000, 3599};
  EXPECT_EQ(text([&](auto& o) { render_override("added", v, o); }),
            "added override of rule web limit per-source for 198.18.0.0/16: 1000/s, burst 2000, "
            "expires in 3599 s\n");
  proto::OverrideListResponse list{{v, {"web", "per-24", "2001:db8::/48", "10/s", 0, {}}}, 65536};
  EXPECT_EQ(text([&](auto& o) { render_override_list(list, o); }),
            "RULE  LIMIT       CIDR           RATE    BURST  EXPIRES IN (s)\n"
            "web   per-source  198.18.0.0/16  1000/s  2000   3599\n"
            "web   per-24      2001:db8::/48  10/s    -      never\n");
}

TEST(Render, Policy) {
  proto::PolicyListResponse list{{{0, "web", 10, "drop", "tcp dport 443", "100/s", "any"}}};
  EXPECT_EQ(text([&](auto& o) { render_policy_list(list, o); }),
            "#  RULE  PRIORITY  ACTION  MATCH          LIMIT\n"
            "0  web   10        drop    tcp dport 443  100/s\n");
  proto::PolicyShowResponse show{"web", 10, "any", "tcp", "100/s", "drop", 1.5, true, false, 7, {}};
  EXPECT_EQ(text([&](auto& o) { render_policy_show(show, o); }),
            "name: web\nwhere: any\nmatch: tcp\nlimit: 100/s\naction: drop\n"
            "priority: 10\nblock: 1.5 s\n");
  show.counters = proto::RuleCounters{1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(text([&](auto& o) { render_policy_show(show, o); }),
            "name: web\nwhere: any\nmatch: tcp\nlimit: 100/s\naction: drop\n"
            "priority: 10\nblock: 1.5 s\n"
            "dropped_bytes: 6\ndropped_packets: 5\nmatched_bytes: 2\nmatched_packets: 1\n"
            "monitored_bytes: 8\nmonitored_packets: 7\npassed_bytes: 4\npassed_packets: 3\n");
  EXPECT_EQ(text([](auto& o) { render_policy_diff({}, o); }), "no changes\n");
  EXPECT_EQ(text([](auto& o) {
              render_policy_diff({{"+ rule web", "- rule old"}}, o);
            }),
            "+ rule web\n- rule old\n");
  EXPECT_EQ(text([](auto& o) {
              render_policy_apply({5, 2, std::vector<std::string>{"+ rule web"}}, o);
            }),
            "+ rule web\napplied: generation 5, 2 rules\n");
  EXPECT_EQ(text([](auto& o) {
              render_policy_reload({5, 2, {}}, o);
            }),
            "applied: generation 5, 2 rules\n");
}

TEST(Render, Top) {
  proto::TopDropsResponse drops{{{"web", "198.18.0.7", 12, true, 0}, {"web", "*", 3, false, 0}}};
  EXPECT_EQ(text([&](auto& o) { render_top_drops(drops, o); }),
            "RULE  KEY         DROPPED  BLOCKED\n"
            "web   198.18.0.7  12       yes\n"
            "web   *           3        no\n");
  proto::TopTrafficResponse t;
  t.sample_ratio = 1024;
  t.window_seconds = 12.5;
  t.samples = 100;
  t.samples_shed = 0;
  t.table_error_samples = 2;
  t.sampling_error = "8 + 4*sqrt(samples + 4)";
  t.keys = {{"web", "198.18.0.7", 1500.0, 50.25, 96000.0, 0.5, 0.125, 0, 0, 50, 0}};
  EXPECT_EQ(text([&](auto& o) { render_top_traffic(t, o); }),
            "sampled 1 in 1024 packets over the last 12.5 s: 100 samples, 0 shed; error per key: "
            "+-(8 + 4*sqrt(samples + 4) + up to 2 from the table) samples, times 1024\n"
            "RULE  KEY         EST. PPS  +-PPS  EST. BYTES/S  SHARE  DROPPED\n"
            "web   198.18.0.7  1500.0    50.2   96000.0       50.0%  12.5%\n");
  t.sampling_error.reset();
  t.keys.clear();
  EXPECT_EQ(text([&](auto& o) { render_top_traffic(t, o); }),
            "sampled 1 in 1024 packets over the last 12.5 s: 100 samples, 0 shed; error per key: "
            "+-(the sampling's error + up to 2 from the table) samples, times 1024\n"
            "RULE  KEY  EST. PPS  +-PPS  EST. BYTES/S  SHARE  DROPPED\n"
            "(none)\n");
}

TEST(Render, KeyShow) {
  proto::KeyState bucket;
  bucket.unit = "packets";
  bucket.tokens = 5.0;
  bucket.burst = 20.0;
  bucket.blocked = true;
  bucket.blocked_for_seconds = 30.0;
  proto::KeyLimit own;
  own.limit = "web";
  own.key = "198.18.0.7";
  own.tracked = true;
  own.state = bucket;
  own.drops = 3;
  proto::KeyState window;
  window.unit = "bytes";
  window.count = 100;
  window.limit = 1000;
  proto::KeyLimit net = own;
  net.limit = "web#1";
  net.key = "198.18.0.0/24";
  net.state = window;
  net.drops = 0;
  proto::KeyLimit note;
  note.limit = "web#2";
  note.note = "keyed by source and port: give ADDRESS|PORT";
  proto::KeyLimit fresh;  // an older rld: no limit name
  fresh.key = "198.18.0.7";
  proto::KeyShowResponse d{"198.18.0.7", {{"web", {own, net, note}}, {"old", {fresh}}}};
  EXPECT_EQ(text([&](auto& o) { render_key_show(d, o); }),
            "RULE  LIMIT  KEY            STATE                                        BLOCKED      "
            "DROPS  LAST DROP\n"
            "web   web    198.18.0.7     5.0 of 20.0 packets left                     yes, 30.0 s  "
            "3      -\n"
            "web   web#1  198.18.0.0/24  100 of 1000 bytes in this window             no           "
            "0      -\n"
            "web   web#2  -              keyed by source and port: give ADDRESS|PORT  -            "
            "-      -\n"
            "old   -      198.18.0.7     not tracked (a fresh key)                    no           "
            "0      -\n");
}

// What a count means follows the algorithm: a fixed window's this window, a log's last period,
// a sliding window's estimate over the last period, a connection limit's open connections.
TEST(Render, KeyShowCountsByAlgorithm) {
  auto row = [](const std::string& algorithm, const std::string& unit) {
    proto::KeyState st;
    st.algorithm = algorithm;
    st.unit = unit;
    st.count = 3;
    st.limit = 5;
    proto::KeyLimit l;
    l.key = "198.18.0.7";
    l.tracked = true;
    l.state = st;
    proto::KeyShowResponse d{"198.18.0.7", {{"r", {l}}}};
    std::string out = text([&](auto& o) { render_key_show(d, o); });
    return out.substr(out.find("198.18.0.7"));
  };
  EXPECT_NE(row("fixed_window", "packets").find("3 of 5 packets in this window"),
            std::string::npos);
  EXPECT_NE(row("sliding_log", "packets").find("3 of 5 packets within the last period"),
            std::string::npos);
  EXPECT_NE(
      row("sliding_window", "packets").find("3 of 5 packets over the last period (estimated)"),
      std::string::npos);
  EXPECT_NE(row("connections", "connections").find("3 of 5 connections open"), std::string::npos);
}

TEST(Render, StatsAndCluster) {
  proto::StatsResponse s;
  proto::RuleStats web{"web", "drop", {10, 0, 8, 0, 2, 0, 0, 0}, std::nullopt, std::nullopt};
  s.rules = {web};
  s.global = {{"passed", {8, 800}}};
  EXPECT_EQ(text([&](auto& o) { render_stats(s, o); }),
            "RULE  ACTION  MATCHED  PASSED  DROPPED  MONITORED  MATCHED/s  DROPPED/s\n"
            "web   drop    10       8       2        0          -          -\n"
            "\n"
            "COUNTER  PACKETS  BYTES\n"
            "passed   8        800\n");
  web.rates = proto::RuleRates{5.0, 2.0, 1.6, 0.4, 0.0};
  web.limits = std::vector<proto::LimitRefused>{{"web", 1, 100}, {"web#1", 1, 64}};
  s.rules = {web};
  EXPECT_EQ(text([&](auto& o) { render_stats(s, o); }),
            "RULE  ACTION  MATCHED  PASSED  DROPPED  MONITORED  MATCHED/s  DROPPED/s\n"
            "web   drop    10       8       2        0          2.0        0.4\n"
            "\n"
            "RULE  LIMIT  REFUSED  REFUSED BYTES\n"
            "web   web    1        100\n"
            "web   web#1  1        64\n"
            "\n"
            "COUNTER  PACKETS  BYTES\n"
            "passed   8        800\n");

  proto::ClusterStatusResponse c;
  c.node = "node-a";
  c.syncs = 5;
  c.early_syncs = 1;
  c.pending_keys = 2;
  c.last_pass_ms = 3;
  c.peers = {{"node-b", 1000}};
  EXPECT_EQ(text([&](auto& o) { render_cluster_status(c, o); }),
            "node node-a, Redis DOWN, last sync never, 5 syncs (1 early), 2 keys pending, last "
            "pass 3 ms\n"
            "PEER    LAST SEEN (server ms)\n"
            "node-b  1000\n"
            "\n"
            "RULE  KEY  BLOCKED FOR (ms)\n"
            "(none)\n");
  c.redis_up = true;
  c.last_sync_ms_ago = 40;
  c.blocked = {{"web", "198.18.0.7", 500}};
  c.topology = "sentinel";
  c.redis = "redis 10.0.0.6:6379 (master 'rl')";
  c.masters_changed = 1;
  EXPECT_EQ(text([&](auto& o) { render_cluster_status(c, o); }),
            "node node-a, Redis up, last sync 40 ms ago, 5 syncs (1 early), 2 keys pending, "
            "last pass 3 ms\n"
            "sentinel: redis 10.0.0.6:6379 (master 'rl'), failovers followed: 1\n"
            "PEER    LAST SEEN (server ms)\n"
            "node-b  1000\n"
            "\n"
            "RULE  KEY         BLOCKED FOR (ms)\n"
            "web   198.18.0.7  500\n");

  // A Redis Cluster: its masters, one row each; one never asked anything is idle, not down.
  c.topology = "cluster";
  c.redis = "redis cluster of 2 masters: 10.0.0.5:6379 10.0.0.6:6379";
  c.masters_changed = 2;
  c.servers = {{"10.0.0.5:6379", 8192, true, 40, 0, 1, 0, 350},
               {"10.0.0.6:6379", 8192, false, 40, 3, 0, 2, 0},
               {"10.0.0.7:6379", 0, false, 0, 0, 0, 0, 0}};
  c.peers.clear();
  c.blocked.clear();
  EXPECT_EQ(
      text([&](auto& o) { render_cluster_status(c, o); }),
      "node node-a, Redis up, last sync 40 ms ago, 5 syncs (1 early), 2 keys pending, "
      "last pass 3 ms\n"
      "cluster: redis cluster of 2 masters: 10.0.0.5:6379 10.0.0.6:6379, slot maps changed: 2\n"
      "MASTER         SLOTS  STATE  CALLS  ERRORS  MOVED  ASK  LAST RTT (us)\n"
      "10.0.0.5:6379  8192   up     40     0       1      0    350\n"
      "10.0.0.6:6379  8192   DOWN   40     3       0      2    0\n"
      "10.0.0.7:6379  0      idle   0      0       0      0    0\n"
      "\n"
      "PEER  LAST SEEN (server ms)\n"
      "(none)\n"
      "\n"
      "RULE  KEY  BLOCKED FOR (ms)\n"
      "(none)\n");
}

}  // namespace
}  // namespace rlctl
