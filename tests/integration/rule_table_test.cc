// SPDX-License-Identifier: GPL-2.0-only
// The rule table rld.yaml max_rules sizes, against a real rld whose XDP program judges real
// packets: a policy past the table is refused with the setting named and the rules in force kept;
// rld restarted with a larger table replaces the data path's maps of the smaller one, carries its
// runtime entries and overrides across, and enforces a rule past the old bound.
#include "policy_text.h"
#include "rld_fixture.h"

namespace rl::testing {
namespace {

class RuleTableTest : public RldTest {};

// `rules` rules: UDP ports 2000 and up at burst 3, then udp9 (port 9) at burst `burst`, last.
std::string many_rules(int rules, int burst) {
  std::vector<std::string> r;
  for (int i = 0; i + 1 < rules; i++)
    r.push_back(udp_rule_text("r" + std::to_string(i), 2000 + i, "1/min", 3));
  r.push_back(udp_rule_text("udp9", 9, "1/min", static_cast<uint64_t>(burst)));
  return policy_text(r);
}

TEST_F(RuleTableTest, ALargerTablePastARestartTakesALargerPolicy) {
  write_policy("p.yaml", many_rules(1000, 5));
  start_rld();
  EXPECT_EQ(through("198.18.10.1"), 5u) << "the last of 1,000 rules";
  ctl({"deny", "add", "198.18.50.0/24"});
  ctl({"override", "add", "udp9", "198.18.128.0/17", "--rate", "1/min", "--burst", "12"});

  // 1,500 rules do not fit the default table: refused where the file says so, nothing changes.
  const uint64_t gen = ctl({"status"})["generation"];
  write_policy("p.yaml", many_rules(1500, 4));
  wait_reload(gen, false);
  const Json st = ctl({"status"});
  ASSERT_FALSE(st["last_reload"]["errors"].empty()) << st.dump(2);
  const std::string why = st["last_reload"]["errors"][0];
  EXPECT_NE(why.find("p.yaml:"), std::string::npos) << why;
  EXPECT_NE(why.find("at most 1024 (rld.yaml max_rules)"), std::string::npos) << why;
  EXPECT_EQ(st["rules"], 1000) << st.dump(2);
  EXPECT_EQ(through("198.18.10.2"), 5u) << "the policy in force";

  // A larger table: the pins of the smaller one are replaced, what the operator added is kept.
  rld_->stop();
  rld_extra_args_ = {"--max-rules", "2000"};
  start_rld(30s);
  EXPECT_EQ(ctl({"status"})["rules"], 1500);
  EXPECT_EQ(through("198.18.10.3"), 4u) << "the last of 1,500 rules, past the old table";
  EXPECT_EQ(through("198.18.50.1"), 0u) << "the runtime deny entry, carried";
  EXPECT_EQ(through("198.18.129.1"), 12u) << "the override, carried";
  EXPECT_EQ(ctl({"override", "list"})["entries"].size(), 1u);
}

}  // namespace
}  // namespace rl::testing
