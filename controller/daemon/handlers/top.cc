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
                 const control::TopRequest& req) {
  if (!traffic)
    return control::fail(
        "traffic sampling is off: set traffic_sample_shift in rld's configuration "
        "(--traffic-sample-shift; 10 samples 1 in 1,024 packets) and restart rld");
  // What waits in the ring first (it holds 6,553 samples, under 7 batches): the answer
  // includes it.
  for (int i = 0; i < 8 && traffic->poll(); i++) {
  }
  const std::string& rule = req.rule;
  std::unordered_map<uint32_t, RuleRef> refs;  // rule ids seen in this query
  auto ref = [&](uint32_t id) -> const RuleRef& {
    auto it = refs.find(id);
    if (it == refs.end()) it = refs.emplace(id, resolve(id)).first;
    return it->second;
  };
  TrafficView view =
      traffic->top(req.n, [&](uint32_t id) { return rule.empty() || ref(id).name == rule; });
  const double scale = static_cast<double>(1ULL << traffic->shift());
  const double secs = std::max(view.seconds, 1e-3);
  control::TopTrafficResponse out;
  out.sample_shift = traffic->shift();
  out.sample_ratio = 1ULL << traffic->shift();
  out.window_seconds = secs;
  out.samples = view.samples;
  out.sampling_error = kSamplingErrorText;
  out.sampled_bytes = view.sampled_bytes;
  if (auto g = counters.global_counters()) out.samples_shed = (*g)[RL_GC_TRAFFIC_SHED].pkts;
  out.capacity = TrafficLog::kCapacity;
  out.table_error_samples = view.table_error;
  for (const auto& e : view.keys) {
    const RuleRef& r = ref(e.key.rule_id);
    double n = static_cast<double>(e.samples);
    double err = static_cast<double>(e.error) + sampling_error(n);
    out.keys.push_back(
        {r.name,
         key_text(e.key.kind, e.key.family, e.key.addr, e.key.dport, r.v4_prefix, r.v6_prefix),
         n * scale / secs, err * scale / secs, e.sampled_bytes * scale / secs,
         view.samples ? n / static_cast<double>(view.samples) : 0.0, n > 0 ? e.dropped / n : 0.0,
         n * scale, err * scale, e.samples, e.error});
  }
  return control::ok(out);
}

}  // namespace

Json top(OffenderLog& offenders, TrafficLog* traffic, const RuleResolver& resolve,
         const Counters& counters, const Json& args) {
  auto req = args.get<control::TopRequest>();
  if (req.by == control::kByTraffic) return top_traffic(traffic, resolve, counters, req);
  if (req.by != control::kByDrops)
    return control::fail("top ranks by drops or traffic, not '" + req.by + "'");
  auto list =
      offenders.top(req.n, req.rule, std::chrono::seconds(req.window_seconds.value_or(300)));
  control::TopDropsResponse out;
  for (const auto& o : list)
    out.offenders.push_back(
        {o.rule, o.key, o.drops, o.blocked,
         std::chrono::duration_cast<std::chrono::seconds>(o.last_seen.time_since_epoch()).count()});
  return control::ok(out);
}

}  // namespace rl::daemon::handlers
