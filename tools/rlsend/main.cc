// SPDX-License-Identifier: GPL-2.0-only
// rlsend: a bounded AF_PACKET frame generator for the lab. It refuses addresses outside the lab
// ranges and the host's own network namespace, and always stops by itself.
#include <cstdio>

#include "frames.h"
#include "lab/tool.h"
#include "options.h"
#include "sender.h"

int main(int argc, char** argv) {
  using namespace rl::rlsend;
  using namespace rl::lab;
  const Tool tool("rlsend");
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
  auto frames = build_frames(o, o.src_mac.value_or(iface->mac), iface->mtu);
  if (!frames) return tool.fail(kExitUsage, frames.error());
  const auto& stop = Tool::stop_on_signals();

  if (!o.quiet)
    std::fprintf(stderr, "rlsend: %llu frame(s) of %zu bytes on %s from %u source(s) in %s\n",
                 static_cast<unsigned long long>(o.count), frames->front().size(), o.iface.c_str(),
                 o.sources, o.src.str().c_str());
  SendPlan plan{iface->index, o.dst_mac, o.count, o.rate, o.max_seconds};
  auto summary = send_frames(*frames, plan, stop);
  if (!summary) return tool.fail(kExitRuntime, summary.error());

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
