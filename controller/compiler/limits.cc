// SPDX-License-Identifier: GPL-2.0-only
// A rule's limiter as the data path's integer parameters. The arithmetic here defines the
// limiter's exact behaviour; docs/datapath.md states the formulas.
#include "compiler/compiler.h"

#include <netinet/in.h>

#include <algorithm>

#include "rl_limiter_state.h"

namespace rl::compiler {
namespace {

using policy::Algorithm;
using policy::Unit;

// Window counts fit their fields of the state word (abi/rl_limiter_state.h).
constexpr uint64_t kSlidingMax = RL_SW_COUNT_MAX;
constexpr uint64_t kFixedMax = RL_FW_COUNT_MAX;

uint8_t key_kind(policy::KeyKind k) {
  switch (k) {
    case policy::KeyKind::kSourceAddress:
      return RL_KEY_SRC_ADDR;
    case policy::KeyKind::kSourcePrefix:
      return RL_KEY_SRC_PREFIX;
    case policy::KeyKind::kSourceAddressPort:
      return RL_KEY_SRC_ADDR_DPORT;
    case policy::KeyKind::kRule:
      return RL_KEY_RULE;
    case policy::KeyKind::kDestinationAddress:
    case policy::KeyKind::kDestinationPrefix:
      return RL_KEY_DST_PREFIX;
    case policy::KeyKind::kSourceDestination:
      return RL_KEY_SRC_DST;
  }
  return RL_KEY_SRC_ADDR;
}

// Why a rule cannot hold its connection limit, or "". Only a new connection's SYN is judged, and
// the count it meets needs no block, fleet or budget.
std::string connection_rule_problem(const policy::Rule& rule) {
  if (rule.limit.connections == 0) return "a connection limit must allow at least 1 connection";
  if (!rule.match.tcp_syn || rule.match.protocol != IPPROTO_TCP)
    return "a connection limit needs match protocol: tcp and tcp_syn: true";
  if (rule.block_ns || rule.cluster || rule.new_sources || rule.syn_cookies)
    return "a connection limit takes no block, cluster, new_sources or syn_cookies";
  return "";
}

// The error of a rule that cannot be compiled, naming the rule and where it is written.
Error rule_error(const policy::Rule& rule, const std::string& what) {
  std::string at = rule.where.file.empty() ? "" : rule.where.str() + ": ";
  return Error{EINVAL, at + "rule '" + rule.name + "': " + what};
}

// Why the rule's limit cannot be compiled at all, or "".
std::string limit_problem(const policy::Rule& rule) {
  const auto& lim = rule.limit;
  if (lim.algorithm == Algorithm::kConnections) return connection_rule_problem(rule);
  if (lim.rate.amount == 0 || lim.rate.period_ns == 0) return "rate must be positive";
  return "";
}

// What every limit has whatever its algorithm: the key and its prefixes, the cost unit, the
// action, the flags for reports and SYN cookies, and the block.
rl_rule key_action_and_flags(const policy::Rule& rule) {
  rl_rule r{};
  r.key_kind = key_kind(rule.key);
  r.cost_unit = rule.limit.rate.unit == Unit::kBytes ? RL_COST_BYTES : RL_COST_PACKETS;
  r.action = rule.action == policy::Action::kMonitor ? RL_ACTION_MONITOR : RL_ACTION_DROP;
  r.v4_prefix = rule.v4_prefix;
  r.v6_prefix = rule.v6_prefix;
  if (rule.key == policy::KeyKind::kDestinationAddress) {
    r.v4_prefix = 32;  // a whole address is its full-length prefix
    r.v6_prefix = 128;
  }
  // A source's key is its whole IPv4 address, or the IPv6 prefix its client holds.
  if (rule.key == policy::KeyKind::kSourceAddress ||
      rule.key == policy::KeyKind::kSourceAddressPort)
    r.v4_prefix = 32;
  r.flags = rule.report ? RL_RULE_F_REPORT : 0;
  if (rule.syn_cookies) r.flags |= RL_RULE_F_SYN_COOKIES;
  r.block_ns = rule.block_ns;
  return r;
}

// A token bucket's interval per unit (fixed point) and its burst as a time.
Status token_bucket(const policy::Rule& rule, const CompileOptions& options, rl_rule& r) {
  const auto& lim = rule.limit;
  const auto& rate = lim.rate;
  r.algo = RL_ALGO_TOKEN_BUCKET;
  unsigned __int128 fp =
      (static_cast<unsigned __int128>(rate.period_ns) << RL_FP_SHIFT) / rate.amount;
  if (fp == 0) return rule_error(rule, "rate is faster than one unit per 1/65536 ns");
  // A packet's cost is units * interval_fp: with byte costs (frame lengths below 2^16) the
  // interval must stay below 2^48, with packet costs below 2^63.
  bool bytes = rate.unit == Unit::kBytes;
  if (fp >= (bytes ? (1ULL << 48) : (1ULL << 63)))
    return rule_error(rule, bytes ? "byte rate is too slow (less than one byte per 4 s)"
                                  : "rate is too slow (less than one packet per 39 hours)");
  uint64_t burst = lim.burst ? lim.burst : rate.amount;
  unsigned __int128 burst_ns = (static_cast<unsigned __int128>(burst) * fp) >> RL_FP_SHIFT;
  if (burst_ns >= (1ULL << 62)) return rule_error(rule, "burst is too large for the rate");
  r.interval_fp = static_cast<uint64_t>(fp);
  r.burst_ns = static_cast<uint64_t>(burst_ns);
  // A bucket smaller than a few ticks of the coarse clock would lose the credit of a late
  // tick against its cap (see bpf/lib/clock.h).
  if (r.burst_ns < 8 * options.coarse_clock_ns) r.flags |= RL_RULE_F_PRECISE_CLOCK;
  return {};
}

// A fixed or sliding window's limit per window (bytes counted in units of 2^cost_shift) and
// its length.
Status window(const policy::Rule& rule, const CompileOptions& options, rl_rule& r) {
  const auto& rate = rule.limit.rate;
  bool sliding = rule.limit.algorithm == Algorithm::kSlidingWindow;
  r.algo = sliding ? RL_ALGO_SLIDING_WINDOW : RL_ALGO_FIXED_WINDOW;
  uint64_t max = sliding ? kSlidingMax : kFixedMax;
  uint64_t limit = rate.amount;
  uint8_t shift = 0;
  if (rate.unit == Unit::kBytes) {
    // Count bytes in units of 2^shift (costs round up, the limit rounds down: never lenient).
    while ((limit >> shift) > max) shift++;
  } else if (limit > max) {
    return rule_error(rule,
                      "at most " + std::to_string(max) + " packets per window with this algorithm");
  }
  r.cost_shift = shift;
  r.limit = limit >> shift;
  r.window_ns = rate.period_ns;
  // The sliding weight shifts (window - elapsed) left by RL_FP_SHIFT bits in 64.
  if (r.window_ns > (1ULL << (63 - RL_FP_SHIFT)))
    return rule_error(rule, "window longer than 39 hours");
  // A tick of lateness moves a window edge by at most 1% of the window.
  if (r.window_ns < 100 * options.coarse_clock_ns) r.flags |= RL_RULE_F_PRECISE_CLOCK;
  return {};
}

// A sliding log's entries per key, its window and the tick its ages count in.
Status sliding_log(const policy::Rule& rule, const CompileOptions& options, rl_rule& r) {
  const auto& rate = rule.limit.rate;
  // The policy checks keep the log to packets and RL_SL_MAX_ENTRIES entries.
  if (rate.unit != Unit::kPackets || rate.amount == 0 || rate.amount > RL_SL_MAX_ENTRIES)
    return rule_error(rule, "sliding_log keeps 1 to " + std::to_string(RL_SL_MAX_ENTRIES) +
                                " packet entries per key");
  r.algo = RL_ALGO_SLIDING_LOG;
  r.limit = rate.amount;
  r.window_ns = rate.period_ns;
  // The finest tick whose window fits the log's age fields (abi/rl_limiter_state.h).
  uint8_t shift = 0;
  while (rl_sl_ticks(r.window_ns, shift) > rl_sl_max_ticks(r.limit)) shift++;
  r.cost_shift = shift;
  // A tick of lateness moves an entry's expiry by at most 1% of the window.
  if (r.window_ns < 100 * options.coarse_clock_ns) r.flags |= RL_RULE_F_PRECISE_CLOCK;
  return {};
}

// The algorithm's own parameters.
Status algorithm_parameters(const policy::Rule& rule, const CompileOptions& options, rl_rule& r) {
  switch (rule.limit.algorithm) {
    case Algorithm::kTokenBucket:
      return token_bucket(rule, options, r);
    case Algorithm::kFixedWindow:
    case Algorithm::kSlidingWindow:
      return window(rule, options, r);
    case Algorithm::kConnections:
      r.algo = RL_ALGO_CONNECTIONS;
      r.limit = rule.limit.connections;
      return {};
    case Algorithm::kSlidingLog:
      return sliding_log(rule, options, r);
  }
  return {};
}

}  // namespace

uint32_t cluster_share_mask(uint64_t amount, const CompileOptions& options);

Result<rl_rule> compile_limit(const policy::Rule& rule, const CompileOptions& options) {
  if (std::string why = limit_problem(rule); !why.empty()) return rule_error(rule, why);
  rl_rule r = key_action_and_flags(rule);
  if (Status s = algorithm_parameters(rule, options, r); !s) return s.error();
  if (rule.cluster) {
    r.flags |= RL_RULE_F_CLUSTER;
    r.cluster_share_mask = cluster_share_mask(rule.cluster->rate.amount, options);
  }
  return r;
}

Result<rl_rule> compile_stacked_limit(const policy::Rule& rule, size_t i,
                                      const CompileOptions& options) {
  const policy::StackedLimit& l = rule.more.at(i);
  policy::Rule one = rule;
  one.limit = l.limit;
  one.key = l.key;
  one.v4_prefix = l.v4_prefix;
  one.v6_prefix = l.v6_prefix;
  one.cluster.reset();  // fleet-wide counting follows the rule's own limit
  one.more.clear();
  auto r = compile_limit(one, options);
  if (!r) return r.error().wrap("limit '" + l.name + "'");
  r->limit_index = static_cast<uint8_t>(i + 1);
  return r;
}

Result<rl_rule> compile_new_sources(const policy::Rule& rule, const CompileOptions& options) {
  if (!rule.new_sources) return rl_rule{};
  const policy::NewSources& ns = *rule.new_sources;
  policy::Rule budget;
  budget.name = rule.name;
  budget.where = rule.where;
  budget.limit = {Algorithm::kTokenBucket, ns.rate, ns.burst};
  budget.key = ns.key;
  budget.v4_prefix = ns.v4_prefix;
  budget.v6_prefix = ns.v6_prefix;
  budget.report = false;
  auto r = compile_limit(budget, options);
  if (!r) return r.error().wrap("new_sources");
  return r;
}

namespace {

// Why limit `index` of `rule` cannot take an override, or "".
std::string override_problem(const policy::Rule& rule, size_t index, const policy::Rate& rate,
                             uint64_t burst) {
  if (index > rule.more.size())
    return "has " + std::to_string(rule.more.size() + 1) + " limits, not " +
           std::to_string(index + 1);
  const policy::Limit& lim = index ? rule.more[index - 1].limit : rule.limit;
  const policy::KeyKind key = index ? rule.more[index - 1].key : rule.key;
  if (lim.algorithm == Algorithm::kConnections)
    return "counts connections, not a rate: change it in the policy";
  if (index == 0 && rule.cluster)
    return "is the fleet's (a cluster rule), judged in Redis: change it in the policy";
  if (key != policy::KeyKind::kSourceAddress && key != policy::KeyKind::kSourcePrefix &&
      key != policy::KeyKind::kSourceAddressPort && key != policy::KeyKind::kSourceDestination)
    return "keeps no key per source: an override gives the sources of a prefix a limit of "
           "their own, which needs one";
  if (rate.unit != lim.rate.unit)
    return std::string("counts ") + (lim.rate.unit == Unit::kBytes ? "bytes" : "packets") +
           ": give the override's rate in " + (lim.rate.unit == Unit::kBytes ? "bytes" : "packets");
  if (burst && lim.algorithm != Algorithm::kTokenBucket)
    return "is not a token bucket: a burst applies to token buckets only";
  return "";
}

}  // namespace

Result<rl_rule> compile_override(const policy::Rule& rule, size_t index, const policy::Rate& rate,
                                 uint64_t burst, const rl_rule& in_force,
                                 const CompileOptions& options) {
  const std::string which =
      index == 0 ? std::string("its limit") : "its limit '" + rule.more[index - 1].name + "'";
  if (std::string why = override_problem(rule, index, rate, burst); !why.empty())
    return rule_error(rule, (index > rule.more.size() ? std::string("it ") : which + " ") + why);
  policy::Rule one = rule;
  if (index) {
    one.key = rule.more[index - 1].key;
    one.limit = rule.more[index - 1].limit;
  }
  one.limit.rate = rate;
  one.limit.burst = burst;
  one.cluster.reset();
  one.more.clear();
  auto r = compile_limit(one, options);
  if (!r) return r.error().wrap("override of " + which);
  rl_rule out = in_force;
  out.algo = r->algo;
  out.cost_shift = r->cost_shift;
  out.interval_fp = r->interval_fp;
  out.burst_ns = r->burst_ns;
  out.window_ns = r->window_ns;
  out.limit = r->limit;
  out.flags = (in_force.flags & ~RL_RULE_F_PRECISE_CLOCK) | (r->flags & RL_RULE_F_PRECISE_CLOCK);
  return out;
}

// A node's share of a fleet limit is amount / nodes per window; each CPU counts its own part.
// A CPU asks rld for an early sync every quarter of its part (a power of two, so the data path
// tests one mask), which bounds what a node admits beyond its share between two syncs.
uint32_t cluster_share_mask(uint64_t amount, const CompileOptions& options) {
  uint64_t part = amount / std::max<uint32_t>(options.cluster_nodes, 1) /
                  std::max<uint32_t>(options.cpus, 1) / 4;
  uint64_t step = 1;
  while (step * 2 <= part && step < (1u << 30)) step *= 2;
  return static_cast<uint32_t>(step - 1);
}

}  // namespace rl::compiler
