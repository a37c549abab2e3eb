// rlsend: a bounded AF_PACKET frame generator for the lab. It refuses addresses outside the lab
// ranges and the host's own network namespace, and always stops by itself.
#include <signal.h>

#include <atomic>
#include <cstdio>

#include "frames.h"
#include "iface.h"
#include "options.h"
#include "sender.h"

namespace {

constexpr int kExitOk = 0, kExitRuntime = 1, kExitIncomplete = 3;

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop.store(true); }

int fail(int code, const rl::Error& e) {
  std::fprintf(stderr, "rlsend: %s\n", e.str().c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rl::rlsend;
  auto parsed = parse_options(argc, argv);
  if (!parsed) return fail(kExitUsage, parsed.error());
  if (parsed->help) {
    std::fputs(parsed->help->c_str(), stdout);
    return kExitOk;
  }
  const Options& o = parsed->options;

  if (auto s = require_lab_namespace(); !s) return fail(kExitUsage, s.error());
  auto iface = lookup_iface(o.iface);
  if (!iface) return fail(kExitRuntime, iface.error());
  auto frames = build_frames(o, o.src_mac.value_or(iface->mac), iface->mtu);
  if (!frames) return fail(kExitUsage, frames.error());

  // A signal ends the loop early but still prints the summary of what went out.
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  if (!o.quiet)
    std::fprintf(stderr, "rlsend: %llu frame(s) of %zu bytes on %s from %u source(s) in %s\n",
                 static_cast<unsigned long long>(o.count), frames->front().size(), o.iface.c_str(),
                 o.sources, o.src.str().c_str());
  SendPlan plan{iface->index, o.dst_mac, o.count, o.rate, o.max_seconds};
  auto summary = send_frames(*frames, plan, g_stop);
  if (!summary) return fail(kExitRuntime, summary.error());

  std::printf("%s\n", summary->json().c_str());
  std::fflush(stdout);
  if (summary->errors) {
    if (!o.quiet)
      std::fprintf(stderr, "rlsend: %llu send(s) failed, first: %s\n",
                   static_cast<unsigned long long>(summary->errors), summary->first_error.c_str());
    return kExitRuntime;
  }
  return summary->sent + summary->errors < o.count ? kExitIncomplete : kExitOk;
}
