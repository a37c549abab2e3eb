// SPDX-License-Identifier: GPL-2.0-only
// Each command's request and response through to_json and from_json: what comes back writes the
// same JSON, optional keys are left out or null as rld has always sent them, and what an older
// rld left out reads as its default.
#include <gtest/gtest.h>

#include "control/protocol.h"

namespace rl::control {
namespace {

// to_json, from_json and to_json again give the same JSON: nothing is lost on the way.
template <class T>
Json round_trip(const T& v) {
  Json j = v;
  Json again = j.get<T>();
  EXPECT_EQ(again, j) << to_text(j);
  return j;
}

TEST(Protocol, EnvelopeCarriesVersionCommandAndArguments) {
  Json req = request<AclAdd>(AclAddRequest{"deny", "198.18.0.0/24", 600});
  EXPECT_EQ(version_of(req), kProtocolVersion);
  EXPECT_EQ(command_of(req), "acl.add");
  EXPECT_EQ(args_of(req),
            Json::parse(R"({"list":"deny","cidr":"198.18.0.0/24","ttl_seconds":600})"));
  EXPECT_EQ(args_of(request<Status>({})), Json::object());
  EXPECT_EQ(command_of(Json::object()), "");
  EXPECT_EQ(version_of(Json::object()), 0);

  Reply good = read_reply(ok(UnblockResponse{"198.18.0.7", 3}));
  EXPECT_TRUE(good.ok);
  EXPECT_EQ(good.data.get<UnblockResponse>().keys_reset, 3u);
  Reply bad = read_reply(fail("policy rejected", {"a.yaml:1:1: error: x"}));
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.error, "policy rejected");
  EXPECT_EQ(bad.errors, std::vector<std::string>{"a.yaml:1:1: error: x"});
  EXPECT_EQ(read_reply(Json{{"v", 1}, {"ok", false}}).error, "request failed");
}

TEST(Protocol, CommandNamesAreTheWireNames) {
  const std::vector<std::string> names = {
      Status::kName,     Attach::kName,     Detach::kName,      PolicyList::kName,
      PolicyShow::kName, PolicyDiff::kName, PolicyApply::kName, PolicyReload::kName,
      AclAdd::kName,     AclDel::kName,     AclList::kName,     Unblock::kName,
      Top::kName,        KeyShow::kName,    Stats::kName,       ClusterStatus::kName};
  EXPECT_EQ(names, (std::vector<std::string>{
                       "status", "attach", "detach", "policy.list", "policy.show", "policy.diff",
                       "policy.apply", "policy.reload", "acl.add", "acl.del", "acl.list", "unblock",
                       "top", "key.show", "stats", "cluster.status"}));
}

TEST(Protocol, RequestsRoundTrip) {
  EXPECT_EQ(round_trip(NoArgs{}), Json::object());
  EXPECT_EQ(round_trip(AttachRequest{"eth0", "native"}),
            Json::parse(R"({"interface":"eth0","mode":"native"})"));
  EXPECT_EQ(round_trip(AttachRequest{"eth0", std::nullopt}),
            Json::parse(R"({"interface":"eth0"})"));
  round_trip(InterfaceRequest{"eth0"});
  round_trip(PolicyShowRequest{"web"});
  EXPECT_EQ(round_trip(PolicyFilesRequest{{{"/tmp/web.yaml", "rules: []\n"}}}),
            Json::parse(R"({"files":[{"path":"/tmp/web.yaml","content":"rules: []\n"}]})"));
  round_trip(AclAddRequest{"allow", "2001:db8::/32", 0});
  EXPECT_EQ(round_trip(AclDelRequest{"", "198.18.0.0/24"}),
            Json::parse(R"({"cidr":"198.18.0.0/24"})"));
  round_trip(AclDelRequest{"deny", "198.18.0.0/24"});
  round_trip(UnblockRequest{"198.18.0.7"});
  EXPECT_EQ(round_trip(TopRequest{}), Json::parse(R"({"by":"drops","rule":"","n":10})"));
  round_trip(TopRequest{"traffic", "web", 3, 60});
  round_trip(KeyShowRequest{"198.18.0.7|53", "dns"});
}

TEST(Protocol, RequestDefaultsAndBadArguments) {
  auto top = Json::object().get<TopRequest>();
  EXPECT_EQ(top.by, "drops");
  EXPECT_EQ(top.n, 10);
  EXPECT_FALSE(top.window_seconds);
  EXPECT_EQ(Json::parse(R"({"list":"deny","cidr":"198.18.0.1"})").get<AclAddRequest>().ttl_seconds,
            0u);
  EXPECT_THROW(Json::parse(R"({"list":"deny"})").get<AclAddRequest>(), Json::exception);
  EXPECT_THROW(Json::parse(R"({"key":7})").get<KeyShowRequest>(), Json::exception);
  EXPECT_THROW(Json::parse(R"({"files":[{"path":"a.yaml"}]})").get<PolicyFilesRequest>(),
               Json::exception);
}

StatusResponse status() {
  StatusResponse s;
  s.version = "1.2.3";
  s.interfaces = {{"eth0", "native"}};
  s.policy_dir = "/etc/rl/policies";
  s.pin_root = "/sys/fs/bpf/rl";
  s.generation = 4;
  s.data_path_generation = 1;
  s.rules = 2;
  s.last_reload = {true, "inotify", 1700000000, {}};
  s.reloads = {4, 0};
  s.keys = {10, 1, 4096, 1024, 250};
  s.event_loop = "fifo 1";
  s.uptime_seconds = 3600;
  s.ready = true;
  return s;
}

TEST(Protocol, StatusRoundTripsWithNullsAndOptionalKeys) {
  StatusResponse s = status();
  Json j = round_trip(s);
  EXPECT_TRUE(j["last_good_reload"].is_null());
  EXPECT_FALSE(j.contains("reload_running"));
  EXPECT_EQ(j["reloads"], Json::parse(R"({"ok":4,"failed":0})"));
  EXPECT_EQ(j["keys"]["capacity_in_use"], 1024);
  s.reload_running = false;
  s.last_good_reload = 1700000000;
  s.last_reload = {false, "rlctl", std::nullopt, {"a.yaml:1:1: error: x"}};
  j = round_trip(s);
  EXPECT_EQ(j["reload_running"], false);
  EXPECT_TRUE(j["last_reload"]["at"].is_null());

  // An older rld: no pins_outlive_rld, not_ready or capacity_in_use.
  Json old = Json(status());
  old.erase("pins_outlive_rld");
  old.erase("not_ready");
  old["keys"].erase("capacity_in_use");
  auto read = old.get<StatusResponse>();
  EXPECT_TRUE(read.pins_outlive_rld);
  EXPECT_TRUE(read.not_ready.empty());
  EXPECT_EQ(read.keys.capacity_in_use, 0u);
}

TEST(Protocol, InterfaceAndPolicyResponsesRoundTrip) {
  round_trip(AttachResponse{"eth0", "generic", true, "native not supported"});
  round_trip(DetachResponse{"eth0"});
  round_trip(PolicyListResponse{{{0, "web", 10, "drop", "tcp dport 443", "100/s", "any"}}});
  PolicyShowResponse show{"web", 10, "any", "tcp", "100/s", "drop", 1.5, true, false, 7, {}};
  EXPECT_TRUE(round_trip(show)["counters"].is_null());
  show.counters = RuleCounters{1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(round_trip(show)["counters"]["monitored_bytes"], 8);
  EXPECT_TRUE(round_trip(show)["block_seconds"].is_number_float());
  round_trip(PolicyDiffResponse{{"+ rule web: ..."}});
  EXPECT_FALSE(round_trip(ReloadResponse{5, 2, std::nullopt}).contains("changes"));
  EXPECT_EQ(round_trip(ReloadResponse{5, 2, std::vector<std::string>{}})["changes"], Json::array());
}

TEST(Protocol, ListsTopAndClusterResponsesRoundTrip) {
  round_trip(AclAddResponse{"deny", "198.18.0.0/24", 600});
  round_trip(AclDelResponse{"198.18.0.0/24"});
  Json acl = round_trip(
      AclListResponse{{{"deny", "198.18.0.0/24", 30}, {"allow", "2001:db8::/32", std::nullopt}}});
  EXPECT_TRUE(acl["entries"][1]["expires_in_seconds"].is_null());
  round_trip(UnblockResponse{"198.18.0.7", 2});
  round_trip(TopDropsResponse{{{"web", "198.18.0.7", 12, true, 1700000000}}});
  TopTrafficResponse traffic;
  traffic.sample_shift = 10;
  traffic.sample_ratio = 1024;
  traffic.window_seconds = 12.5;
  traffic.samples = 100;
  traffic.sampling_error = "8 + 4*sqrt(samples + 4)";
  traffic.keys = {{"web", "198.18.0.7", 1.5, 0.5, 100.0, 0.25, 0.0, 2048.0, 512.0, 2, 1}};
  Json t = round_trip(traffic);
  EXPECT_EQ(t["by"], "traffic");
  traffic.sampling_error.reset();  // an older rld's
  EXPECT_FALSE(round_trip(traffic).contains("sampling_error"));

  ClusterStatusResponse c;
  c.node = "node-a";
  c.errors = {{"timeout", 2}};
  c.peers = {{"node-b", 1000}};
  c.blocked = {{"web", "198.18.0.7", 500}};
  EXPECT_TRUE(round_trip(c)["last_sync_ms_ago"].is_null());
  c.last_sync_ms_ago = 40;
  EXPECT_EQ(round_trip(c)["last_sync_ms_ago"], 40);
}

TEST(Protocol, KeyShowRoundTripsWithTheFirstLimitAtTheTop) {
  KeyState bucket;
  bucket.unit = "packets";
  bucket.algorithm = "token_bucket";
  bucket.tokens = 5.0;
  bucket.burst = 20.0;
  bucket.tat_ahead_seconds = 0.15;
  KeyLimit own;
  own.limit = "web";
  own.index = 0;
  own.key = "198.18.0.7";
  own.tracked = true;
  own.state = bucket;
  own.drops = 3;
  own.last_drop = 1700000000;
  KeyLimit note;
  note.limit = "web#1";
  note.index = 1;
  note.note = "keyed by source and port: give ADDRESS|PORT";
  Json j = round_trip(KeyShowResponse{"198.18.0.7", {{"web", {own, note}}}});
  const Json& rule = j["rules"][0];
  EXPECT_EQ(rule["rule"], "web");
  EXPECT_EQ(rule["key"], "198.18.0.7") << "the first limit's fields at the top";
  EXPECT_FALSE(rule.contains("limit"));
  EXPECT_FALSE(rule.contains("index"));
  EXPECT_FALSE(rule["state"].contains("count"));
  EXPECT_EQ(rule["limits"][1], Json::parse(R"({"note":"keyed by source and port: give ADDRESS|PORT",
                                               "limit":"web#1","index":1})"));
  EXPECT_TRUE(rule["limits"][0]["state"]["tokens"].is_number_float());

  KeyLimit fresh;
  fresh.key = "198.18.0.8";
  Json untracked = fresh;
  EXPECT_FALSE(untracked.contains("state"));
  EXPECT_TRUE(untracked["last_drop"].is_null());
  EXPECT_EQ(untracked["drops"], 0);

  // An rld that predates `limits` sent the rule's one limit at the top level.
  auto old = Json::parse(R"({"rule":"web","key":"198.18.0.7","tracked":false,"drops":0,
                             "last_drop":null})")
                 .get<KeyShowRule>();
  ASSERT_EQ(old.limits.size(), 1u);
  EXPECT_EQ(old.limits[0].key, "198.18.0.7");
  EXPECT_FALSE(old.limits[0].limit);
}

TEST(Protocol, StatsRoundTripsWithOptionalLimitsAndRates) {
  StatsResponse s;
  RuleStats plain{"web", "drop", {1, 2, 3, 4, 5, 6, 7, 8}, std::nullopt, std::nullopt};
  RuleStats stacked = plain;
  stacked.name = "api";
  stacked.limits = std::vector<LimitRefused>{{"api", 1, 100}, {"api#1", 2, 200}};
  stacked.rates = RuleRates{5.0, 1.0, 0.5, 0.5, 0.0};
  s.rules = {plain, stacked};
  s.global = {{"passed", {10, 1000}}, {"dropped", {1, 100}}};
  Json j = round_trip(s);
  EXPECT_FALSE(j["rules"][0].contains("limits"));
  EXPECT_FALSE(j["rules"][0].contains("rates"));
  EXPECT_EQ(j["rules"][1]["limits"].size(), 2u);
  EXPECT_EQ(j["global"]["passed"]["bytes"], 1000);
}

TEST(Protocol, ValidateReportRoundTrips) {
  EXPECT_EQ(round_trip(ValidateReport{false, {"a.yaml:1:1: error: x"}, 0}),
            Json::parse(R"({"valid":false,"errors":["a.yaml:1:1: error: x"],"rules":0})"));
}

}  // namespace
}  // namespace rl::control
