// SPDX-License-Identifier: GPL-2.0-only
#include <cmath>
#include <unordered_map>

#include "common/key_text.h"
#include "daemon/handlers/handlers.h"

namespace rl::daemon::handlers {

RuleRef rule_ref(const std::vector<RuleView>& rules, uint32_t id) {
  // A rule's stacked limits carry the ids after its own (compiler.cc).
  for (const auto& v : rules)
    if (id >= v.compiled.id && id <= v.compiled.id + v.compiled.more_limits) {
      if (id == v.compiled.id) return RuleRef{v.name, v.compiled.v4_prefix, v.compiled.v6_prefix};
      uint32_t l = id - v.compiled.id;
      if (l > v.rule.more.size()) return RuleRef{v.name, 32, 128};
      return RuleRef{v.name, v.rule.more[l - 1].v4_prefix, v.rule.more[l - 1].v6_prefix};
    }
  return RuleRef{};
}

namespace {

// Estimates from the sampled packets (traffic.h). Each key's error is its tables' share
// (Space-Saving: what it may have inherited, or missed while it was not in a table) plus four
// standard deviations of the sampling. A key's samples are binomial with a small chance, so
// nearly Poisson: for n seen, the mean lies within n + 8 +- 4 sqrt(n + 4) at four standard
// deviations (the score interval), so the symmetric bound 8 + 4 sqrt(n + 4) holds at every n.
// 4 sqrt(n) alone would be too tight for a key with few samples: at 30 expected samples 1 key
// in 1,300 would land further off, not 1 in 15,000.
double sampling_error(double n) { return 8 + 4 * std::sqrt(n + 4); }
// The bound as rlctl prints it: the reply carries it, so that it is stated in one place.
constexpr const char* kSamplingErrorText = "8 + 4*sqrt(samples + 4)";

Json top_traffic(TrafficLog* traffic, const RuleResolver& resolve, const Counters& counters,
                 const Json& args) {
  if (!traffic)
    return control::fail(
        "traffic sampling is off: set traffic_sample_shift in rld's configuration "
        "(--traffic-sample-shift; 10 samples 1 in 1,024 packets) and restart rld");
  // What waits in the ring first (it holds 6,553 samples, under 7 batches): the answer
  // includes it.
  for (int i = 0; i < 8 && traffic->poll(); i++) {
  }
  std::string rule = args.value("rule", "");
  std::unordered_map<uint32_t, RuleRef> refs;  // rule ids seen in this query
  auto ref = [&](uint32_t id) -> const RuleRef& {
    auto it = refs.find(id);
    if (it == refs.end()) it = refs.emplace(id, resolve(id)).first;
    return it->second;
  };
  TrafficView view = traffic->top(
      args.value("n", 10), [&](uint32_t id) { return rule.empty() || ref(id).name == rule; });
  const double scale = static_cast<double>(1ULL << traffic->shift());
  const double secs = std::max(view.seconds, 1e-3);
  uint64_t shed = 0;
  if (auto g = counters.global_counters()) shed = (*g)[RL_GC_TRAFFIC_SHED].pkts;
  Json keys = Json::array();
  for (const auto& e : view.keys) {
    const RuleRef& r = ref(e.key.rule_id);
    double n = static_cast<double>(e.samples);
    double err = static_cast<double>(e.error) + sampling_error(n);
    keys.push_back({{"rule", r.name},
                    {"key", key_text(e.key.kind, e.key.family, e.key.addr, e.key.dport, r.v4_prefix,
                                     r.v6_prefix)},
                    {"pps", n * scale / secs},
                    {"pps_error", err * scale / secs},
                    {"bytes_per_second", e.sampled_bytes * scale / secs},
                    {"share", view.samples ? n / static_cast<double>(view.samples) : 0.0},
                    {"dropped_share", n > 0 ? e.dropped / n : 0.0},
                    {"packets", n * scale},
                    {"packets_error", err * scale},
                    {"samples", e.samples},
                    {"table_error_samples", e.error}});
  }
  return control::ok({{"by", "traffic"},
                      {"sample_shift", traffic->shift()},
                      {"sample_ratio", 1ULL << traffic->shift()},
                      {"window_seconds", secs},
                      {"samples", view.samples},
                      {"sampling_error", kSamplingErrorText},
                      {"sampled_bytes", view.sampled_bytes},
                      {"samples_shed", shed},
                      {"capacity", TrafficLog::kCapacity},
                      {"table_error_samples", view.table_error},
                      {"keys", keys}});
}

}  // namespace

Json top(OffenderLog& offenders, TrafficLog* traffic, const RuleResolver& resolve,
         const Counters& counters, const Json& args) {
  std::string by = args.value("by", "drops");
  if (by == "traffic") return top_traffic(traffic, resolve, counters, args);
  if (by != "drops") return control::fail("top ranks by drops or traffic, not '" + by + "'");
  auto list = offenders.top(args.value("n", 10), args.value("rule", ""),
                            std::chrono::seconds(args.value("window_seconds", 300)));
  Json out = Json::array();
  for (const auto& o : list)
    out.push_back({{"rule", o.rule},
                   {"key", o.key},
                   {"drops", o.drops},
                   {"blocked", o.blocked},
                   {"last_seen",
                    std::chrono::duration_cast<std::chrono::seconds>(o.last_seen.time_since_epoch())
                        .count()}});
  return control::ok({{"offenders", out}});
}

}  // namespace rl::daemon::handlers
