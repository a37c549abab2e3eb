// SPDX-License-Identifier: GPL-2.0-only
// rlflood: a live-frames flood for the lab. The kernel makes and transmits the frames itself
// (BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES, as xdp-trafficgen does), so one CPU offers
// millions of frames per second, more than a receiving CPU can take. Where the kernel refuses
// live frames, the same frames go out of a packet ring (ring_run.h). Like rlsend it refuses
// addresses outside the lab ranges and the host's own namespace, and always stops by itself.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <optional>

#include "flood_plan.h"
#include "lab/tool.h"
#include "live_run.h"
#include "options.h"
#include "ring_run.h"
#include "rlflood.skel.h"

namespace {

struct SkelCloser {
  void operator()(rlflood* s) const { rlflood__destroy(s); }
};

// Paced: bursts of at most --burst frames (fewer when a millisecond holds fewer), one every
// interval, so that the average is the rate.
struct Pace {
  uint32_t burst = 0;
  uint64_t interval_ns = 0;
};

Pace pace_for(const rl::rlflood::Options& o) {
  if (!o.rate) return {};
  uint32_t burst = std::max<uint32_t>(1, std::min<uint64_t>(o.burst, o.rate / 1000));
  return {burst, std::max<uint64_t>(1, burst * 1'000'000'000ull / o.rate)};
}

// The errors with which a kernel refuses live frames (not built in, not permitted, or a kernel
// older than the flag) before any frame has gone out.
bool live_refused(const rl::Error& e) {
  return e.err == EPERM || e.err == EOPNOTSUPP || e.err == 524 /* ENOTSUPP */ || e.err == EINVAL;
}

rl::Result<rl::rlflood::RunSummary> flood_live(const rl::rlflood::Options& o,
                                               const rl::rlflood::FloodPlan& plan, int ifindex,
                                               const std::atomic<bool>& stop, bool* refused) {
  using namespace rl::rlflood;
  std::unique_ptr<rlflood, SkelCloser> skel(rlflood__open());
  if (!skel) return rl::errno_error("open the XDP program");
  auto* ro = skel->rodata;
  ro->spec = plan.spec;
  Pace pace = pace_for(o);
  if (pace.interval_ns) {
    ro->pace_burst = pace.burst;
    ro->pace_interval_ns = pace.interval_ns;
    ro->max_frames = o.count;
  }
  if (int err = rlflood__load(skel.get()); err != 0)
    return rl::errno_error("load the XDP program", err);

  RunPlan run{bpf_program__fd(skel->progs.rlflood),
              ifindex,
              o.count,
              o.rate,
              o.max_seconds,
              o.batch,
              o.threads,
              o.burst,
              &skel->bss->stub_runs,
              &skel->bss->frames};
  auto summary = run_live(plan.frame, run, skel->bss->frames, stop);
  if (!summary) {
    *refused = skel->bss->frames == 0 && live_refused(summary.error());
    return summary;
  }
  if (pace.interval_ns) {
    summary->late_bursts = skel->bss->late_bursts;
    summary->skipped =
        static_cast<uint64_t>(static_cast<double>(skel->bss->skipped_ns) * 1e-9 * o.rate);
  }
  return summary;
}

rl::Result<rl::rlflood::RunSummary> flood_packet(const rl::rlflood::Options& o,
                                                 const rl::rlflood::FloodPlan& plan, int ifindex,
                                                 const std::atomic<bool>& stop) {
  Pace pace = pace_for(o);
  return rl::rlflood::run_ring(plan,
                               {.ifindex = ifindex,
                                .count = o.count,
                                .max_seconds = o.max_seconds,
                                .interval_ns = pace.interval_ns,
                                .burst = pace.burst ? pace.burst : o.burst,
                                .batch = o.batch},
                               stop);
}

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

  const auto& stop = Tool::stop_on_signals();
  if (!o.quiet)
    std::fprintf(stderr, "rlflood: %llu frame(s) of %zu bytes on %s from %u source(s) in %s\n",
                 static_cast<unsigned long long>(o.count), plan->frame.size(), o.iface.c_str(),
                 o.sources, o.src.str().c_str());

  const char* engine = "live";
  std::optional<rl::Result<RunSummary>> summary;
  if (o.engine != Engine::kPacket) {
    bool refused = false;
    summary = flood_live(o, *plan, iface->index, stop, &refused);
    if (!*summary && refused && o.engine == Engine::kAuto) {
      if (!o.quiet)
        std::fprintf(stderr, "rlflood: %s; sending from a packet ring instead\n",
                     summary->error().str().c_str());
      summary.reset();
    }
  }
  if (!summary) {
    engine = "packet";
    summary = flood_packet(o, *plan, iface->index, stop);
  }
  if (!*summary) return tool.fail(kExitRuntime, summary->error());
  const RunSummary& s = **summary;

  std::printf(
      "{\"sent\":%llu,\"seconds\":%.6f,\"pps\":%.0f,\"sources\":%u,\"frame_bytes\":%zu,"
      "\"cpu\":%d,\"late_bursts\":%llu,\"skipped\":%llu,\"engine\":\"%s\"}\n",
      static_cast<unsigned long long>(s.sent), s.seconds,
      s.seconds > 0 ? static_cast<double>(s.sent) / s.seconds : 0.0, plan->spec.n_sources,
      plan->frame.size(), s.cpu, static_cast<unsigned long long>(s.late_bursts),
      static_cast<unsigned long long>(s.skipped), engine);
  std::fflush(stdout);
  return s.sent < o.count ? kExitIncomplete : kExitOk;
}
