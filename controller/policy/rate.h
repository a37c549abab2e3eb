// SPDX-License-Identifier: GPL-2.0-only
// Human-written quantities in policy files: rates ("100/s", "10Mbit/s"), byte sizes ("64KiB")
// and durations ("2h30m"). Errors carry a message meant for the operator, without location.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"
#include "policy/model.h"

namespace rl::policy {

// "<amount>[unit]/[N]<period>" or "<amount><unit>ps" (per second):
//   packets: "100/s", "6000/min", "3/sec", "100/10s", "5/500ms", "10k/s"
//   bits:    "10Mbit/s", "1Gbit/s", "500kbit/s", "100Kbps" (b = bit, converted to bytes
//            rounding down)
//   bytes:   "10MB/s", "1MiB/s", "1500B/s", "64KBps"
// Prefixes k/K = 1e3, M = 1e6, G = 1e9, T = 1e12; Ki/Mi/Gi/Ti are binary. Periods: ms, s/sec,
// m/min/minute, h/hour, d/day (plural forms too). The period is kept as written: windows
// use it as their length.
Result<Rate> parse_rate(std::string_view text);

// "1500", "1500B", "64KiB", "1MB", "10kB". Zero is accepted; callers decide whether it makes
// sense.
Result<uint64_t> parse_bytes(std::string_view text);

// "30s", "500ms", "10m", "1h", "2h30m", "1d" (also ns, us). A bare number is rejected: "30"
// could be seconds or milliseconds, and guessing wrong is silent.
Result<uint64_t> parse_duration_ns(std::string_view text);

// Canonical spelling for messages: "100/s", "1250000B/s", "6000/min", "100/10s".
std::string format_rate(const Rate& rate);
// "30s", "1h30m", "250ms".
std::string format_duration(uint64_t ns);

}  // namespace rl::policy
