// SPDX-License-Identifier: GPL-2.0-only
// Runtime overrides (rlctl override) against a real rld whose XDP program judges real packets:
// a prefix's sources get another burst within a rule's own limit and within a stacked one, IPv4
// and IPv6; a bad request changes nothing; the overrides outlive a restart of rld and a policy
// change that gives the limit a new id, are shown by rlctl key show and the metrics, and expire.
// Every limit refills at one token a minute, so what gets through is the burst in force; each
// source checked is in a /24 and an IPv6 /48 of its own, so that the per-24 limit's key is fresh.
#include <map>

#include "policy_text.h"
#include "rld_fixture.h"

namespace rl::testing {
namespace {

std::string stacked_policy(int own_burst) {
  return "rules:\n"
         "  - name: udp9\n"
         "    match: {protocol: udp, port: 9}\n"
         "    limits:\n"
         "      - {name: per-source, rate: 1/min, burst: " +
         std::to_string(own_burst) +
         ", key: source}\n"
         "      - {name: per-24, rate: 1/min, burst: 16, key: source_prefix,\n"
         "         prefix: {ipv4: 24, ipv6: 48}}\n";
}

class OverrideTest : public RldTest {
 protected:
  // rlctl without -o json: its exit status and what it printed on either stream.
  std::pair<int, std::string> rlctl(std::vector<std::string> args) {
    std::vector<std::string> argv = {RL_RLCTL_PATH, "-s", socket_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto out = run(argv, 30s);
    return {out.code, out.out + out.err};
  }

  // cidr -> the entry rlctl override list gives.
  std::map<std::string, Json> listed() {
    std::map<std::string, Json> out;
    const Json all = ctl({"override", "list"});  // alive through the loop
    for (const auto& e : all["entries"]) out[e["cidr"]] = e;
    return out;
  }
};

TEST_F(OverrideTest, OverridesJudgeTheirSourcesAndOutliveARestartAndAPolicyChange) {
  write_policy("p.yaml", stacked_policy(5));
  start_rld();
  EXPECT_EQ(through("198.18.10.1"), 5u) << "the policy's burst";

  Json added = ctl({"override", "add", "udp9", "198.18.128.0/17", "--rate", "1/min", "--burst",
                    "12", "--ttl", "1h"});
  EXPECT_EQ(added["limit"], "per-source") << added.dump();
  EXPECT_EQ(added["rate"], "1/min");
  ctl({"override", "add", "udp9", "198.18.12.0/24", "--limit", "per-24", "--rate", "1/min",
       "--burst", "2"});
  ctl({"override", "add", "udp9", "2001:db8:100::/40", "--rate", "1/min", "--burst", "9"});

  EXPECT_EQ(through("198.18.129.1"), 12u) << "the own limit's override";
  EXPECT_EQ(through("198.18.12.1"), 2u) << "the stacked limit's override";
  EXPECT_EQ(through("2001:db8:101::1"), 9u) << "an IPv6 prefix's override";
  EXPECT_EQ(through("198.18.10.2"), 5u) << "a source outside every override";
  EXPECT_EQ(through("2001:db8:12::1"), 5u) << "an IPv6 source outside every override";

  // Refused with a reason, and nothing changes.
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"override", "add", "nope", "198.18.13.0/24", "--rate", "1/s"}, "no rule named 'nope'"},
      {{"override", "add", "udp9", "198.18.13.0/25", "--limit", "per-24", "--rate", "1/s"},
       "covers whole ones"},
      {{"override", "add", "udp9", "198.18.13.0/24", "--limit", "per-48", "--rate", "1/s"},
       "has no limit 'per-48'"},
      {{"override", "add", "udp9", "198.18.13.0/24", "--rate", "10MB/s"}, "counts packets"},
      {{"override", "add", "udp9", "198.18.13.0/24", "--rate", "fast"}, "rate 'fast'"},
      {{"override", "del", "udp9", "198.18.13.0/24"}, "no override of rule 'udp9'"},
  };
  for (const auto& [args, why] : bad) {
    auto [code, text] = rlctl(args);
    EXPECT_EQ(code, kExitFailure) << text;
    EXPECT_NE(text.find(why), std::string::npos) << why << " in: " << text;
  }
  ASSERT_EQ(listed().size(), 3u);

  // rlctl key show: the override that judges the address, and its key's state by its burst.
  Json k = ctl({"key", "show", "198.18.129.1"});
  ASSERT_EQ(k["rules"].size(), 1u) << k.dump(2);
  const Json& own = k["rules"][0]["limits"][0];
  ASSERT_TRUE(own.contains("override")) << k.dump(2);
  EXPECT_EQ(own["override"]["cidr"], "198.18.128.0/17");
  EXPECT_EQ(own["override"]["burst"], 12);
  EXPECT_EQ(own["state"]["burst"].get<double>(), 12) << k.dump(2);
  EXPECT_FALSE(k["rules"][0]["limits"][1].contains("override")) << k.dump(2);
  auto [code, table] = rlctl({"key", "show", "198.18.12.1"});
  EXPECT_EQ(code, kExitOk);
  EXPECT_NE(table.find("override: rule udp9 limit per-24: 1/min for 198.18.12.0/24, burst 2"),
            std::string::npos)
      << table;
  EXPECT_EQ(sample(metrics(), "rl_overrides{rule=\"udp9\"}"), 3) << metrics();

  // Removed: the stacked limit's policy burst judges that prefix's new sources again.
  Json removed = ctl({"override", "del", "udp9", "198.18.12.0/24", "--limit", "per-24"});
  EXPECT_EQ(removed["cidr"], "198.18.12.0/24");
  EXPECT_EQ(through("198.18.12.2"), 5u);

  // A restart: rld adopts the pins, the overrides with them, the TTL running on.
  const auto before = listed();
  ASSERT_EQ(before.size(), 2u);
  rld_->stop();
  start_rld();
  const auto after = listed();
  ASSERT_EQ(after.size(), 2u);
  EXPECT_LE(after.at("198.18.128.0/17")["expires_in_seconds"].get<int64_t>(),
            before.at("198.18.128.0/17")["expires_in_seconds"].get<int64_t>());
  EXPECT_GT(after.at("198.18.128.0/17")["expires_in_seconds"].get<int64_t>(), 3500);
  EXPECT_EQ(through("198.18.130.1"), 12u) << "after a restart";
  EXPECT_EQ(through("2001:db8:102::1"), 9u) << "after a restart, IPv6";

  // A policy change that gives the limit a new id: the override follows it.
  const uint64_t gen = ctl({"status"})["generation"];
  write_policy("p.yaml", stacked_policy(4));
  wait_reload(gen);
  EXPECT_EQ(through("198.18.10.3"), 4u) << "the new policy's burst";
  EXPECT_EQ(through("198.18.131.1"), 12u) << "the override, under the new limit";
  EXPECT_EQ(through("2001:db8:103::1"), 9u);
  EXPECT_EQ(listed().size(), 2u);

  // A rule that leaves the policy takes its overrides with it.
  const uint64_t gen2 = ctl({"status"})["generation"];
  write_policy("p.yaml", policy_text({udp_rule_text("other", 9, "1/min", 3)}));
  wait_reload(gen2);
  EXPECT_EQ(listed().size(), 0u);
  EXPECT_EQ(through("198.18.132.1"), 3u) << "the new rule's burst";
}

TEST_F(OverrideTest, AnOverrideExpiresOnItsOwn) {
  write_policy("p.yaml", udp9_policy("1/min", 3));
  start_rld();
  ctl({"override", "add", "udp9", "198.18.14.0/24", "--rate", "1/min", "--burst", "10", "--ttl",
       "2s"});
  EXPECT_EQ(through("198.18.14.1"), 10u);
  std::this_thread::sleep_for(2500ms);
  EXPECT_EQ(through("198.18.14.2"), 3u) << "the policy's burst once the override expired";
  for (int i = 0; i < 30 && !listed().empty(); i++) std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(listed().empty()) << "rld removed it";
}

}  // namespace
}  // namespace rl::testing
