// SPDX-License-Identifier: GPL-2.0-only
// A loaded rl_xdp program (real verifier, real maps) driven through BPF_PROG_TEST_RUN.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>

#include "../support/builders.h"
#include "compiler/compiler.h"
#include "datapath/bpf_datapath.h"
#include "datapath/test_hooks.h"
#include "packet.h"

namespace rl::testing {

constexpr uint64_t kT0 = 1'000'000'000'000ULL;  // test clock start (never 0: 0 means real time)
constexpr uint64_t kSec = 1'000'000'000ULL;

// A frame builder with its IPv4 or IPv6 header's addresses set, for the transport to follow.
inline packet::Builder ipv4_frame(const std::string& src, const std::string& dst) {
  packet::Builder b;
  b.ipv4(src, dst);
  return b;
}
inline packet::Builder ipv6_frame(const std::string& src, const std::string& dst) {
  packet::Builder b;
  b.ipv6(src, dst);
  return b;
}

class BpfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    LoadOptions o;
    o.key_capacity = 1 << 16;
    o.cluster_keys = 4096;
    o.trace_decisions = true;
    options(o);
    compile_options_.max_rules = o.max_rules;
    auto dp = BpfDatapath::load(o);
    ASSERT_TRUE(dp.ok()) << dp.error().str();
    dp_ = std::move(*dp);
    hooks().set_clock(kT0);
  }

  // A test's own load-time settings.
  virtual void options(LoadOptions&) {}

  // Frames, the clock and the decisions of the loaded program.
  DatapathTestHooks hooks() const { return DatapathTestHooks(*dp_); }

  void apply(const policy::Policy& p) {
    auto c = compiler::compile(p, ids_, compile_options_);
    ASSERT_TRUE(c.ok()) << c.error().str();
    ids_ = c->ids;
    compiled_ = *c;
    auto s = dp_->apply(*c);
    ASSERT_TRUE(s.ok()) << s.error().str();
  }

  // A policy of the one rule `r`, applied.
  void one_rule(const policy::Rule& r) {
    policy::Policy p;
    p.rules = {r};
    apply(p);
  }

  rl_decision send(const std::vector<uint8_t>& frame) {
    auto r = hooks().run(frame);
    EXPECT_TRUE(r.ok()) << r.error().str();
    rl_decision d = hooks().last_decision();
    EXPECT_EQ(d.verdict, r.ok() ? r->action : 0u);
    return d;
  }

  // Sends `n` copies, returns how many passed.
  int passed(const std::vector<uint8_t>& frame, int n) {
    int ok = 0;
    for (int i = 0; i < n; i++) ok += send(frame).verdict == XDP_PASS;
    return ok;
  }

  rl_rule_counters counters(const std::string& rule) {
    auto c = dp_->rule_counters(ids_.by_name.at(rule).stats_slot);
    EXPECT_TRUE(c.ok());
    return c.ok() ? *c : rl_rule_counters{};
  }

  uint64_t global(rl_global_counter idx) {
    auto g = dp_->global_counters();
    EXPECT_TRUE(g.ok());
    return g.ok() ? (*g)[idx].pkts : 0;
  }

  static std::vector<uint8_t> udp4(const std::string& src, uint16_t dport = 53) {
    return packet::Builder().ipv4(src, "192.0.2.1").udp(40000, dport).build();
  }
  static std::vector<uint8_t> udp6(const std::string& src, uint16_t dport = 53) {
    return packet::Builder().ipv6(src, "2001:db8::1").udp(40000, dport).build();
  }
  static std::vector<uint8_t> tcp4(const std::string& src, uint16_t dport, uint8_t flags) {
    return packet::Builder().ipv4(src, "192.0.2.1").tcp(40000, dport, flags).build();
  }

  std::unique_ptr<BpfDatapath> dp_;
  compiler::CompileOptions compile_options_;
  compiler::RuleIds ids_;
  compiler::CompiledRuleSet compiled_;
};

}  // namespace rl::testing
