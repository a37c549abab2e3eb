// SPDX-License-Identifier: GPL-2.0-only
// rlctl's requests as rld answers them, over the in-memory data path: what each one changes in
// the maps and what it replies, without a kernel. The integration tests ask the same of a real
// rld on real maps.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <tuple>

#include "control/handler_table.h"
#include "daemon/handlers/handlers.h"
#include "daemon/key_state.h"
#include "daemon/offenders/offenders.h"
#include "daemon/traffic/traffic.h"
#include "fake_datapath.h"
#include "rule_views.h"

namespace rl::daemon {
namespace {

using control::Json;
using testing::FakeDatapath;
constexpr uint64_t kSec = 1'000'000'000ULL;

// Arguments as rlctl sends them: a JSON object.
Json args(Json kv) { return kv; }

RuleView rule(const std::string& name, uint32_t id, uint8_t key_kind, uint32_t slot = 0) {
  return testing::rule_view(name, id, key_kind, slot);
}

TEST(Handlers, RuntimeEntriesAddListExpireAndDelete) {
  FakeDatapath dp;
  auto r = handlers::acl_add(
      dp, dp, args({{"list", "deny"}, {"cidr", "198.18.0.0/24"}, {"ttl_seconds", 60}}));
  ASSERT_TRUE(r["ok"]) << r.dump();
  ASSERT_EQ(dp.runtime.size(), 1u);
  EXPECT_EQ(dp.runtime[0].flags, RL_SRC_F_DENY);
  EXPECT_EQ(dp.runtime[0].expires_ns, dp.now + 60 * kSec);
  ASSERT_TRUE(
      handlers::acl_add(dp, dp, args({{"list", "allow"}, {"cidr", "2001:db8::/32"}}))["ok"]);
  EXPECT_EQ(dp.runtime[1].expires_ns, 0u) << "no ttl: never expires";

  dp.now += 20 * kSec;
  auto list = handlers::acl_list(dp, dp)["data"]["entries"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["list"], "deny");
  EXPECT_EQ(list[0]["expires_in_seconds"], 40);
  EXPECT_TRUE(list[1]["expires_in_seconds"].is_null());

  EXPECT_FALSE(
      handlers::acl_add(dp, dp, args({{"list", "maybe"}, {"cidr", "198.18.1.0/24"}}))["ok"]);
  EXPECT_FALSE(
      handlers::acl_add(dp, dp, args({{"list", "deny"}, {"cidr", "198.18.1.0/33"}}))["ok"]);
  // An expiry past what the clock holds would wrap around to one already past.
  auto endless = handlers::acl_add(
      dp, dp,
      args({{"list", "deny"}, {"cidr", "198.18.1.0/24"}, {"ttl_seconds", 18'446'744'073'709ULL}}));
  EXPECT_FALSE(endless["ok"]);
  EXPECT_NE(endless["error"].get<std::string>().find("maximum of 3650 days"), std::string::npos);
  EXPECT_FALSE(handlers::acl_add(
      dp, dp, args({{"list", "deny"}, {"cidr", "198.18.1.0/24"}, {"ttl_seconds", -1}}))["ok"]);
  EXPECT_EQ(dp.runtime.size(), 2u) << "a refused request changes nothing";

  auto wrong = handlers::acl_del(dp, args({{"cidr", "198.18.0.0/24"}, {"list", "allow"}}));
  EXPECT_FALSE(wrong["ok"]);
  EXPECT_EQ(wrong["error"], "no runtime allow entry 198.18.0.0/24");

  dp.now += 41 * kSec;  // the deny entry is over: listed no more, then removed from the maps
  EXPECT_EQ(handlers::acl_list(dp, dp)["data"]["entries"].size(), 1u);
  EXPECT_EQ(dp.runtime.size(), 2u);
  EXPECT_EQ(handlers::expire_runtime_entries(dp, dp), 1u);
  ASSERT_EQ(dp.runtime.size(), 1u);
  EXPECT_TRUE(handlers::acl_del(dp, args({{"cidr", "2001:db8::/32"}}))["ok"]);
  EXPECT_TRUE(dp.runtime.empty());
}

// Counts the lists a sweep asks for: what costs with tens of thousands of entries.
struct CountingLists : RuntimeLists {
  explicit CountingLists(FakeDatapath& d) : dp(d) {}
  Status runtime_acl_set(const Prefix& p, uint32_t flags, uint64_t expires_ns) override {
    return dp.runtime_acl_set(p, flags, expires_ns);
  }
  Status runtime_acl_remove(const Prefix& p) override { return dp.runtime_acl_remove(p); }
  Result<std::vector<RuntimeEntry>> runtime_acl_list() const override {
    lists++;
    return dp.runtime_acl_list();
  }
  Result<std::optional<RuntimeEntry>> runtime_acl_find(const Prefix& p) const override {
    return dp.runtime_acl_find(p);
  }
  FakeDatapath& dp;
  mutable int lists = 0;
};

// Housekeeping lists the runtime entries only when one may have expired: once at start (entries
// an earlier rld left), then at the earliest expiry it knows of, lowered by every add with a TTL.
TEST(Handlers, RuntimeExpiryListsOnlyWhenAnEntryMayHaveExpired) {
  FakeDatapath dp;
  CountingLists lists(dp);
  handlers::RuntimeExpiry expiry;
  ASSERT_TRUE(dp.runtime_acl_set(*Prefix::parse("198.18.0.0/24"), RL_SRC_F_DENY, 0).ok());
  ASSERT_TRUE(
      dp.runtime_acl_set(*Prefix::parse("198.18.1.0/24"), RL_SRC_F_DENY, dp.now + 100 * kSec).ok());
  EXPECT_EQ(expiry.sweep(lists, dp), 0u);
  EXPECT_EQ(lists.lists, 1) << "the first sweep lists: entries from before";
  dp.now += 50 * kSec;
  EXPECT_EQ(expiry.sweep(lists, dp), 0u);
  EXPECT_EQ(lists.lists, 1) << "nothing can have expired yet";

  // An add with a TTL shorter than any known brings the next sweep forward.
  ASSERT_TRUE(handlers::acl_add(
      lists, dp, args({{"list", "allow"}, {"cidr", "198.18.2.7"}, {"ttl_seconds", 10}}),
      &expiry)["ok"]);
  dp.now += 9 * kSec;
  EXPECT_EQ(expiry.sweep(lists, dp), 0u);
  EXPECT_EQ(lists.lists, 1);
  dp.now += 1 * kSec;
  EXPECT_EQ(expiry.sweep(lists, dp), 1u) << "198.18.2.7's time is up";
  EXPECT_EQ(lists.lists, 2);
  EXPECT_EQ(expiry.sweep(lists, dp), 0u);
  EXPECT_EQ(lists.lists, 2) << "the next expiry is the /24's, 40 s away";
  dp.now += 40 * kSec;
  EXPECT_EQ(expiry.sweep(lists, dp), 1u);
  ASSERT_EQ(dp.runtime.size(), 1u);
  EXPECT_EQ(dp.runtime[0].expires_ns, 0u) << "the entry without a TTL stays";
  dp.now += 3600 * kSec;
  EXPECT_EQ(expiry.sweep(lists, dp), 0u);
  EXPECT_EQ(lists.lists, 3) << "no entry expires: no more lists";
}

// A delete finds its entry by prefix: listing every entry to find one made each delete cost a
// pass over all of them (0.27 s with 120,000). The list it names must be the entry's.
TEST(Handlers, RuntimeDeleteFindsItsEntryWithoutListing) {
  FakeDatapath dp;
  CountingLists lists(dp);
  ASSERT_TRUE(dp.runtime_acl_set(*Prefix::parse("198.18.0.0/24"), RL_SRC_F_DENY, 0).ok());
  ASSERT_TRUE(dp.runtime_acl_set(*Prefix::parse("198.18.0.7/32"), RL_SRC_F_ALLOW, 0).ok());
  auto r = handlers::acl_del(lists, args({{"list", "allow"}, {"cidr", "198.18.0.0/24"}}));
  EXPECT_FALSE(r["ok"]) << "the /24 is a deny entry";
  EXPECT_EQ(r["error"], "no runtime allow entry 198.18.0.0/24");
  r = handlers::acl_del(lists, args({{"cidr", "198.18.0.0/25"}}));
  EXPECT_EQ(r["error"], "no runtime entry 198.18.0.0/25") << "inside the /24 is not the /24";
  EXPECT_EQ(dp.runtime.size(), 2u);
  r = handlers::acl_del(lists, args({{"list", "deny"}, {"cidr", "198.18.0.0/24"}}));
  EXPECT_TRUE(r["ok"]) << r.dump();
  r = handlers::acl_del(lists, args({{"cidr", "198.18.0.7"}}));
  EXPECT_TRUE(r["ok"]) << r.dump();
  EXPECT_TRUE(dp.runtime.empty());
  EXPECT_EQ(lists.lists, 0);
}

TEST(Handlers, UnblockResetsEveryKeyOfTheAddress) {
  FakeDatapath dp;
  std::vector<RuleView> rules = {rule("per-source", 1, RL_KEY_SRC_ADDR),
                                 rule("per-port", 2, RL_KEY_SRC_ADDR_DPORT),
                                 rule("aggregate", 3, RL_KEY_RULE)};
  auto addr = Address::parse("198.18.0.7");
  ASSERT_TRUE(addr);
  dp.put_key(key_for(rules[0].compiled, *addr, 0), rl_slot{1, 2, 3});
  dp.put_key(key_for(rules[1].compiled, *addr, 443), rl_slot{4, 5, 6});
  dp.put_key(key_for(rules[0].compiled, *Address::parse("198.18.0.8"), 0), rl_slot{7, 8, 9});

  auto r = handlers::unblock(dp, rules, args({{"address", "198.18.0.7"}}));
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_EQ(r["data"]["keys_reset"], 2);
  EXPECT_EQ(dp.resets.size(), 1u + 65536u) << "one key, then one per port; none for the aggregate";
  EXPECT_EQ(dp.keys.size(), 1u) << "another address keeps its state";
  EXPECT_FALSE(handlers::unblock(dp, rules, args({{"address", "198.18.0.300"}}))["ok"]);
}

// A rule's stacked limits hold keys of their own: unblock resets those of the address too.
TEST(Handlers, UnblockResetsTheKeysOfStackedLimits) {
  FakeDatapath dp;
  RuleView stacked = rule("stacked", 1, RL_KEY_SRC_ADDR);
  rl_rule per24 = stacked.compiled;
  per24.id = 2;
  per24.key_kind = RL_KEY_SRC_PREFIX;
  per24.v4_prefix = 24;
  rl_rule everyone = stacked.compiled;
  everyone.id = 3;
  everyone.key_kind = RL_KEY_RULE;
  stacked.more = {per24, everyone};
  auto addr = Address::parse("198.18.0.7");
  dp.put_key(key_for(stacked.compiled, *addr, 0), rl_slot{1, 2, 3});
  dp.put_key(key_for(per24, *addr, 0), rl_slot{4, 5, 6});
  dp.put_key(key_for(everyone, *addr, 0), rl_slot{7, 8, 9});

  auto r = handlers::unblock(dp, {stacked}, args({{"address", "198.18.0.7"}}));
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_EQ(r["data"]["keys_reset"], 2) << "the source's and its /24's; not the rule's one key";
  EXPECT_EQ(dp.keys.size(), 1u);
}

TEST(Handlers, StatsRatesAndStackedLimitsAndGlobalNames) {
  FakeDatapath dp;
  std::vector<RuleView> rules = {rule("web", 1, RL_KEY_SRC_ADDR, 7)};
  rules[0].compiled.more_limits = 1;
  rules[0].rule.limit_name = "per-source";
  rules[0].rule.more.resize(1);
  rules[0].rule.more[0].name = "per-24";
  handlers::RuleRates rates;
  auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  dp.rules[7].matched_pkts = 1000;
  dp.rules[7].dropped_pkts = 100;
  rates.sample(dp, rules, t0);
  dp.rules[7].matched_pkts = 3000;
  dp.rules[7].dropped_pkts = 1100;
  dp.limits[7][1] = {900, 90'000};
  dp.global[RL_GC_CLUSTER_LIMITED] = {5, 500};
  rates.sample(dp, rules, t0 + std::chrono::seconds(2));

  auto d = handlers::stats(dp, rules, rates)["data"];
  const auto& web = d["rules"][0];
  EXPECT_EQ(web["counters"]["matched_packets"], 3000);
  EXPECT_DOUBLE_EQ(web["rates"]["matched_pps"].get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(web["rates"]["dropped_pps"].get<double>(), 500.0);
  ASSERT_EQ(web["limits"].size(), 2u);
  EXPECT_EQ(web["limits"][0]["name"], "per-source");
  EXPECT_EQ(web["limits"][1]["name"], "per-24");
  EXPECT_EQ(web["limits"][1]["refused_packets"], 900);
  EXPECT_EQ(d["global"]["cluster_limited"]["packets"], 5);
  EXPECT_EQ(d["global"].size(), static_cast<size_t>(RL_GC_MAX));
}

TEST(Handlers, PolicyShowAndList) {
  FakeDatapath dp;
  std::vector<RuleView> rules = {rule("a", 1, RL_KEY_SRC_ADDR, 3), rule("b", 2, RL_KEY_RULE, 4)};
  dp.rules[4].passed_pkts = 42;
  auto list = handlers::policy_list(rules)["data"]["rules"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1]["position"], 1);
  auto b = handlers::policy_show(dp, rules, args({{"name", "b"}}));
  EXPECT_EQ(b["data"]["counters"]["passed_packets"], 42);
  auto none = handlers::policy_show(dp, rules, args({{"name", "c"}}));
  EXPECT_FALSE(none["ok"]);
  EXPECT_EQ(none["error"], "no rule named 'c' in force");
}

// The key `rule` builds for `addr`, as the data path reports and samples it.
rl_key key_of(const RuleView& rule, const std::string& addr) {
  return key_for(rule.compiled, *Address::parse(addr), 0);
}

// An offender report for the key `rule` builds for `addr`, as rl_events carries one.
rl_event report(const FakeDatapath& dp, const RuleView& rule, const std::string& addr,
                bool blocked = false) {
  return testing::over_limit_report(dp, rule.compiled, addr, blocked);
}

TEST(Handlers, TopRanksOffendersByDropsWithinARule) {
  FakeDatapath dp;
  std::vector<RuleView> rules = {rule("per-source", 1, RL_KEY_SRC_ADDR),
                                 rule("per-24", 2, RL_KEY_SRC_PREFIX)};
  rules[1].compiled.v4_prefix = 24;
  auto resolve = [&](uint32_t id) { return handlers::rule_ref(rules, id); };
  OffenderLog log(-1, resolve, [&](uint64_t h) { return dp.offender_drops(h); });
  for (const auto& [r, addr, drops] : {std::tuple{0, "198.18.0.7", 50},
                                       {0, "198.18.0.8", 900},
                                       {0, "198.18.0.9", 300},
                                       {1, "198.18.1.77", 5000}}) {
    auto ev = report(dp, rules[r], addr, addr == std::string("198.18.0.8"));
    dp.drops[ev.key_hash] = drops;
    log.handle(ev);
  }

  auto all = handlers::top(log, nullptr, resolve, dp, args({{"n", 3}}));
  ASSERT_TRUE(all["ok"]) << all.dump();
  const auto& o = all["data"]["offenders"];
  ASSERT_EQ(o.size(), 3u) << "n caps the list";
  EXPECT_EQ(o[0]["rule"], "per-24");
  EXPECT_EQ(o[0]["key"], "198.18.1.0/24") << "a prefix key is shown masked";
  EXPECT_EQ(o[0]["drops"], 5000);
  EXPECT_EQ(o[1]["key"], "198.18.0.8");
  EXPECT_EQ(o[1]["blocked"], true);
  EXPECT_EQ(o[2]["key"], "198.18.0.9");
  EXPECT_EQ(o[2]["blocked"], false);
  EXPECT_GT(o[2]["last_seen"].get<int64_t>(), 1'600'000'000) << "Unix seconds";

  auto one = handlers::top(log, nullptr, resolve, dp, args({{"rule", "per-source"}}));
  std::vector<std::string> keys;
  for (const auto& e : one["data"]["offenders"]) keys.push_back(e["key"]);
  EXPECT_EQ(keys, (std::vector<std::string>{"198.18.0.8", "198.18.0.9", "198.18.0.7"}));

  auto bad = handlers::top(log, nullptr, resolve, dp, args({{"by", "bytes"}}));
  EXPECT_FALSE(bad["ok"]);
  EXPECT_EQ(bad["error"], "top ranks by drops or traffic, not 'bytes'");
}

TEST(Handlers, TopByTrafficScalesTheSamplesUpOrSaysSamplingIsOff) {
  FakeDatapath dp;
  std::vector<RuleView> rules = {rule("web", 1, RL_KEY_SRC_ADDR), rule("dns", 2, RL_KEY_SRC_ADDR)};
  auto resolve = [&](uint32_t id) { return handlers::rule_ref(rules, id); };
  OffenderLog log(-1, resolve, [](uint64_t) { return uint64_t{0}; });

  auto off = handlers::top(log, nullptr, resolve, dp, args({{"by", "traffic"}}));
  EXPECT_FALSE(off["ok"]);
  EXPECT_EQ(off["error"],
            "traffic sampling is off: set traffic_sample_shift in rld's configuration "
            "(--traffic-sample-shift; 10 samples 1 in 1,024 packets) and restart rld");

  TrafficLog traffic(-1, /*shift=*/4);
  for (const auto& [r, addr, samples] :
       {std::tuple{0, "198.18.0.7", 30}, {0, "198.18.0.8", 10}, {1, "198.18.0.7", 20}})
    for (int i = 0; i < samples; i++)
      traffic.add({key_of(rules[r], addr), 100, RL_VERDICT_PASS, {}});
  dp.global[RL_GC_TRAFFIC_SHED] = {7, 0};

  auto r = handlers::top(log, &traffic, resolve, dp,
                         args({{"by", "traffic"}, {"rule", "web"}, {"n", 5}}));
  ASSERT_TRUE(r["ok"]) << r.dump();
  const auto& d = r["data"];
  EXPECT_EQ(d["sample_ratio"], 16);
  EXPECT_EQ(d["samples"], 60) << "every sample, not only the rule's";
  EXPECT_EQ(d["samples_shed"], 7);
  ASSERT_EQ(d["keys"].size(), 2u) << "the dns key is left out";
  EXPECT_EQ(d["keys"][0]["rule"], "web");
  EXPECT_EQ(d["keys"][0]["key"], "198.18.0.7");
  EXPECT_EQ(d["keys"][0]["samples"], 30);
  EXPECT_DOUBLE_EQ(d["keys"][0]["packets"].get<double>(), 30.0 * 16);
  // The bound the reply states is the one its errors use: 8 + 4*sqrt(30 + 4) samples.
  EXPECT_EQ(d["sampling_error"], "8 + 4*sqrt(samples + 4)");
  EXPECT_DOUBLE_EQ(d["keys"][0]["packets_error"].get<double>(), (8 + 4 * std::sqrt(34.0)) * 16);
  EXPECT_DOUBLE_EQ(d["keys"][0]["share"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(d["keys"][0]["dropped_share"].get<double>(), 0.0);
  EXPECT_EQ(d["keys"][1]["key"], "198.18.0.8");
}

TEST(Handlers, RuleRefNamesStackedLimitsWithTheirOwnPrefixes) {
  std::vector<RuleView> rules = {rule("web", 10, RL_KEY_SRC_PREFIX)};
  rules[0].compiled.v4_prefix = 24;
  rules[0].compiled.more_limits = 2;  // the policy text knows one: as for an adopted rule
  rules[0].rule.more.resize(1);
  rules[0].rule.more[0].v4_prefix = 16;
  EXPECT_EQ(handlers::rule_ref(rules, 10).v4_prefix, 24);
  EXPECT_EQ(handlers::rule_ref(rules, 11).name, "web");
  EXPECT_EQ(handlers::rule_ref(rules, 11).v4_prefix, 16);
  EXPECT_EQ(handlers::rule_ref(rules, 12).v4_prefix, 32) << "unknown limit: per address";
  EXPECT_EQ(handlers::rule_ref(rules, 13).name, "") << "not in force";
}

TEST(Handlers, ClusterStatusWhenClusterLimitsAreOff) {
  auto r = handlers::cluster_status(nullptr, "node-a");
  EXPECT_FALSE(r["ok"]);
  EXPECT_EQ(r["error"], "cluster limits are off: no Redis in rld's configuration");
}

TEST(HandlerTable, DispatchesAndRefusesWhatItCannotAnswer) {
  control::HandlerTable t;
  t.add("echo", [](const Json& a) { return control::ok({{"n", a.at("n").get<int>()}}); });
  Json req = {{"v", control::kProtocolVersion}, {"cmd", "echo"}, {"args", {{"n", 3}}}};
  EXPECT_EQ(t.dispatch(req)["data"]["n"], 3);
  Json other = req;
  other["v"] = control::kProtocolVersion + 1;
  EXPECT_FALSE(t.dispatch(other)["ok"]);
  Json unknown = req;
  unknown["cmd"] = "nope";
  EXPECT_EQ(t.dispatch(unknown)["error"], "unknown command 'nope'");
  Json bad = req;
  bad["args"]["n"] = "three";  // a type error inside the handler is a reply, not an exception
  auto r = t.dispatch(bad);
  EXPECT_FALSE(r["ok"]);
  EXPECT_NE(r["error"].get<std::string>().find("bad arguments"), std::string::npos);
  EXPECT_TRUE(t.has("echo"));
  EXPECT_EQ(t.commands(), std::vector<std::string>{"echo"});
}

}  // namespace
}  // namespace rl::daemon
