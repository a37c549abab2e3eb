// SPDX-License-Identifier: GPL-2.0-only
// The override book over the in-memory data path and a real policy manager: what an operator
// asks for is compiled against the rule in force, refused with its reason, bounded, expired,
// read back after a restart, and compiled again when a policy changes or a layout is replaced.
#include "daemon/overrides/override_book.h"

#include <gtest/gtest.h>

#include "builders.h"
#include "fake_datapath.h"
#include "rl_limiter_state.h"

namespace rl::daemon {
namespace {

using testing::P;
using testing::per_second;

constexpr uint64_t kSec = 1'000'000'000ULL;

class OverrideBookTest : public ::testing::Test {
 protected:
  void SetUp() override {
    apply(policy_with(5));
    book_ = open();
    pm_.add_hooks(book_.get());
  }

  std::unique_ptr<OverrideBook> open() {
    auto b = OverrideBook::open(dp_, dp_, [this] { return pm_.rules(); }, {});
    EXPECT_TRUE(b.ok()) << b.error().str();
    return b.ok() ? std::move(*b) : nullptr;
  }

  // web: per source at 10/s with `burst`, and a per-/24 limit; bytes: a byte rate;
  // everyone: one bucket for the rule; fleet: a cluster rule.
  static policy::Policy policy_with(uint64_t burst) {
    policy::Policy p;
    auto web = testing::token_bucket("web", 10, burst);
    auto per24 = testing::stacked_bucket("per-24", 100, 50, policy::KeyKind::kSourcePrefix);
    per24.v4_prefix = 24;
    web.more = {per24};
    auto bytes = testing::token_bucket("bytes", 1000, 0);
    bytes.limit.rate = per_second(1'000'000, policy::Unit::kBytes);
    bytes.match.ports = {{80, 80}};
    auto everyone = testing::token_bucket("everyone", 100, 0);
    everyone.key = policy::KeyKind::kRule;
    everyone.match.ports = {{81, 81}};
    auto fleet = testing::token_bucket("fleet", 100, 0);
    fleet.cluster = policy::ClusterLimit{};
    fleet.cluster->rate = per_second(100);
    fleet.match.ports = {{82, 82}};
    auto conns = testing::connections("conns", 4);
    p.rules = {web, bytes, everyone, fleet, conns};
    return p;
  }

  void apply(const policy::Policy& p) {
    auto r = pm_.apply(p, "test");
    ASSERT_TRUE(r.ok) << (r.errors.empty() ? "" : r.errors.front());
  }

  uint32_t id_of(const std::string& rule, size_t limit = 0) {
    for (const auto& v : pm_.rules())
      if (v.name == rule) return limit ? v.more[limit - 1].id : v.compiled.id;
    ADD_FAILURE() << "no rule " << rule;
    return 0;
  }

  Result<OverrideEntry> add(const std::string& rule, const std::string& cidr, uint64_t rate,
                            uint64_t burst = 0, const std::string& limit = "",
                            uint64_t ttl_ns = 0) {
    return book_->add({rule, limit, P(cidr), per_second(rate), burst, ttl_ns});
  }

  testing::FakeDatapath dp_;
  PolicyManager pm_{dp_, "/nonexistent", {}, {}};
  std::unique_ptr<OverrideBook> book_;
};

TEST_F(OverrideBookTest, AnOverrideIsTheLimitInForceAtAnotherRate) {
  auto e = add("web", "198.18.0.0/16", 1000, 2000);
  ASSERT_TRUE(e.ok()) << e.error().str();
  ASSERT_EQ(dp_.overrides.size(), 1u);
  const rl_override& o = dp_.overrides[0].value;
  const rl_rule in_force = pm_.rules()[0].compiled;
  EXPECT_EQ(o.limit.id, in_force.id) << "keyed by the limit's id";
  EXPECT_EQ(o.limit.stats_slot, in_force.stats_slot);
  EXPECT_EQ(o.limit.more_limits, in_force.more_limits) << "its stacked limits still follow";
  EXPECT_EQ(o.limit.key_kind, in_force.key_kind);
  EXPECT_EQ(o.limit.interval_fp, (kSec << RL_FP_SHIFT) / 1000) << "1000/s";
  EXPECT_EQ(o.limit.burst_ns, 2000 * (kSec / 1000));
  EXPECT_EQ(std::string(o.rule), "web");
  EXPECT_EQ(o.amount, 1000u);
  EXPECT_EQ(o.burst, 2000u);
  EXPECT_EQ(o.limit_index, 0);
  // The stacked limit's, by its name.
  ASSERT_TRUE(add("web", "198.18.1.0/24", 5, 0, "per-24").ok());
  EXPECT_EQ(dp_.overrides[1].value.limit.id, id_of("web", 1));
  EXPECT_EQ(dp_.overrides[1].value.limit_index, 1);
  EXPECT_EQ(book_->list().size(), 2u);
  EXPECT_EQ(book_->per_rule(), (std::map<std::string, size_t>{{"web", 2}}));
  // The longest prefix of the limit answers for an address, as the kernel's trie does.
  ASSERT_TRUE(add("web", "198.18.7.0/24", 50).ok());
  auto f = book_->find(id_of("web"), *Address::parse("198.18.7.9"));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->prefix, P("198.18.7.0/24"));
  EXPECT_EQ(book_->find(id_of("web"), *Address::parse("198.18.8.9"))->prefix, P("198.18.0.0/16"));
  EXPECT_FALSE(book_->find(id_of("web"), *Address::parse("198.19.0.1")));
  // The same limit and prefix again replaces the entry.
  ASSERT_TRUE(add("web", "198.18.0.0/16", 7).ok());
  EXPECT_EQ(book_->list().size(), 3u);
  EXPECT_EQ(book_->per_rule().at("web"), 3u);
}

TEST_F(OverrideBookTest, WhatCannotBeAnOverrideIsRefusedWithItsReason) {
  const std::vector<std::pair<Result<OverrideEntry>, std::string>> refused = {
      {add("nope", "198.18.0.0/16", 10), "no rule named 'nope'"},
      {add("web", "198.18.0.0/16", 10, 0, "per-48"), "has no limit 'per-48'"},
      {add("web", "198.18.1.0/25", 10, 0, "per-24"), "keeps one key per /24"},
      {add("bytes", "198.18.0.0/16", 10), "counts bytes"},
      {add("everyone", "198.18.0.0/16", 10), "keeps no key per source"},
      {add("fleet", "198.18.0.0/16", 10), "the fleet's"},
      {add("conns", "198.18.0.0/16", 10), "counts connections"},
  };
  for (const auto& [r, why] : refused) {
    ASSERT_FALSE(r.ok()) << why;
    EXPECT_NE(r.error().message.find(why), std::string::npos) << r.error().message;
  }
  auto window = book_->add({"web", "", P("198.18.0.0/16"), per_second(10), 5, 0});
  EXPECT_TRUE(window.ok()) << "a token bucket takes a burst";
  EXPECT_EQ(dp_.overrides.size(), 1u) << "only that one was written";
}

TEST_F(OverrideBookTest, AFullFamilySaysSoAndTheOtherStillTakesEntries) {
  dp_.max_per_family = 2;
  ASSERT_TRUE(add("web", "198.18.1.0/24", 10).ok());
  ASSERT_TRUE(add("web", "198.18.2.0/24", 10).ok());
  auto full = add("web", "198.18.3.0/24", 10);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.error().err, ENOSPC);
  EXPECT_NE(full.error().message.find("rlctl override del"), std::string::npos);
  EXPECT_TRUE(add("web", "2001:db8::/48", 10).ok());
  EXPECT_EQ(book_->per_rule().at("web"), 3u);
}

TEST_F(OverrideBookTest, APolicyChangeMovesOverridesToTheNewIdsAndDropsTheLostOnes) {
  ASSERT_TRUE(add("web", "198.18.0.0/16", 1000).ok());
  ASSERT_TRUE(add("web", "198.18.1.0/24", 5, 0, "per-24").ok());
  const uint32_t old_id = id_of("web");
  apply(policy_with(6));  // the own limit changes: a new id; per-24 keeps its own
  ASSERT_NE(id_of("web"), old_id);
  ASSERT_EQ(dp_.overrides.size(), 2u);
  for (const auto& e : dp_.overrides)
    EXPECT_EQ(e.value.limit.id, id_of("web", e.value.limit_index)) << e.prefix.str();
  EXPECT_TRUE(book_->find(id_of("web"), *Address::parse("198.18.9.9")));
  // Without its stacked limit, that limit's override goes; without the rule, all of them.
  auto p = policy_with(6);
  p.rules[0].more.clear();
  apply(p);
  ASSERT_EQ(dp_.overrides.size(), 1u);
  EXPECT_EQ(dp_.overrides[0].prefix, P("198.18.0.0/16"));
  p.rules.erase(p.rules.begin());
  apply(p);
  EXPECT_TRUE(dp_.overrides.empty());
  EXPECT_TRUE(book_->per_rule().empty());
}

TEST_F(OverrideBookTest, ARestartReadsTheEntriesBackAndAReplacedLayoutsAreCompiledAgain) {
  ASSERT_TRUE(add("web", "198.18.0.0/16", 1000, 0, "", 60 * kSec).ok());
  auto again = open();
  ASSERT_EQ(again->list().size(), 1u);
  EXPECT_EQ(again->per_rule().at("web"), 1u);

  // A replaced data path's entry: the old policy's id, compiled again at the next settle.
  OverrideEntry carried = dp_.overrides[0];
  carried.prefix = P("2001:db8::/32");
  carried.value.limit.id = 999;
  book_->carry({carried});
  EXPECT_EQ(dp_.overrides.size(), 1u) << "nothing written before a policy is in force";
  apply(policy_with(5));
  ASSERT_EQ(dp_.overrides.size(), 2u);
  EXPECT_EQ(dp_.overrides[1].value.limit.id, id_of("web"));
  EXPECT_EQ(dp_.overrides[1].value.expires_ns, carried.value.expires_ns) << "its expiry kept";
}

TEST_F(OverrideBookTest, ExpiredOverridesAreSweptAndNoLongerListedOrFound) {
  ASSERT_TRUE(add("web", "198.18.0.0/16", 1000, 0, "", 10 * kSec).ok());
  ASSERT_TRUE(add("web", "198.19.0.0/16", 1000).ok());
  EXPECT_EQ(book_->sweep(), 0u);
  dp_.now += 10 * kSec;
  EXPECT_EQ(book_->list().size(), 1u);
  EXPECT_FALSE(book_->find(id_of("web"), *Address::parse("198.18.0.1")));
  EXPECT_EQ(book_->sweep(), 1u);
  ASSERT_EQ(dp_.overrides.size(), 1u);
  EXPECT_EQ(dp_.overrides[0].prefix, P("198.19.0.0/16"));
}

TEST_F(OverrideBookTest, RemoveFindsTheEntryByRuleLimitAndPrefix) {
  ASSERT_TRUE(add("web", "198.18.1.0/24", 10).ok());
  ASSERT_TRUE(add("web", "198.18.1.0/24", 10, 0, "per-24").ok());
  auto none = book_->remove("web", "", P("198.18.2.0/24"));
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none);
  auto gone = book_->remove("web", "per-24", P("198.18.1.0/24"));
  ASSERT_TRUE(gone.ok() && *gone);
  EXPECT_EQ((*gone)->value.limit_index, 1);
  ASSERT_EQ(dp_.overrides.size(), 1u);
  EXPECT_EQ(dp_.overrides[0].value.limit_index, 0);
}

}  // namespace
}  // namespace rl::daemon
