// SPDX-License-Identifier: GPL-2.0-only
// rld end to end: real packets from spoofed sources through a veth into a namespace where rld
// has attached the XDP program; what passes is counted by a UDP socket behind it.
#include <bpf/bpf.h>

#include "common/fd.h"
#include "policy_text.h"
#include "rl_abi.h"
#include "rld_fixture.h"

namespace rl::testing {
namespace {

TEST_F(RldTest, LimitHoldsAtTheStatedRate) {
  write_policy("a.yaml", udp9_policy("200/s", 20));
  start_rld();
  auto d = deliver({.src = "198.18.1.1", .count = 3000, .rate = 1000}, 15, 1500);
  ASSERT_TRUE(d.ok()) << d.error().str();
  const SendSummary& sent = d->sent;
  ASSERT_EQ(sent.sent, 3000u);

  // The bucket admits its burst, then 200 per second of sending.
  double expected = 20 + 200 * sent.seconds;
  auto c = rule_stats("udp9");
  uint64_t passed = c["passed_packets"];
  EXPECT_GE(passed, 0.9 * expected) << "sent for " << sent.seconds << " s";
  EXPECT_LE(passed, 1.1 * expected) << "sent for " << sent.seconds << " s";
  EXPECT_EQ(c["matched_packets"].get<uint64_t>(), 3000u);
  EXPECT_EQ(passed + c["dropped_packets"].get<uint64_t>(), 3000u);
  EXPECT_EQ(d->got.received, passed) << "what rl passed is what reached the socket";
}

TEST_F(RldTest, SpoofedSourcesEachGetTheirOwnBucket) {
  write_policy("a.yaml", udp9_policy("1/min", 2));
  start_rld();
  // 500 sources, 10 packets each (the sender cycles through them).
  auto d =
      deliver({.src = "198.18.10.0/23", .sources = 500, .count = 5000, .rate = 5000}, 15, 1500);
  ASSERT_TRUE(d.ok()) << d.error().str();
  ASSERT_EQ(d->sent.sent, 5000u);
  EXPECT_EQ(d->got.received, 1000u) << "exactly the burst of each of 500 sources";
  EXPECT_EQ(d->got.sources.size(), 500u);
  for (const auto& [src, n] : d->got.sources) EXPECT_EQ(n, 2u) << src;
  Json st = ctl({"status"});
  EXPECT_GE(st["keys"]["tracked"].get<uint64_t>(), 500u);
}

TEST_F(RldTest, AllowDenyAndMonitor) {
  write_policy("a.yaml",
               "allow: [198.18.3.0/24]\n"
               "deny: [198.18.2.0/24]\n"
               "rules:\n"
               "  - name: strict\n"
               "    match: {protocol: udp, port: 9}\n"
               "    limit: {rate: 1/min, burst: 1}\n"
               "  - name: dry-run\n"
               "    match: {protocol: udp, port: 10}\n"
               "    limit: {rate: 1/min, burst: 1}\n"
               "    action: monitor\n");
  start_rld();
  auto count_through = [&](const std::string& src, uint16_t port) {
    return received({.src = src, .dport = port, .count = 100, .rate = 2000});
  };
  EXPECT_EQ(count_through("198.18.2.7", 9), 0u) << "deny list";
  EXPECT_EQ(count_through("198.18.3.7", 9), 100u) << "allow list: never limited";
  EXPECT_EQ(count_through("198.18.4.7", 9), 1u) << "the rule";
  EXPECT_EQ(count_through("198.18.4.7", 10), 100u) << "monitor lets everything pass";
  auto m = rule_stats("dry-run");
  EXPECT_EQ(m["monitored_packets"].get<uint64_t>(), 99u);
  EXPECT_EQ(m["dropped_packets"].get<uint64_t>(), 0u);

  // Runtime entries on top of the policy.
  ctl({"deny", "add", "198.18.3.7", "--ttl", "10m"});
  EXPECT_EQ(count_through("198.18.3.7", 9), 0u) << "runtime deny beats the policy's allow list";
  ctl({"deny", "del", "198.18.3.7"});
  EXPECT_EQ(count_through("198.18.3.7", 9), 100u);
}

// Rewriting the policy while a flood runs: the unchanged rule keeps its state through every
// generation switch, so the flood never gets more than the formula allows.
TEST_F(RldTest, HotReloadUnderTrafficNeverLeavesTrafficUnlimited) {
  write_policy("a.yaml", udp9_policy("100/s", 10));
  start_rld();
  auto sink = start_sink(*lab_, 0, {.port = 9, .seconds = 20, .idle_ms = 1500});
  ASSERT_TRUE(sink.ok());
  SendSpec spec{.src = "198.18.5.5", .count = 4000, .rate = 1000};
  auto flood = lab_->spawn_in(lab_->client_ns(), rlsend_argv(lab_->pair(), spec));
  ASSERT_TRUE(flood.ok());
  uint64_t gen = ctl({"status"})["generation"];
  for (int i = 0; i < 8; i++) {
    std::this_thread::sleep_for(300ms);
    write_policy("b.yaml", "rules:\n  - name: other" + std::to_string(i) +
                               "\n    match: {protocol: tcp, port: 80}\n    limit: {rate: 5/s}\n");
  }
  auto done = flood->wait(15s);
  ASSERT_TRUE(done.ok()) << done.describe();
  auto sent = parse_send_summary(done.out);
  ASSERT_TRUE(sent.ok());
  auto got = finish_sink(*sink, 10s);
  ASSERT_TRUE(got.ok());
  EXPECT_GT(ctl({"status"})["generation"].get<uint64_t>(), gen + 3)
      << "the policy was switched under traffic";
  // The bucket refills at 100/s under a 1,000/s sender: a sender that stalls (a busy machine)
  // admits less than its wall time says, by 100 a second of stall beyond the burst, hence the
  // wider lower bound. A switch that lost the key's state would show above the upper one.
  double expected = 10 + 100 * sent->seconds;
  EXPECT_LE(got->received, 1.1 * expected);
  EXPECT_GE(got->received, 0.8 * expected);
}

TEST_F(RldTest, BrokenPolicyLeavesThePolicyInForce) {
  write_policy("a.yaml", udp9_policy("1/min", 5));
  start_rld();
  uint64_t gen = ctl({"status"})["generation"];
  write_policy("b.yaml", "rules:\n  - name: typo\n    limit: {rate: 10/s, burts: 3}\n");
  wait_reload(gen, /*ok=*/false);
  Json st = ctl({"status"});
  ASSERT_FALSE(st["last_reload"]["ok"].get<bool>());
  EXPECT_NE(st["last_reload"]["errors"][0].get<std::string>().find("b.yaml:3:"), std::string::npos);
  EXPECT_EQ(st["generation"].get<uint64_t>(), gen);
  EXPECT_EQ(st["rules"].get<uint64_t>(), 1u);

  EXPECT_EQ(received({.src = "198.18.6.6", .count = 50, .rate = 2000}, 10), 5u)
      << "the old rule still limits";
  EXPECT_EQ(sample(metrics(), "rl_policy_last_reload_ok"), 0);
}

// With the metrics endpoint on (the default) its threads exist before rld reads signals: they
// must not take SIGHUP or SIGTERM by their default action. HUP reloads, TERM stops cleanly.
TEST_F(RldTest, SignalsReachTheEventLoopWithMetricsOn) {
  write_policy("a.yaml", udp9_policy("100/s", 10));
  start_rld();
  uint64_t gen = ctl({"status"})["generation"];
  rld_->signal(SIGHUP);
  ASSERT_TRUE(rld_->wait_for("SIGHUP", 5s)) << rld_->err();
  std::this_thread::sleep_for(300ms);
  ASSERT_TRUE(rld_->running()) << "SIGHUP killed rld:\n" << rld_->err();
  EXPECT_GE(ctl({"status"})["generation"].get<uint64_t>(), gen);
  auto t0 = std::chrono::steady_clock::now();
  Output out = rld_->stop(SIGTERM, 5s);
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(out.code, 0) << "SIGTERM must take the stopping path: " << out.describe();
  EXPECT_LT(took, 1s);
  EXPECT_NE(out.err.find("stopping"), std::string::npos) << out.err;
  EXPECT_FALSE(std::filesystem::exists(socket_path())) << "the control socket is removed";
}

TEST_F(RldTest, KillNineKeepsEnforcingAndARestartAdoptsTheState) {
  write_policy("a.yaml", udp9_policy("1/min", 5));
  start_rld();
  EXPECT_EQ(through("198.18.7.7"), 5u);
  ctl({"deny", "add", "198.18.7.9"});
  EXPECT_EQ(through("198.18.7.9"), 0u) << "runtime deny";

  rld_->signal(SIGKILL);
  rld_->wait(5s);
  EXPECT_EQ(through("198.18.7.7"), 0u) << "no rld, still enforcing";
  EXPECT_EQ(through("198.18.7.8"), 5u) << "new keys still get their burst";

  start_rld();
  Json st = ctl({"status"});
  EXPECT_TRUE(st["adopted"].get<bool>());
  EXPECT_EQ(through("198.18.7.7"), 0u) << "the key's empty bucket survived the restart";
  EXPECT_EQ(through("198.18.7.9"), 0u) << "the runtime entry and its filter, rebuilt, too";
  auto c = rule_stats("udp9");
  EXPECT_EQ(c["matched_packets"].get<uint64_t>(), 80u) << "counters survived too";
  EXPECT_EQ(c["passed_packets"].get<uint64_t>(), 10u);
}

// key_table_full: a restart with it splits the adopted table to its capacity at once, keys and
// their state moved to where packets now look for them.
TEST_F(RldTest, ARestartWithTheKeyTableFullKeepsTheKeys) {
  key_capacity_ = "262144";  // 65,536 sets; a growing table starts at 16,384
  write_policy("a.yaml", udp9_policy("1/min", 5));
  start_rld();
  // Four keys: a table that jumped to its capacity without moving them would look for each in
  // another set 3 times in 4.
  const std::vector<std::string> known = {"198.18.7.1", "198.18.7.2", "198.18.7.3", "198.18.7.4"};
  for (const auto& src : known) EXPECT_EQ(through(src), 5u) << src;
  Json keys = ctl({"status"})["keys"];
  ASSERT_LT(keys["capacity_in_use"].get<uint64_t>(), keys["capacity"].get<uint64_t>())
      << "a table grows with its keys by default";

  rld_->signal(SIGKILL);
  rld_->wait(5s);
  rld_extra_args_ = {"--key-table-full"};
  start_rld();
  keys = ctl({"status"})["keys"];
  EXPECT_EQ(keys["capacity_in_use"].get<uint64_t>(), keys["capacity"].get<uint64_t>());
  for (const auto& src : known) EXPECT_EQ(through(src), 0u) << src << "'s empty bucket moved";
  EXPECT_EQ(through("198.18.7.8"), 5u);
}

// A restart with a broken file in the policy directory (bytes that are not UTF-8 among them)
// keeps the rule set in force: the pinned maps hold it, and the broken file changes nothing.
// rld and rlctl stay up and answer.
TEST_F(RldTest, ARestartWithABrokenFileKeepsTheRulesInForce) {
  write_policy("a.yaml", udp9_policy("1/min", 5));
  start_rld();
  EXPECT_EQ(through("198.18.7.7"), 5u);
  rld_->signal(SIGKILL);
  rld_->wait(5s);
  write_policy("b.yaml", "rules:\n  - name: broken\xff\xfe\n    limit: {rate: 10/s}\n");

  start_rld();
  Json st = ctl({"status"});
  EXPECT_TRUE(st["adopted"].get<bool>());
  EXPECT_FALSE(st["last_reload"]["ok"].get<bool>()) << st.dump();
  EXPECT_EQ(st["rules"].get<uint64_t>(), 1u) << "the rule set in force stays";
  EXPECT_EQ(through("198.18.7.7"), 0u) << "still limited across the restart";
  EXPECT_EQ(through("198.18.7.9"), 5u) << "by the same rule";
  auto out = run({RL_RLCTL_PATH, "-s", socket_path(), "status"});
  EXPECT_EQ(out.code, kExitNotReady) << "degraded is not ready: " << out.describe();
  auto validate =
      run({RL_RLCTL_PATH, "policy", "validate", (dir_ / "policies" / "b.yaml").string()});
  EXPECT_EQ(validate.code, 1) << validate.describe();
  EXPECT_NE(validate.err.find("\\xff"), std::string::npos) << validate.err;
  ASSERT_TRUE(rld_->running()) << rld_->err();
}

TEST_F(RldTest, RlctlAndMetricsAgreeWithThePacketsSent) {
  write_policy("a.yaml", udp9_policy("1/min", 7));
  start_rld();
  EXPECT_EQ(received({.src = "198.18.8.0/24", .sources = 3, .count = 300, .rate = 3000}, 10), 21u);

  auto c = rule_stats("udp9");
  EXPECT_EQ(c["passed_packets"].get<uint64_t>(), 21u);
  EXPECT_EQ(c["dropped_packets"].get<uint64_t>(), 279u);
  std::string m = metrics();
  EXPECT_EQ(sample(m, "rl_rule_packets_total{rule=\"udp9\",verdict=\"dropped\"}"), 279);
  EXPECT_EQ(sample(m, "rl_rule_packets_total{rule=\"udp9\",verdict=\"passed\"}"), 21);
  EXPECT_EQ(sample(m, "rl_up"), 1);

  Json top = ctl({"top", "-n", "5"});
  ASSERT_EQ(top["offenders"].size(), 3u);
  EXPECT_EQ(top["offenders"][0]["rule"], "udp9");
  EXPECT_EQ(top["offenders"][0]["drops"].get<uint64_t>(), 93u);

  Json list = ctl({"policy", "list"});
  ASSERT_EQ(list["rules"].size(), 1u);
  EXPECT_EQ(list["rules"][0]["name"], "udp9");
  ctl({"unblock", "198.18.8.0"});
  EXPECT_EQ(received({.src = "198.18.8.0", .count = 20, .rate = 2000}, 10), 7u)
      << "unblock gave the source a fresh bucket";
}

}  // namespace
}  // namespace rl::testing

namespace rl::testing {
namespace {

// A real Prometheus server, in the server namespace next to rld, scrapes rld's endpoint; a query
// through its HTTP API returns the counts the packets produced.
TEST_F(RldTest, PrometheusScrapesRldAndAnswersQueries) {
  write_policy("a.yaml", udp9_policy("1/min", 4));
  start_rld();
  ASSERT_TRUE(deliver({.src = "198.18.9.9", .count = 50, .rate = 2000}, 5).ok());

  uint16_t port = free_port();
  std::ofstream(dir_ / "prometheus.yml")
      << "global:\n  scrape_interval: 1s\n"
      << "scrape_configs:\n  - job_name: rl\n    static_configs:\n"
      << "      - targets: ['127.0.0.1:" << metrics_port_ << "']\n";
  auto prom = lab_->spawn_in(lab_->server_ns(),
                             {"prometheus", "--config.file=" + (dir_ / "prometheus.yml").string(),
                              "--storage.tsdb.path=" + (dir_ / "tsdb").string(),
                              "--web.listen-address=127.0.0.1:" + std::to_string(port),
                              "--storage.tsdb.retention.time=1h"});
  ASSERT_TRUE(prom.ok()) << prom.error().str();

  auto query = [&](const std::string& promql) -> std::string {
    auto out = lab_->run(lab_->server_ns(),
                         {"curl", "-sf", "--get", "--data-urlencode", "query=" + promql,
                          "http://127.0.0.1:" + std::to_string(port) + "/api/v1/query"});
    if (!out.ok()) return "";
    Json j = Json::parse(out.out, nullptr, false);
    if (j.is_discarded() || j["data"]["result"].empty()) return "";
    return j["data"]["result"][0]["value"][1];
  };
  std::string dropped, passed;
  for (int i = 0; i < 120 && dropped.empty(); i++) {  // at most 30 s
    dropped = query("rl_rule_packets_total{job=\"rl\",rule=\"udp9\",verdict=\"dropped\"}");
    if (dropped.empty()) std::this_thread::sleep_for(250ms);
  }
  ASSERT_FALSE(dropped.empty()) << "Prometheus never returned the series\n" << prom->err();
  EXPECT_EQ(dropped, "46");
  EXPECT_EQ(query("rl_rule_packets_total{job=\"rl\",rule=\"udp9\",verdict=\"passed\"}"), "4");
  EXPECT_EQ(query("up{job=\"rl\"}"), "1");
  EXPECT_EQ(query("rl_interface_attached{job=\"rl\"}"), "1");
}

}  // namespace
}  // namespace rl::testing

namespace rl::testing {
namespace {

// An rld with another data path layout (ABI) finds the old one pinned and attached: it loads
// fresh maps, applies the policy, swaps the program on the interface's link and only then
// re-pins. The interface is never without a program.
TEST_F(RldTest, UpgradeAcrossAnAbiChangeNeverUnprotectsTheInterface) {
  write_policy("a.yaml", udp9_policy("1/min", 3));
  start_rld();
  rld_->stop();

  // Make the pinned maps look like another layout's.
  UniqueFd control(bpf_obj_get((pin_root_ + "/maps/rl_control").c_str()));
  ASSERT_TRUE(control) << "rl_control is pinned";
  rl_control c{};
  uint32_t zero = 0;
  ASSERT_EQ(bpf_map_lookup_elem(control.get(), &zero, &c), 0);
  c.abi_version = RL_ABI_VERSION + 100;
  ASSERT_EQ(bpf_map_update_elem(control.get(), &zero, &c, BPF_ANY), 0);
  auto before =
      lab_->run(lab_->server_ns(), {"ip", "-j", "link", "show", lab_->pair().server.ifname});
  ASSERT_NE(before.out.find("\"prog\""), std::string::npos) << "the old program is attached";

  start_rld();
  EXPECT_NE(rld_->err().find("replaced a data path with another layout"), std::string::npos)
      << rld_->err();
  Json st = ctl({"status"});
  EXPECT_FALSE(st["adopted"].get<bool>());
  ASSERT_EQ(st["interfaces"].size(), 1u);
  EXPECT_NE(st["interfaces"][0]["mode"], "none");

  // The new maps are the pinned ones now, with this rld's layout.
  UniqueFd now(bpf_obj_get((pin_root_ + "/maps/rl_control").c_str()));
  ASSERT_TRUE(now);
  ASSERT_EQ(bpf_map_lookup_elem(now.get(), &zero, &c), 0);
  EXPECT_EQ(c.abi_version, static_cast<uint32_t>(RL_ABI_VERSION));

  EXPECT_EQ(received({.src = "198.18.11.1", .count = 20, .rate = 2000}), 3u)
      << "the new data path enforces the policy";
}

}  // namespace
}  // namespace rl::testing
