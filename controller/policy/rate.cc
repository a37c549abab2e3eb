// SPDX-License-Identifier: GPL-2.0-only
#include "policy/rate.h"

#include <cctype>
#include <limits>
#include <optional>

namespace rl::policy {
namespace {

// 128-bit intermediates let every overflow check be a single comparison at the end.
using u128 = unsigned __int128;

constexpr uint64_t kNs = 1;
constexpr uint64_t kUs = 1000 * kNs;
constexpr uint64_t kMs = 1000 * kUs;
constexpr uint64_t kSec = 1000 * kMs;
constexpr uint64_t kMin = 60 * kSec;
constexpr uint64_t kHour = 60 * kMin;
constexpr uint64_t kDay = 24 * kHour;
constexpr u128 kU64Max = std::numeric_limits<uint64_t>::max();

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

// mantissa / scale, e.g. "1.5" is {15, 10}.
struct Decimal {
  u128 mantissa = 0;
  u128 scale = 1;
};

// Consumes "123" or "1.25" from the front of `s`. Significant and fraction digits are capped
// at 24 each so that mantissa and scale times any unit multiplier fit in 128 bits; a quantity
// needing more digits is out of range anyway.
std::optional<Decimal> take_decimal(std::string_view& s, bool* too_many_digits) {
  constexpr size_t kMaxDigits = 24;
  Decimal d;
  size_t i = 0, significant = 0;
  auto take = [&](char c) {
    if (d.mantissa == 0 && c == '0') return;
    if (++significant > kMaxDigits) {
      *too_many_digits = true;
      return;
    }
    d.mantissa = d.mantissa * 10 + (c - '0');
  };
  for (; i < s.size() && is_digit(s[i]); i++) take(s[i]);
  bool any = i > 0;
  if (i < s.size() && s[i] == '.') {
    size_t j = i + 1;
    for (size_t fraction_digits = 1; j < s.size() && is_digit(s[j]); j++, fraction_digits++) {
      if (fraction_digits > kMaxDigits) {
        *too_many_digits = true;
        continue;
      }
      take(s[j]);
      d.scale *= 10;
    }
    if (j == i + 1) return std::nullopt;  // "1." is a typo more often than a number
    i = j;
    any = true;
  }
  if (!any) return std::nullopt;
  s.remove_prefix(i);
  return d;
}

std::string_view take_letters(std::string_view& s) {
  size_t i = 0;
  while (i < s.size() && is_alpha(s[i])) i++;
  auto word = s.substr(0, i);
  s.remove_prefix(i);
  return word;
}

enum class Quantity { kPackets, kBits, kBytes };

struct AmountUnit {
  Quantity quantity;
  uint64_t multiplier;
};

uint64_t power(uint64_t base, int exp) {
  uint64_t r = 1;
  while (exp-- > 0) r *= base;
  return r;
}

// "", "k", "Mbit", "KiB", "Gb", "bytes", "pkts"... Lowercase b is bit and uppercase B is byte,
// as in networking usage. Prefix case is free for bits and bytes ("mbit" is common in tc
// configurations); for packets only k/K/M/G/T are taken, so "10m/s" is not a silent
// "10 million per second".
std::optional<AmountUnit> amount_unit(std::string_view u) {
  auto base_of = [](std::string_view b) -> std::optional<Quantity> {
    if (b == "bit" || b == "bits" || b == "b") return Quantity::kBits;
    if (b == "B" || b == "byte" || b == "bytes") return Quantity::kBytes;
    if (b.empty() || b == "p" || b == "pkt" || b == "pkts" || b == "packet" || b == "packets")
      return Quantity::kPackets;
    return std::nullopt;
  };
  if (auto q = base_of(u)) return AmountUnit{*q, 1};
  if (u.empty()) return std::nullopt;
  static constexpr std::string_view kPrefixes = "kmgt";  // 10^3, 10^6, 10^9, 10^12
  size_t index = kPrefixes.find(static_cast<char>(std::tolower(static_cast<unsigned char>(u[0]))));
  if (index == std::string_view::npos) return std::nullopt;
  int exp = static_cast<int>(index) + 1;
  bool binary = u.size() > 1 && u[1] == 'i';
  auto q = base_of(u.substr(binary ? 2 : 1));
  if (!q) return std::nullopt;
  if (*q == Quantity::kPackets && (binary || u[0] == 'm' || u[0] == 'g' || u[0] == 't'))
    return std::nullopt;
  return AmountUnit{*q, power(binary ? 1024 : 1000, exp)};
}

std::optional<uint64_t> period_unit_ns(std::string_view u) {
  if (u == "ms" || u == "msec" || u == "millisecond" || u == "milliseconds") return kMs;
  if (u == "s" || u == "sec" || u == "secs" || u == "second" || u == "seconds") return kSec;
  if (u == "m" || u == "min" || u == "mins" || u == "minute" || u == "minutes") return kMin;
  if (u == "h" || u == "hr" || u == "hrs" || u == "hour" || u == "hours") return kHour;
  if (u == "d" || u == "day" || u == "days") return kDay;
  return std::nullopt;
}

// Durations use Go's short units; "min" as well, since rates accept it.
std::optional<uint64_t> duration_unit_ns(std::string_view u) {
  static constexpr std::pair<std::string_view, uint64_t> kUnits[] = {
      {"ns", kNs}, {"us", kUs},   {"ms", kMs},  {"s", kSec},
      {"m", kMin}, {"min", kMin}, {"h", kHour}, {"d", kDay}};
  for (auto [name, ns] : kUnits)
    if (u == name) return ns;
  return std::nullopt;
}

Error rate_error(std::string_view text, const std::string& why) {
  return Error{0, "invalid rate '" + std::string(text) + "': " + why};
}

// The "[N]<unit>" after the slash.
Result<uint64_t> parse_period(std::string_view original, std::string_view p) {
  p = trim(p);
  u128 count = 1;
  if (!p.empty() && is_digit(p[0])) {
    count = 0;
    size_t digits = 0;
    while (!p.empty() && is_digit(p[0])) {
      count = count * 10 + (p[0] - '0');
      p.remove_prefix(1);
      if (++digits > 19) return rate_error(original, "period is too long");
    }
    if (count == 0) return rate_error(original, "period must be greater than 0");
    p = trim(p);
  }
  if (p.empty())
    return rate_error(original, "missing period unit after '/' (use ms, s, min, h or d)");
  auto unit = period_unit_ns(p);
  if (!unit)
    return rate_error(original, "unknown period '" + std::string(p) + "' (use ms, s, min, h or d)");
  u128 ns = count * *unit;
  if (ns > kU64Max) return rate_error(original, "period is too long");
  return static_cast<uint64_t>(ns);
}

}  // namespace

Result<Rate> parse_rate(std::string_view text) {
  std::string_view s = trim(text);
  if (s.empty()) return Error{0, "empty rate: expected e.g. 100/s, 6000/min or 10Mbit/s"};
  if (s[0] == '-') return Error{0, "rate '" + std::string(s) + "' must be positive"};

  std::string_view amount_text = s, period_text;
  bool per_second_suffix = false;
  auto slash = s.find('/');
  if (slash != std::string_view::npos) {
    amount_text = s.substr(0, slash);
    period_text = s.substr(slash + 1);
  }

  std::string_view rest = trim(amount_text);
  bool too_many_digits = false;
  auto number = take_decimal(rest, &too_many_digits);
  if (!number) return rate_error(s, "expected a number first, e.g. 100/s or 10Mbit/s");
  rest = trim(rest);
  std::string_view unit_text = take_letters(rest);
  if (!trim(rest).empty()) return rate_error(s, "unexpected '" + std::string(trim(rest)) + "'");
  if (slash == std::string_view::npos) {
    // "100Kbps", "10MBps", "1000pps": "ps" abbreviates "per second".
    if (unit_text.size() > 2 && unit_text.ends_with("ps")) {
      unit_text.remove_suffix(2);
      per_second_suffix = true;
    } else {
      return rate_error(s, "missing period, e.g. 100/s, 6000/min or 10Mbit/s");
    }
  }
  auto unit = amount_unit(unit_text);
  if (!unit)
    return rate_error(s, "unknown unit '" + std::string(unit_text) +
                             "' (use no unit for packets, or e.g. kbit, Mbit, Gbit, kB, MB, MiB)");

  uint64_t period_ns = kSec;
  if (!per_second_suffix) {
    auto period = parse_period(s, period_text);
    if (!period) return period.error();
    period_ns = *period;
  }

  if (too_many_digits) return Error{0, "rate '" + std::string(s) + "' has too many digits"};
  if (number->mantissa == 0)
    return Error{0, "rate '" + std::string(s) + "' must be greater than 0"};
  u128 scaled = number->mantissa * unit->multiplier;
  u128 amount;
  if (unit->quantity == Quantity::kBits) {
    amount = scaled / (number->scale * 8);
    if (amount == 0)
      return Error{0, "rate '" + std::string(s) + "' is less than one byte per period"};
  } else {
    if (scaled % number->scale != 0) {
      return rate_error(s, unit->quantity == Quantity::kPackets
                               ? "packets must be whole; write e.g. 3/2s instead of 1.5/s"
                               : "bytes must be whole");
    }
    amount = scaled / number->scale;
  }
  if (amount > kU64Max) return Error{0, "rate '" + std::string(s) + "' is too large"};
  return Rate{static_cast<uint64_t>(amount), period_ns,
              unit->quantity == Quantity::kPackets ? Unit::kPackets : Unit::kBytes};
}

Result<uint64_t> parse_bytes(std::string_view text) {
  std::string_view s = trim(text);
  auto bad = [&](const std::string& why) {
    return Error{0, "invalid byte size '" + std::string(s) + "': " + why};
  };
  if (s.empty()) return Error{0, "empty byte size: expected e.g. 1500, 64KiB or 1MB"};
  if (s[0] == '-') return bad("must not be negative");
  std::string_view rest = s;
  bool too_many_digits = false;
  auto number = take_decimal(rest, &too_many_digits);
  if (!number) return bad("expected a number, e.g. 1500, 64KiB or 1MB");
  rest = trim(rest);
  std::string_view unit_text = take_letters(rest);
  if (!rest.empty()) return bad("unexpected '" + std::string(rest) + "'");
  auto unit = amount_unit(unit_text);
  if (unit && unit->quantity == Quantity::kBits) return bad("sizes are in bytes (B), not bits");
  if (!unit || (unit->quantity == Quantity::kPackets && !unit_text.empty()))
    return bad("unknown unit '" + std::string(unit_text) + "' (use B, kB, KiB, MB, MiB, GB, GiB)");
  if (too_many_digits) return bad("too many digits");
  u128 scaled = number->mantissa * unit->multiplier;
  if (scaled % number->scale != 0) return bad("not a whole number of bytes");
  u128 bytes = scaled / number->scale;
  if (bytes > kU64Max) return bad("too large");
  return static_cast<uint64_t>(bytes);
}

Result<uint64_t> parse_duration_ns(std::string_view text) {
  std::string_view s = trim(text);
  auto bad = [&](const std::string& why) {
    return Error{0, "invalid duration '" + std::string(s) + "': " + why};
  };
  if (s.empty()) return Error{0, "empty duration: expected e.g. 30s, 500ms, 10m or 1h"};
  if (s[0] == '-') return bad("must not be negative");
  if (s.find_first_not_of("0123456789.") == std::string_view::npos)
    return Error{0, "duration '" + std::string(s) + "' needs a unit (e.g. " + std::string(s) +
                        "s, 500ms, 10m, 1h)"};
  std::string_view rest = s;
  u128 total = 0;
  bool too_many_digits = false;
  while (!rest.empty()) {
    auto number = take_decimal(rest, &too_many_digits);
    if (!number) return bad("expected a number, e.g. 30s or 2h30m");
    rest = trim(rest);
    std::string_view unit_text = take_letters(rest);
    if (unit_text.empty()) return bad("missing unit after the last number");
    auto unit = duration_unit_ns(unit_text);
    if (!unit) return bad("unknown unit '" + std::string(unit_text) + "' (use ms, s, m, h or d)");
    if (too_many_digits) return bad("too many digits");
    u128 part = number->mantissa * *unit;
    if (part % number->scale != 0) return bad("finer than a nanosecond");
    total += part / number->scale;
    if (total > kU64Max) return bad("too long");
    rest = trim(rest);
  }
  return static_cast<uint64_t>(total);
}

std::string format_rate(const Rate& rate) {
  static constexpr std::pair<uint64_t, const char*> kUnits[] = {
      {kDay, "d"}, {kHour, "h"}, {kMin, "min"}, {kSec, "s"}, {kMs, "ms"}, {kUs, "us"}, {1, "ns"}};
  std::string out = std::to_string(rate.amount) + (rate.unit == Unit::kBytes ? "B" : "") + "/";
  for (auto [ns, name] : kUnits) {
    if (rate.period_ns != 0 && rate.period_ns % ns == 0) {
      uint64_t n = rate.period_ns / ns;
      return out + (n == 1 ? "" : std::to_string(n)) + name;
    }
  }
  return out + "0s";
}

std::string format_duration(uint64_t ns) {
  if (ns == 0) return "0s";
  static constexpr std::pair<uint64_t, const char*> kUnits[] = {
      {kDay, "d"}, {kHour, "h"}, {kMin, "m"}, {kSec, "s"}, {kMs, "ms"}, {kUs, "us"}, {1, "ns"}};
  std::string out;
  for (auto [unit, name] : kUnits) {
    if (ns >= unit) {
      out += std::to_string(ns / unit) + name;
      ns %= unit;
    }
  }
  return out;
}

}  // namespace rl::policy
