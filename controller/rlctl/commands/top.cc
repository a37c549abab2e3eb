// SPDX-License-Identifier: GPL-2.0-only
// rlctl top: offenders by drops, or keys by sampled traffic.
#include <iostream>
#include <memory>
#include <sstream>

#include "rlctl/commands/command.h"
#include "rlctl/commands/render.h"
#include "rlctl/table.h"

namespace rlctl {

namespace {

std::string percent(double share) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(1);
  o << share * 100 << "%";
  return o.str();
}

}  // namespace

void render_top_drops(const proto::TopDropsResponse& d, std::ostream& out) {
  Table t({"RULE", "KEY", "DROPPED", "BLOCKED"});
  for (const auto& o : d.offenders) t.row({o.rule, o.key, num(o.drops), o.blocked ? "yes" : "no"});
  t.print(out);
}

void render_top_traffic(const proto::TopTrafficResponse& d, std::ostream& out) {
  // rld states the sampling's bound (an older rld did not: its errors are in +-PPS).
  std::string bound = d.sampling_error.value_or("the sampling's error");
  out << "sampled 1 in " << d.sample_ratio << " packets over the last " << num(d.window_seconds)
      << " s: " << d.samples << " samples, " << d.samples_shed << " shed; error per key: +-("
      << bound << " + up to " << d.table_error_samples << " from the table) samples, times "
      << d.sample_ratio << "\n";
  Table t({"RULE", "KEY", "EST. PPS", "+-PPS", "EST. BYTES/S", "SHARE", "DROPPED"});
  for (const auto& k : d.keys)
    t.row({k.rule, k.key, num(k.pps), num(k.pps_error), num(k.bytes_per_second), percent(k.share),
           percent(k.dropped_share)});
  t.print(out);
}

namespace {

void do_top(const Globals& g, const proto::TopRequest& req) {
  Json d = call_or_exit<proto::Top>(g, req);
  if (json_out(g, d)) return;
  if (req.by == proto::kByTraffic)
    render_top_traffic(d.get<proto::TopTrafficResponse>(), std::cout);
  else
    render_top_drops(d.get<proto::TopDropsResponse>(), std::cout);
}

}  // namespace

void bind_top(CLI::App& cmd, Context& ctx) {
  auto req = std::make_shared<proto::TopRequest>();
  cmd.add_option("--rule", req->rule, "only this rule");
  cmd.add_option("-n", req->n, "how many")->capture_default_str();
  cmd.add_option("--by", req->by,
                 "drops: over-limit packets per key; traffic: estimated packets and bytes per "
                 "second per key over the last 10 to 20 s, from the packets rld's "
                 "traffic_sample_shift samples (refused while it is 0)")
      ->check(CLI::IsMember({proto::kByDrops, proto::kByTraffic}))
      ->capture_default_str();
  cmd.callback([&g = ctx.globals, req] { do_top(g, *req); });
}

}  // namespace rlctl
