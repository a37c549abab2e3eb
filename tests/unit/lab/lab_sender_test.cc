// SPDX-License-Identifier: GPL-2.0-only
// The checks every lab sender makes before a frame leaves: only lab addresses, bounded counts,
// rates and times, and usage errors rather than wrapped numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "lab/lab_range.h"
#include "lab/sender_options.h"
#include "options.h"  // rlflood's, which builds on the shared options

namespace rl::lab {
namespace {

struct Argv {
  explicit Argv(std::vector<std::string> a) : args(std::move(a)) {
    args.insert(args.begin(), "sender");
    for (auto& s : args) ptrs.push_back(s.data());
  }
  int argc() { return static_cast<int>(ptrs.size()); }
  char** argv() { return ptrs.data(); }
  std::vector<std::string> args;
  std::vector<char*> ptrs;
};

const SenderLimits kLimits{.max_sources = 1000,
                           .max_count = 5000,
                           .max_rate = 100,
                           .max_seconds = 30,
                           .sources_help = "sources",
                           .rate_help = "rate"};

// A valid command line, with the options in extra (name, value, ...) replacing or adding to it.
Status parse(std::vector<std::string> extra, SenderOptions& o) {
  std::vector<std::pair<std::string, std::string>> opts{{"--iface", "veth0"},
                                                        {"--dst-mac", "02:00:00:00:00:01"},
                                                        {"--src", "198.18.0.0/24"},
                                                        {"--dst", "192.0.2.1"},
                                                        {"--count", "10"}};
  for (size_t i = 0; i + 1 < extra.size(); i += 2) {
    auto it =
        std::find_if(opts.begin(), opts.end(), [&](auto& kv) { return kv.first == extra[i]; });
    if (it != opts.end())
      it->second = extra[i + 1];
    else
      opts.emplace_back(extra[i], extra[i + 1]);
  }
  std::vector<std::string> args;
  args.reserve(opts.size());
  for (auto& [name, value] : opts) args.push_back(name + "=" + value);
  Argv a(args);
  CLI::App app;
  SenderRaw raw;
  add_sender_options(app, kLimits, raw, o);
  std::optional<std::string> help;
  if (auto s = parse_command_line(app, a.argc(), a.argv(), help); !s) return s;
  return validate_sender(raw, kLimits, o);
}

std::string error_of(std::vector<std::string> extra) {
  SenderOptions o;
  auto s = parse(std::move(extra), o);
  return s ? std::string() : s.error().str();
}

TEST(LabSender, AcceptsLabAddressesAndStoresWhatWasAsked) {
  SenderOptions o;
  ASSERT_TRUE(parse({"--sources", "200", "--rate", "50", "--sport", "53"}, o));
  EXPECT_EQ(o.src.str(), "198.18.0.0/24");
  EXPECT_EQ(o.dst.str(), "192.0.2.1");
  EXPECT_EQ(o.sources, 200u);
  EXPECT_EQ(o.rate, 50u);
  EXPECT_EQ(o.sport, 53);
  EXPECT_EQ(o.count, 10u);
  EXPECT_EQ(o.dst_mac[5], 1);
}

TEST(LabSender, RefusesAddressesOutsideTheLab) {
  EXPECT_NE(error_of({"--src", "192.0.2.7"}).find("outside the lab ranges"), std::string::npos);
  EXPECT_NE(error_of({"--src", "10.0.0.0/8"}).find("outside the lab ranges"), std::string::npos);
  EXPECT_NE(error_of({"--dst", "8.8.8.8"}).find("outside the lab ranges"), std::string::npos);
  EXPECT_NE(error_of({"--src", "2001:db8::/48", "--dst", "192.0.2.1"}).find("same address family"),
            std::string::npos);
  EXPECT_TRUE(error_of({"--src", "2001:db8::/48", "--dst", "3fff::1"}).empty());
}

TEST(LabSender, BoundsEveryCountRateAndTime) {
  EXPECT_NE(error_of({"--count", "-5"}).find("--count must be between 1 and 5000"),
            std::string::npos);
  EXPECT_NE(error_of({"--count", "5001"}).find("--count"), std::string::npos);
  EXPECT_NE(error_of({"--rate", "101"}).find("--rate"), std::string::npos);
  EXPECT_NE(error_of({"--sources", "1001"}).find("--sources"), std::string::npos);
  EXPECT_NE(error_of({"--sport", "65536"}).find("--sport"), std::string::npos);
  EXPECT_NE(error_of({"--max-seconds", "31"}).find("--max-seconds must be in (0, 30]"),
            std::string::npos);
  EXPECT_NE(error_of({"--max-seconds", "0"}).find("--max-seconds"), std::string::npos);
  EXPECT_NE(error_of({"--dst-mac", "02:00:00:00:00"}).find("not a MAC address"), std::string::npos);
  EXPECT_NE(error_of({"--iface", "an-interface-name-too-long"}).find("not a valid interface"),
            std::string::npos);
}

TEST(LabSender, HelpIsNotAnError) {
  Argv a({"--help"});
  CLI::App app;
  SenderRaw raw;
  SenderOptions o;
  add_sender_options(app, kLimits, raw, o);
  std::optional<std::string> help;
  ASSERT_TRUE(parse_command_line(app, a.argc(), a.argv(), help));
  ASSERT_TRUE(help.has_value());
  EXPECT_NE(help->find("--max-seconds"), std::string::npos);
}

TEST(LabSender, AToolAddsItsOwnOptionsAndChecks) {
  Argv ok({"--iface", "veth0", "--dst-mac", "02:00:00:00:00:01", "--src", "2001:db8::/64",
           "--sources", "1000", "--dst", "3fff::1", "--count", "100", "--proto", "tcp-syn",
           "--order", "random", "--threads", "1"});
  auto parsed = rlflood::parse_options(ok.argc(), ok.argv());
  ASSERT_TRUE(parsed) << parsed.error().str();
  EXPECT_EQ(parsed->options.proto, rlflood::Proto::kTcpSyn);
  EXPECT_EQ(parsed->options.order, rlflood::Order::kShuffled);
  EXPECT_EQ(parsed->options.sources, 1000u);
  EXPECT_EQ(parsed->options.max_seconds, 10);

  Argv bad({"--iface", "veth0", "--dst-mac", "02:00:00:00:00:01", "--src", "198.18.0.0/30",
            "--sources", "4", "--dst", "192.0.2.1", "--count", "100"});
  auto refused = rlflood::parse_options(bad.argc(), bad.argv());
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().str().find("holds only 3 source(s)"), std::string::npos);
}

// --sports counts ports up from --sport, which must not run past 65535.
TEST(LabSender, SourcePortsStayWithinThePortSpace) {
  auto parse = [](const std::string& sport, const std::string& sports) {
    Argv a({"--iface", "veth0", "--dst-mac", "02:00:00:00:00:01", "--src", "198.18.0.1", "--dst",
            "192.0.2.1", "--count", "100", "--sport", sport, "--sports", sports});
    return rlflood::parse_options(a.argc(), a.argv());
  };
  auto all = parse("0", "65536");
  ASSERT_TRUE(all) << all.error().str();
  EXPECT_EQ(all->options.sports, 65536u);
  auto last = parse("65000", "536");
  ASSERT_TRUE(last) << last.error().str();
  EXPECT_EQ(last->options.sports, 536u);
  for (const auto& [sport, sports] :
       std::vector<std::pair<std::string, std::string>>{{"65000", "537"}, {"1", "0"}}) {
    auto refused = parse(sport, sports);
    ASSERT_FALSE(refused) << sport << " " << sports;
    EXPECT_NE(refused.error().str().find("--sports"), std::string::npos) << refused.error().str();
  }
}

}  // namespace
}  // namespace rl::lab
