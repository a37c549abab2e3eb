// SPDX-License-Identifier: GPL-2.0-only
// `rlctl key show` as rld answers it, over the in-memory data path and rule views compiled from
// a real policy: every limit of a stacked rule with its own key, state and drops.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>

#include "daemon/handlers/handlers.h"
#include "daemon/handlers/key_show.h"
#include "daemon/key_state.h"
#include "daemon/offenders/offenders.h"
#include "daemon/policy/policy_manager.h"
#include "fake_datapath.h"
#include "rl_limiter_state.h"
#include "rule_views.h"
#include "scratch_dir.h"

namespace rl::daemon {
namespace {

using control::Json;
using testing::FakeDatapath;

constexpr const char* kPolicy =
    "rules:\n"
    "  - name: syn\n"
    "    match: {protocol: tcp, port: 80}\n"
    "    limits:\n"
    "      - {name: per-source, rate: 100/s, burst: 100, key: source}\n"
    "      - {name: per-24, algorithm: fixed_window, rate: 500/s, key: source_prefix,\n"
    "         prefix: {ipv4: 24, ipv6: 48}}\n"
    "      - {name: everyone, rate: 1000/s, burst: 2000, key: rule}\n"
    "  - name: plain\n"
    "    match: {protocol: udp, port: 53}\n"
    "    limit: {rate: 10/s, burst: 5}\n"
    "  - name: pairs\n"
    "    match: {protocol: udp, port: 123}\n"
    "    limit: {rate: 10/s}\n"
    "    key: source_destination\n"
    "  - name: whole\n"
    "    match: {protocol: udp, port: 514}\n"
    "    limit: {rate: 10/s}\n"
    "    key: rule\n";

class KeyShow : public testing::ScratchDirTest {
 protected:
  KeyShow() : ScratchDirTest("rl-keyshow-") {}
  void SetUp() override {
    ScratchDirTest::SetUp();
    write("p.yaml", kPolicy);
    pm_ = std::make_unique<PolicyManager>(dp_, dir_.string(), compiler::CompileOptions{},
                                          compiler::RuleIds{});
    auto r = pm_->reload("test");
    ASSERT_TRUE(r.ok) << (r.errors.empty() ? "" : r.errors[0]);
    rules_ = pm_->rules();
    log_ = std::make_unique<OffenderLog>(
        -1, [this](uint32_t id) { return handlers::rule_ref(rules_, id); },
        [this](uint64_t h) { return dp_.offender_drops(h); });
  }

  const RuleView& view(const std::string& name) {
    for (const auto& v : rules_)
      if (v.name == name) return v;
    throw std::runtime_error("no rule " + name);
  }
  // The data path's report of an over-limit key of one limit, and the drops it counted for it.
  void dropped(const rl_rule& lim, const std::string& addr, uint64_t drops) {
    rl_event ev = testing::over_limit_report(dp_, lim, addr);
    dp_.drops[ev.key_hash] = drops;
    log_->handle(ev);
  }
  Json show(const Json& args) {
    Json r = key_show(dp_, rules_, *log_, args);
    EXPECT_TRUE(r["ok"]) << r.dump();
    return r["data"];
  }

  FakeDatapath dp_;
  std::unique_ptr<PolicyManager> pm_;
  std::vector<RuleView> rules_;
  std::unique_ptr<OffenderLog> log_;
};

TEST_F(KeyShow, ListsEveryLimitOfAStackedRuleWithItsOwnKeyStateAndDrops) {
  const RuleView& syn = view("syn");
  ASSERT_EQ(syn.compiled.more_limits, 2);
  ASSERT_EQ(syn.more.size(), 2u) << "the policy manager keeps the stacked limits as compiled";
  const rl_rule& per24 = syn.more[0];
  EXPECT_EQ(per24.id, syn.compiled.id + 1);
  EXPECT_EQ(per24.key_kind, RL_KEY_SRC_PREFIX);
  EXPECT_EQ(syn.more[1].key_kind, RL_KEY_RULE);

  // The /24 used its window up and dropped 2,950 packets; the source itself used 10 tokens.
  const Address src = *Address::parse("198.18.5.7");
  const uint64_t win = dp_.now / per24.window_ns;
  dp_.put_key(key_for(per24, src, 0), rl_slot{1, 0, rl_fw_state(win, 500)});
  const uint64_t per_packet_ns = syn.compiled.interval_fp >> RL_FP_SHIFT;
  dp_.put_key(key_for(syn.compiled, src, 0), rl_slot{1, 0, dp_.now + 10 * per_packet_ns});
  dropped(per24, "198.18.5.7", 2950);

  Json d = show({{"key", "198.18.5.7"}});
  EXPECT_EQ(d["address"], "198.18.5.7");
  ASSERT_EQ(d["rules"].size(), 3u)
      << "syn, plain, pairs; not whole (keyed by rule only)" << d.dump(2);
  const Json& r = d["rules"][0];
  EXPECT_EQ(r["rule"], "syn");
  ASSERT_EQ(r["limits"].size(), 3u) << r.dump(2);

  const Json& own = r["limits"][0];
  EXPECT_EQ(own["limit"], "per-source");
  EXPECT_EQ(own["index"], 0);
  EXPECT_EQ(own["key"], "198.18.5.7");
  ASSERT_TRUE(own["tracked"].get<bool>());
  EXPECT_DOUBLE_EQ(own["state"]["tokens"].get<double>(), 90.0);
  EXPECT_DOUBLE_EQ(own["state"]["burst"].get<double>(), 100.0);
  EXPECT_EQ(own["drops"], 0) << "the /24's drops are not the source's";
  EXPECT_TRUE(own["last_drop"].is_null());

  const Json& prefix = r["limits"][1];
  EXPECT_EQ(prefix["limit"], "per-24");
  EXPECT_EQ(prefix["index"], 1);
  EXPECT_EQ(prefix["key"], "198.18.5.0/24");
  ASSERT_TRUE(prefix["tracked"].get<bool>());
  EXPECT_EQ(prefix["state"]["algorithm"], "fixed_window");
  EXPECT_EQ(prefix["state"]["count"], 500);
  EXPECT_EQ(prefix["state"]["limit"], 500);
  EXPECT_EQ(prefix["drops"], 2950);
  EXPECT_FALSE(prefix["last_drop"].is_null());

  const Json& all = r["limits"][2];
  EXPECT_EQ(all["limit"], "everyone");
  EXPECT_EQ(all["key"], "*") << "one key for every source, shown since this source is judged by it";
  EXPECT_FALSE(all["tracked"].get<bool>());
  EXPECT_EQ(all["drops"], 0);

  // The rule's own limit at the top level too, as a client that reads no `limits` expects.
  EXPECT_EQ(r["key"], "198.18.5.7");
  EXPECT_EQ(r["state"], own["state"]);
  EXPECT_EQ(r["drops"], 0);
  EXPECT_FALSE(r.contains("limit"));

  // A rule of one limit lists that one; a pair key is named by no one address.
  const Json& plain = d["rules"][1];
  EXPECT_EQ(plain["rule"], "plain");
  ASSERT_EQ(plain["limits"].size(), 1u);
  EXPECT_EQ(plain["limits"][0]["limit"], "source");
  EXPECT_FALSE(plain["limits"][0]["tracked"].get<bool>());
  const Json& pairs = d["rules"][2];
  EXPECT_TRUE(pairs.contains("note"));
  EXPECT_TRUE(pairs["limits"][0].contains("note"));

  // Another source of the /24: its own key is fresh, the shared /24 key has the drops.
  Json other = show({{"key", "198.18.5.9"}, {"rule", "syn"}});
  ASSERT_EQ(other["rules"].size(), 1u);
  const Json& o = other["rules"][0]["limits"];
  EXPECT_EQ(o[0]["key"], "198.18.5.9");
  EXPECT_FALSE(o[0]["tracked"].get<bool>());
  EXPECT_EQ(o[1]["key"], "198.18.5.0/24");
  EXPECT_EQ(o[1]["drops"], 2950) << "--rule keeps the offenders of the rule's stacked limits";
  // A source of another /24 has none of them.
  Json far = show({{"key", "198.18.6.7"}, {"rule", "syn"}});
  EXPECT_EQ(far["rules"][0]["limits"][1]["key"], "198.18.6.0/24");
  EXPECT_EQ(far["rules"][0]["limits"][1]["drops"], 0);
}

// An IPv6 address falls in its client's /64: any address of it finds the one key, with the
// state and drops the data path keeps for the /64.
TEST_F(KeyShow, AnIpv6AddressFindsItsClientsPrefixKey) {
  const RuleView& plain = view("plain");
  ASSERT_EQ(plain.compiled.v6_prefix, 64);
  const Address seen = *Address::parse("2001:db8:0:7::1");
  const uint64_t per_packet_ns = plain.compiled.interval_fp >> RL_FP_SHIFT;
  dp_.put_key(key_for(plain.compiled, seen, 0), rl_slot{1, 0, dp_.now + 3 * per_packet_ns});
  dropped(plain.compiled, "2001:db8:0:7::1", 40);

  Json d = show({{"key", "2001:db8:0:7:abcd::99"}, {"rule", "plain"}});
  const Json& k = d["rules"][0]["limits"][0];
  EXPECT_EQ(k["key"], "2001:db8:0:7::/64");
  ASSERT_TRUE(k["tracked"].get<bool>()) << "another address of the /64 is the same client";
  EXPECT_DOUBLE_EQ(k["state"]["tokens"].get<double>(), 2.0);
  EXPECT_EQ(k["drops"], 40);

  Json next = show({{"key", "2001:db8:0:8::1"}, {"rule", "plain"}});
  EXPECT_EQ(next["rules"][0]["limits"][0]["key"], "2001:db8:0:8::/64");
  EXPECT_FALSE(next["rules"][0]["limits"][0]["tracked"].get<bool>());
}

// A rule set adopted from pinned maps has no policy text: the stacked limits' parameters are
// not known, and the reply says so rather than guessing a key.
TEST_F(KeyShow, AdoptedStackedLimitsAreNamedButNotGuessed) {
  RuleView v;
  v.name = "adopted";
  v.rule.name = "adopted";
  v.compiled = view("syn").compiled;
  std::vector<RuleView> adopted = {v};
  Json r = key_show(dp_, adopted, *log_, {{"key", "198.18.5.7"}});
  ASSERT_TRUE(r["ok"]) << r.dump();
  const Json& limits = r["data"]["rules"][0]["limits"];
  ASSERT_EQ(limits.size(), 3u);
  EXPECT_EQ(limits[0]["key"], "198.18.5.7");
  EXPECT_EQ(limits[1]["limit"], "limit1");
  EXPECT_NE(limits[1]["note"].get<std::string>().find("rlctl policy reload"), std::string::npos);
  EXPECT_FALSE(limits[2].contains("key"));
}

TEST_F(KeyShow, RefusesAnUnknownRuleAndABadKey) {
  Json r = key_show(dp_, rules_, *log_, {{"key", "198.18.5.7"}, {"rule", "nope"}});
  EXPECT_FALSE(r["ok"]);
  EXPECT_EQ(r["error"], "no rule named 'nope' in force");
  EXPECT_FALSE(key_show(dp_, rules_, *log_, {{"key", "198.18.5.7|x"}})["ok"]);
}

}  // namespace
}  // namespace rl::daemon
