// SPDX-License-Identifier: GPL-2.0-only
// Runtime overrides on the real verifier and maps, with the controlled clock: the entry of the
// longest prefix judges its sources within the rule's own limit or a stacked one, its expiry ends
// it, a rule without overrides never asks, and each family holds RL_OVERRIDES_MAX entries.
#include "compiler/compiler.h"
#include "fixture.h"

namespace rl::testing {
namespace {

class OverrideTest : public BpfTest {
 protected:
  void at(uint64_t ns) { hooks().set_clock(kT0 + ns); }

  // The override of limit `index` of the policy's rule `name` for `cidr` at `rate`/s and `burst`.
  OverrideEntry entry(const policy::Policy& p, const std::string& name, size_t index,
                      const std::string& cidr, uint64_t rate, uint64_t burst,
                      uint64_t expires_ns = 0) {
    size_t pos = 0;
    while (compiled_.names[pos] != name) pos++;
    const rl_rule& in_force =
        index ? compiled_.more_limits[rl_stacked_index(static_cast<uint32_t>(pos),
                                                       static_cast<uint32_t>(index - 1))]
              : compiled_.rules[pos];
    const policy::Rule* rule = nullptr;
    for (const auto& r : p.rules)
      if (r.name == name) rule = &r;
    auto limit = compiler::compile_override(*rule, index, per_second(rate), burst, in_force);
    EXPECT_TRUE(limit.ok()) << limit.error().str();
    auto prefix = Prefix::parse(cidr);
    EXPECT_TRUE(prefix.ok());
    OverrideEntry e;
    e.prefix = *prefix;
    e.value.limit = *limit;
    e.value.expires_ns = expires_ns;
    return e;
  }

  void put(const OverrideEntry& e) {
    Status s = dp_->override_set(e);
    ASSERT_TRUE(s.ok()) << s.error().str();
  }
};

TEST_F(OverrideTest, TheLongestPrefixJudgesItsSourcesWithinTheOwnLimit) {
  policy::Policy p;
  p.rules = {token_bucket("web", 10, 5)};
  apply(p);
  put(entry(p, "web", 0, "198.18.0.0/16", 10, 12));
  put(entry(p, "web", 0, "198.18.7.0/24", 10, 2));
  put(entry(p, "web", 0, "2001:db8:1::/48", 10, 9));
  EXPECT_EQ(passed(udp4("198.18.1.1"), 20), 12) << "the /16's burst";
  EXPECT_EQ(passed(udp4("198.18.7.1"), 20), 2) << "the /24 inside it: the longest prefix";
  EXPECT_EQ(passed(udp4("198.19.0.1"), 20), 5) << "outside: the policy's burst";
  EXPECT_EQ(passed(udp6("2001:db8:1::1"), 20), 9);
  EXPECT_EQ(passed(udp6("2001:db8:2::1"), 20), 5);
  // The override's rate refills: 10/s, so 100 ms is one token.
  at(100'000'000);
  EXPECT_EQ(passed(udp4("198.18.1.1"), 20), 1);

  // Removed, the policy's limit judges again (the key's state word carries over).
  auto gone = dp_->override_remove(compiled_.rules[0].id, *Prefix::parse("198.18.0.0/16"));
  ASSERT_TRUE(gone.ok() && *gone);
  at(10'000'000'000);
  EXPECT_EQ(passed(udp4("198.18.1.1"), 20), 5);
}

TEST_F(OverrideTest, AStackedLimitTakesItsOwnOverride) {
  policy::Policy p;
  auto r = token_bucket("web", 10, 5);
  policy::StackedLimit per24;
  per24.name = "per-24";
  per24.limit.rate = per_second(1);
  per24.limit.burst = 8;
  per24.key = policy::KeyKind::kSourcePrefix;
  per24.v4_prefix = 24;
  r.more = {per24};
  p.rules = {r};
  apply(p);
  put(entry(p, "web", 1, "198.18.1.0/24", 1, 2));
  EXPECT_EQ(passed(udp4("198.18.1.1"), 20), 2) << "the /24's override";
  auto d = send(udp4("198.18.1.2"));
  EXPECT_EQ(d.limit, 1u) << "refused by the stacked limit";
  EXPECT_EQ(passed(udp4("198.18.2.1"), 20), 5) << "another /24: the own limit's 5 of its 8";
  // The own limit's override lifts the source's 5, the /24's 8 still holds.
  put(entry(p, "web", 0, "198.18.3.0/24", 10, 20));
  EXPECT_EQ(passed(udp4("198.18.3.1"), 20), 8);
}

TEST_F(OverrideTest, AnExpiredEntryJudgesNothing) {
  policy::Policy p;
  p.rules = {token_bucket("web", 10, 5)};
  apply(p);
  put(entry(p, "web", 0, "198.18.0.0/16", 10, 12, kT0 + 1'000'000'000));
  EXPECT_EQ(passed(udp4("198.18.1.1"), 20), 12);
  at(2'000'000'000);
  EXPECT_EQ(passed(udp4("198.18.2.1"), 20), 5) << "past its expiry";
}

// The entry names the limit by id: another rule's limit, or the same rule's once the policy gave
// it a new id, is not judged by it.
TEST_F(OverrideTest, AnEntryJudgesOnlyTheLimitWhoseIdItHolds) {
  policy::Policy p;
  p.rules = {token_bucket("web", 10, 5)};
  apply(p);
  put(entry(p, "web", 0, "198.18.0.0/16", 10, 12));
  p.rules = {token_bucket("web", 10, 4)};  // another limiter: a new id
  apply(p);
  EXPECT_EQ(passed(udp4("198.18.1.1"), 20), 4);
}

TEST_F(OverrideTest, EachFamilyHoldsItsBoundAndThenRefuses) {
  policy::Policy p;
  p.rules = {token_bucket("web", 10, 5)};
  apply(p);
  OverrideEntry e = entry(p, "web", 0, "198.18.0.0/32", 10, 12);
  for (uint32_t i = 0; i < RL_OVERRIDES_MAX; i++) {
    e.prefix.addr.bytes[1] = static_cast<uint8_t>(18 + (i >> 16));
    e.prefix.addr.bytes[2] = static_cast<uint8_t>(i >> 8);
    e.prefix.addr.bytes[3] = static_cast<uint8_t>(i);
    ASSERT_TRUE(dp_->override_set(e).ok()) << i;
  }
  e.prefix.addr.bytes[1] = 19;
  e.prefix.addr.bytes[2] = 1;
  Status full = dp_->override_set(e);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.error().err, ENOSPC);
  EXPECT_NE(full.error().message.find("65536 IPv4 entries"), std::string::npos)
      << full.error().message;
  EXPECT_TRUE(dp_->override_set(entry(p, "web", 0, "2001:db8::/32", 10, 12)).ok())
      << "the other family has room";
  e.prefix.addr.bytes[1] = 18;
  e.prefix.addr.bytes[2] = 0;
  e.prefix.addr.bytes[3] = 0;
  EXPECT_TRUE(dp_->override_set(e).ok()) << "an entry already held is replaced";
  EXPECT_EQ(passed(udp4("198.18.0.0"), 20), 12);
  EXPECT_EQ(passed(udp4("198.18.0.1"), 20), 12);
}

}  // namespace
}  // namespace rl::testing
