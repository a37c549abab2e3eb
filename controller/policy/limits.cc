// SPDX-License-Identifier: GPL-2.0-only
#include "policy/limits.h"

#include "policy/describe.h"
#include "policy/rate.h"
#include "rl_limiter_state.h"

namespace rl::policy::detail {
namespace {

using u128 = unsigned __int128;

// Token buckets (GCRA) keep the emission interval, ns per unit, in 16.16 fixed point
// (rl_rule.interval_fp): below one 65536th of a ns per unit it rounds to zero.
constexpr u128 kFixedOne = RL_FP_ONE;
// A byte bucket multiplies the interval by the packet size (up to 2^16 bytes) in 64 bits; a
// packet bucket keeps it below 2^63 (about 39 hours per packet).
constexpr u128 kByteIntervalLimit = u128{1} << 48;
constexpr u128 kPacketIntervalLimit = u128{1} << 63;
// burst_ns = burst * interval is added to nanosecond timestamps; a year keeps it far from
// overflow while no real burst comes near it.
constexpr u128 kYearNs = u128{365} * 24 * 3600 * 1'000'000'000;
constexpr uint64_t kMinPacketBytes = 64;  // smallest Ethernet frame
// The window lengths the data path supports.
constexpr uint64_t kMinWindowNs = 1'000'000;
constexpr uint64_t kMaxWindowNs = uint64_t{24} * 3600 * 1'000'000'000;
// Window state words hold the counts (abi/rl_limiter_state.h).
constexpr uint64_t kSlidingMaxPackets = RL_SW_COUNT_MAX;
constexpr uint64_t kFixedMaxPackets = RL_FW_COUNT_MAX;

void check_token_bucket(const Limit& l, bool burst_given, std::vector<LimitProblem>& out) {
  using F = LimitProblem::Field;
  const Rate& r = l.rate;
  std::string rate = format_rate(r);
  u128 interval = u128{r.period_ns} * kFixedOne / r.amount;
  if (interval < 1) {
    out.push_back({F::kRate, "rate " + rate +
                                 " is too fast for token_bucket (at most 65536 per nanosecond)"});
    return;
  }
  bool bytes = r.unit == Unit::kBytes;
  if (bytes && interval >= kByteIntervalLimit) {
    out.push_back({F::kRate, "rate " + rate +
                                 " is too slow for a byte token_bucket (at least 1 byte every "
                                 "4.29s); use a packet rate or a window"});
    return;
  }
  if (!bytes && interval >= kPacketIntervalLimit) {
    out.push_back(
        {F::kRate, "rate " + rate + " is too slow for token_bucket (at least 1 packet every 39h)"});
    return;
  }
  if (bytes && l.burst < kMinPacketBytes) {
    if (burst_given)
      out.push_back({F::kBurst, "burst of " + std::to_string(l.burst) +
                                    " bytes is below 64 bytes: no packet could pass"});
    else
      out.push_back({F::kRate, "rate " + rate + " gives a default burst of " +
                                   std::to_string(l.burst) +
                                   " bytes, below 64 bytes: no packet could pass; set burst"});
    return;
  }
  if (u128{l.burst} * interval > kYearNs * kFixedOne) {
    out.push_back({burst_given ? F::kBurst : F::kRate,
                   "burst of " + std::to_string(l.burst) + " at rate " + rate +
                       " takes more than a year to refill; lower the burst or raise the rate"});
  }
}

void check_window(const Limit& l, std::vector<LimitProblem>& out) {
  using F = LimitProblem::Field;
  const Rate& r = l.rate;
  std::string rate = format_rate(r);
  std::string algorithm = algorithm_name(l.algorithm);
  if (r.period_ns < kMinWindowNs || r.period_ns > kMaxWindowNs) {
    out.push_back({F::kRate, algorithm + " needs a window between 1ms and 1d; rate " + rate +
                                 " has a window of " + format_duration(r.period_ns)});
    return;
  }
  if (l.algorithm == Algorithm::kSlidingLog) {
    if (r.unit == Unit::kBytes)
      out.push_back({F::kRate, "sliding_log counts packets, one log entry each; rate " + rate +
                                   " is in bytes (use sliding_window or token_bucket)"});
    else if (r.amount > RL_SL_MAX_ENTRIES)
      out.push_back({F::kRate, "sliding_log keeps at most " + std::to_string(RL_SL_MAX_ENTRIES) +
                                   " entries per key, rate " + rate + " needs " +
                                   std::to_string(r.amount) +
                                   "; use sliding_window, which counts any amount per window"});
    return;
  }
  if (r.unit == Unit::kBytes) {
    if (r.amount < kMinPacketBytes)
      out.push_back({F::kRate, "rate " + rate +
                                   " allows fewer than 64 bytes per window: no packet could pass"});
    return;
  }
  uint64_t max = l.algorithm == Algorithm::kFixedWindow ? kFixedMaxPackets : kSlidingMaxPackets;
  if (r.amount > max) {
    out.push_back({F::kRate, algorithm + " counts at most " + std::to_string(max) +
                                 " packets per window, rate " + rate +
                                 " needs more; use token_bucket or a shorter window"});
  }
}

}  // namespace

std::vector<LimitProblem> check_limit(const Limit& limit, bool burst_given) {
  std::vector<LimitProblem> out;
  if (limit.rate.amount == 0 || limit.rate.period_ns == 0) return out;  // parse_rate rejects these
  if (limit.algorithm == Algorithm::kTokenBucket)
    check_token_bucket(limit, burst_given, out);
  else
    check_window(limit, out);
  return out;
}

}  // namespace rl::policy::detail
