// SPDX-License-Identifier: GPL-2.0-only
// rlflood: a live-frames flood for the lab. The kernel makes and transmits the frames itself
// (BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES, as xdp-trafficgen does), so one CPU offers
// millions of frames per second, more than a receiving CPU can take. Like rlsend it refuses
// addresses outside the lab ranges and the host's own namespace, and always stops by itself.
#include <algorithm>
#include <cstdio>
#include <memory>

#include "flood_plan.h"
#include "lab/tool.h"
#include "live_run.h"
#include "options.h"
#include "rlflood.skel.h"

namespace {

struct SkelCloser {
  void operator()(rlflood* s) const { rlflood__destroy(s); }
};

}  // namespace

int main(int argc, char** argv) {
  using namespace rl::rlflood;
  using namespace rl::lab;
  const Tool tool("rlflood");
  auto parsed = parse_options(argc, argv);
  if (!parsed) return tool.fail(kExitUsage, parsed.error());
  if (parsed->help) {
    std::fputs(parsed->help->c_str(), stdout);
    return kExitOk;
  }
  const Options& o = parsed->options;

  int code = kExitOk;
  auto iface = tool.lab_iface(o.iface, &code);
  if (!iface) return code;
  auto plan = plan_flood(o, iface->mac, iface->mtu);
  if (!plan) return tool.fail(kExitUsage, plan.error());

  std::unique_ptr<rlflood, SkelCloser> skel(rlflood__open());
  if (!skel) return tool.fail(kExitRuntime, rl::errno_error("open the XDP program"));
  auto* ro = skel->rodata;
  ro->n_sources = plan->sources;
  ro->base_low = plan->base_low;
  ro->is_v6 = plan->v6;
  ro->is_tcp = plan->tcp;
  ro->shuffle = plan->shuffle;
  ro->perm_bits = plan->perm_bits;
  ro->perm_seed = plan->perm_seed;
  ro->ip_csum_base = plan->ip_csum_base;
  ro->l4_csum_base = plan->l4_csum_base;
  ro->base_sport = plan->base_sport;
  ro->n_sports = plan->sports;
  if (o.rate) {
    uint32_t burst = std::max<uint32_t>(1, std::min<uint64_t>(o.burst, o.rate / 1000));
    ro->pace_burst = burst;
    ro->pace_interval_ns = std::max<uint64_t>(1, burst * 1'000'000'000ull / o.rate);
    ro->max_frames = o.count;
  }
  if (int err = rlflood__load(skel.get()); err != 0)
    return tool.fail(kExitRuntime, rl::errno_error("load the XDP program", err));

  const auto& stop = Tool::stop_on_signals();

  if (!o.quiet)
    std::fprintf(stderr, "rlflood: %llu frame(s) of %zu bytes on %s from %u source(s) in %s\n",
                 static_cast<unsigned long long>(o.count), plan->frame.size(), o.iface.c_str(),
                 o.sources, o.src.str().c_str());
  RunPlan run{bpf_program__fd(skel->progs.rlflood),
              iface->index,
              o.count,
              o.rate,
              o.max_seconds,
              o.batch,
              o.threads,
              o.burst,
              &skel->bss->stub_runs,
              &skel->bss->frames};
  auto summary = run_live(plan->frame, run, skel->bss->frames, stop);
  if (!summary) return tool.fail(kExitRuntime, summary.error());
  if (o.rate) {
    summary->late_bursts = skel->bss->late_bursts;
    summary->skipped =
        static_cast<uint64_t>(static_cast<double>(skel->bss->skipped_ns) * 1e-9 * o.rate);
  }

  std::printf(
      "{\"sent\":%llu,\"seconds\":%.6f,\"pps\":%.0f,\"sources\":%u,\"frame_bytes\":%zu,"
      "\"cpu\":%d,\"late_bursts\":%llu,\"skipped\":%llu}\n",
      static_cast<unsigned long long>(summary->sent), summary->seconds,
      summary->seconds > 0 ? static_cast<double>(summary->sent) / summary->seconds : 0.0,
      plan->sources, plan->frame.size(), summary->cpu,
      static_cast<unsigned long long>(summary->late_bursts),
      static_cast<unsigned long long>(summary->skipped));
  std::fflush(stdout);
  return summary->sent < o.count ? kExitIncomplete : kExitOk;
}
