// SPDX-License-Identifier: GPL-2.0-only
#include "policy/rate.h"

#include "policy_test_util.h"

#include <gtest/gtest.h>

namespace rl::policy {
namespace {

using test_util::kDay;
using test_util::kHour;
using test_util::kMin;
using test_util::kMs;
using test_util::kSec;

struct RateCase {
  const char* text = nullptr;
  Rate want;
};

TEST(ParseRate, Valid) {
  const RateCase cases[] = {
      {"100/s", {100, kSec, Unit::kPackets}},
      {"6000/min", {6000, kMin, Unit::kPackets}},
      {"3/sec", {3, kSec, Unit::kPackets}},
      {"100/10s", {100, 10 * kSec, Unit::kPackets}},
      {"5/500ms", {5, 500 * kMs, Unit::kPackets}},
      {"1/m", {1, kMin, Unit::kPackets}},
      {"1/minute", {1, kMin, Unit::kPackets}},
      {"2/h", {2, kHour, Unit::kPackets}},
      {"2/hour", {2, kHour, Unit::kPackets}},
      {"7/d", {7, kDay, Unit::kPackets}},
      {"7/day", {7, kDay, Unit::kPackets}},
      {"3/2s", {3, 2 * kSec, Unit::kPackets}},
      {" 100 / s ", {100, kSec, Unit::kPackets}},
      {"10k/s", {10'000, kSec, Unit::kPackets}},
      {"1000pps", {1000, kSec, Unit::kPackets}},
      {"10Mbit/s", {1'250'000, kSec, Unit::kBytes}},
      {"1Gbit/s", {125'000'000, kSec, Unit::kBytes}},
      {"500kbit/s", {62'500, kSec, Unit::kBytes}},
      {"100Kbps", {12'500, kSec, Unit::kBytes}},
      {"10mbit/s", {1'250'000, kSec, Unit::kBytes}},
      {"10Mb/s", {1'250'000, kSec, Unit::kBytes}},
      {"1.5Gbit/s", {187'500'000, kSec, Unit::kBytes}},
      {"100bit/s", {12, kSec, Unit::kBytes}},  // rounds down
      {"10MB/s", {10'000'000, kSec, Unit::kBytes}},
      {"1MiB/s", {1'048'576, kSec, Unit::kBytes}},
      {"1500B/s", {1500, kSec, Unit::kBytes}},
      {"64KBps", {64'000, kSec, Unit::kBytes}},
      {"2KiB/min", {2048, kMin, Unit::kBytes}},
      {"1.5MB/s", {1'500'000, kSec, Unit::kBytes}},
  };
  for (const auto& c : cases) {
    auto r = parse_rate(c.text);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.error().message;
    EXPECT_EQ(*r, c.want) << c.text << " gave " << format_rate(*r);
  }
}

struct BadCase {
  const char* text;
  const char* message;  // substring
};

TEST(ParseRate, Invalid) {
  const BadCase cases[] = {
      {"", "empty rate"},
      {"0/s", "must be greater than 0"},
      {"0Mbit/s", "must be greater than 0"},
      {"-5/s", "must be positive"},
      {"100", "missing period"},
      {"fast", "expected a number"},
      {"100/fortnight", "unknown period 'fortnight'"},
      {"100/", "missing period unit"},
      {"100/0s", "period must be greater than 0"},
      {"10Mbt/s", "unknown unit 'Mbt'"},
      {"10m/s", "unknown unit 'm'"},  // packets: no lowercase mega
      {"1.5/s", "packets must be whole"},
      {"7bit/s", "less than one byte"},
      {"1.5B/s", "bytes must be whole"},
      {"100000000000000000000/s", "too large"},
      {"20000000000TB/s", "too large"},
      {"1.0000000000000000000000000000001/s", "too many digits"},
      {"0.000000000000000000000000000000000000001MB/s", "too many digits"},
      {"9999999999999999999999999999999999999999999999Tbit/s", "too many digits"},
      {"100/99999999999999999999s", "period is too long"},
      {"100/s extra", "unknown period"},
      {"1 2/s", "unexpected '2'"},
  };
  for (const auto& c : cases) {
    auto r = parse_rate(c.text);
    ASSERT_FALSE(r.ok()) << c.text << " parsed as " << format_rate(*r);
    EXPECT_NE(r.error().message.find(c.message), std::string::npos)
        << c.text << ": " << r.error().message;
  }
}

TEST(FormatRate, Canonical) {
  EXPECT_EQ(format_rate({100, kSec, Unit::kPackets}), "100/s");
  EXPECT_EQ(format_rate({6000, kMin, Unit::kPackets}), "6000/min");
  EXPECT_EQ(format_rate({100, 10 * kSec, Unit::kPackets}), "100/10s");
  EXPECT_EQ(format_rate({1250000, kSec, Unit::kBytes}), "1250000B/s");
  EXPECT_EQ(format_rate({5, 500 * kMs, Unit::kPackets}), "5/500ms");
}

TEST(ParseBytes, Valid) {
  const std::pair<const char*, uint64_t> cases[] = {
      {"1500", 1500},   {"1500B", 1500},  {"64KiB", 65536},    {"1MB", 1'000'000},
      {"10kB", 10'000}, {"10KB", 10'000}, {"1MiB", 1'048'576}, {"2GiB", 2147483648ull},
      {"1.5kB", 1500},  {"0", 0},         {" 9000 B ", 9000},  {"100bytes", 100},
  };
  for (const auto& [text, want] : cases) {
    auto r = parse_bytes(text);
    ASSERT_TRUE(r.ok()) << text << ": " << r.error().message;
    EXPECT_EQ(*r, want) << text;
  }
}

TEST(ParseBytes, Invalid) {
  const BadCase cases[] = {
      {"", "empty byte size"},
      {"-1", "must not be negative"},
      {"lots", "expected a number"},
      {"64K", "unknown unit 'K'"},
      {"1Mbit", "not bits"},
      {"1.5B", "not a whole number"},
      {"100000000000000000000", "too large"},
      {"0.000000000000000000000000000000000000001MB", "too many digits"},
      {"20EB", "unknown unit 'EB'"},
      {"1MB/s", "unexpected '/s'"},
  };
  for (const auto& c : cases) {
    auto r = parse_bytes(c.text);
    ASSERT_FALSE(r.ok()) << c.text << " parsed as " << *r;
    EXPECT_NE(r.error().message.find(c.message), std::string::npos)
        << c.text << ": " << r.error().message;
  }
}

TEST(ParseDuration, Valid) {
  const std::pair<const char*, uint64_t> cases[] = {
      {"30s", 30 * kSec},
      {"500ms", 500 * kMs},
      {"10m", 10 * kMin},
      {"10min", 10 * kMin},
      {"1h", kHour},
      {"2h30m", 2 * kHour + 30 * kMin},
      {"1d", kDay},
      {"1d12h", kDay + 12 * kHour},
      {"1.5s", 1500 * kMs},
      {"250us", 250'000},
      {"10ns", 10},
      {"0s", 0},
      {"2h 30m", 2 * kHour + 30 * kMin},
  };
  for (const auto& [text, want] : cases) {
    auto r = parse_duration_ns(text);
    ASSERT_TRUE(r.ok()) << text << ": " << r.error().message;
    EXPECT_EQ(*r, want) << text;
  }
}

TEST(ParseDuration, Invalid) {
  const BadCase cases[] = {
      {"30", "needs a unit"},
      {"", "empty duration"},
      {"-5s", "must not be negative"},
      {"5 fortnights", "unknown unit 'fortnights'"},
      {"1h30", "missing unit"},
      {"soon", "expected a number"},
      {"0.5ns", "finer than a nanosecond"},
      {"999999999999d", "too long"},
      {"99999999999999999999999999999999999999d", "too many digits"},
  };
  for (const auto& c : cases) {
    auto r = parse_duration_ns(c.text);
    ASSERT_FALSE(r.ok()) << c.text << " parsed as " << *r;
    EXPECT_NE(r.error().message.find(c.message), std::string::npos)
        << c.text << ": " << r.error().message;
  }
}

TEST(FormatDuration, Composite) {
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(90 * kSec), "1m30s");
  EXPECT_EQ(format_duration(kDay + kHour), "1d1h");
  EXPECT_EQ(format_duration(1500 * kMs), "1s500ms");
}

}  // namespace
}  // namespace rl::policy
