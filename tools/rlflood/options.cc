// SPDX-License-Identifier: GPL-2.0-only
#include "options.h"

#include <CLI/CLI.hpp>
#include <algorithm>

namespace rl::rlflood {
namespace {

using lab::in_range;

const lab::SenderLimits kLimits{
    .max_sources = kMaxSources,
    .max_count = 10'000'000'000,
    .max_rate = 100'000'000,
    .max_seconds = 120,
    .sources_help = "Distinct sources: prefix+1 .. prefix+N (default 1)",
    .rate_help =
        "Frames per second, paced in bursts of --burst frames (fewer when a millisecond holds "
        "fewer), each at its due time, so the average is exact; 0 = as fast as the kernel "
        "makes them (default 0)",
};

// rlflood's own options as typed (signed, like lab::SenderRaw).
struct Raw {
  std::string proto = "udp", order = "seq", engine = "auto";
  int64_t size = 0, batch = 64, threads = 2, burst = 64, sports = 1;
};

Status validate(const Raw& raw, Options& o) {
  if (o.sources > source_capacity(o.src))
    return Error{
        0, "--src " + o.src.str() + " holds only " + std::to_string(source_capacity(o.src)) +
               " source(s) that differ in their last 32 bits, not " + std::to_string(o.sources)};
  if (raw.order == "seq")
    o.order = Order::kSequential;
  else if (raw.order == "random")
    o.order = Order::kShuffled;
  else
    return Error{0, "--order must be seq or random, not '" + raw.order + "'"};

  if (raw.engine == "auto")
    o.engine = Engine::kAuto;
  else if (raw.engine == "live")
    o.engine = Engine::kLive;
  else if (raw.engine == "packet")
    o.engine = Engine::kPacket;
  else
    return Error{0, "--engine must be auto, live or packet, not '" + raw.engine + "'"};

  if (raw.proto == "udp")
    o.proto = Proto::kUdp;
  else if (raw.proto == "tcp-syn")
    o.proto = Proto::kTcpSyn;
  else
    return Error{0, "--proto must be udp or tcp-syn, not '" + raw.proto + "'"};
  if (raw.size != 0) {
    if (auto s = in_range("--size", raw.size, kMinSize, kMaxSize, o.size); !s) return s;
  }
  if (auto s = in_range("--sports", raw.sports, 1, 65536 - int64_t{o.sport}, o.sports); !s)
    return Error{
        0, s.error().message + " (ports from --sport " + std::to_string(o.sport) + " up to 65535)"};
  if (auto s = in_range("--batch", raw.batch, 1, kMaxBatch, o.batch); !s) return s;
  if (auto s = in_range("--burst", raw.burst, 1, kMaxBurst, o.burst); !s) return s;
  return in_range("--threads", raw.threads, 1, kMaxThreads, o.threads);
}

}  // namespace

uint64_t source_capacity(const Prefix& src) {
  size_t host_bits = src.addr.width() - src.len;
  if (host_bits == 0) return 1;
  // Host addresses after the prefix address, as far as the last 32 bits count without a carry.
  uint64_t hosts = host_bits >= 32 ? UINT32_MAX : (uint64_t{1} << host_bits) - 1;
  const auto& b = src.addr.bytes;
  size_t last = src.addr.width() / 8 - 4;
  uint64_t low = (uint64_t{b[last]} << 24) | (b[last + 1] << 16) | (b[last + 2] << 8) | b[last + 3];
  return std::min(hosts, uint64_t{UINT32_MAX} - low);
}

Result<Parsed> parse_options(int argc, char** argv) {
  Parsed parsed;
  Options& o = parsed.options;
  lab::SenderRaw common;
  Raw raw;
  CLI::App app{
      "Floods a lab interface with frames from BPF_PROG_TEST_RUN in live-frames mode: an XDP\n"
      "program gives each copy of one template frame the next source address (and checksums)\n"
      "and transmits it with XDP_TX. Run it inside the sending lab namespace. Addresses must\n"
      "lie in 198.18.0.0/15 or 2001:db8::/32. Prints one JSON line at the end:\n"
      "{\"sent\":N,\"seconds\":X,\"pps\":R,...}. Exit: 0 all sent, 1 runtime error, 2 invalid or\n"
      "refused arguments, 3 stopped by --max-seconds or a signal before --count.\n"
      "Where the kernel refuses live frames, the same frames go out of an AF_PACKET transmit\n"
      "ring instead (--engine), at a higher cost per frame to the sending CPU.",
      "rlflood"};
  lab::add_sender_options(app, kLimits, common, o);
  app.add_option("--order", raw.order,
                 "seq: sources in turn; random: a pseudo-random order that visits each of the N "
                 "sources once per N frames (default seq)");
  app.add_option("--proto", raw.proto, "udp or tcp-syn (default udp)");
  app.add_option("--size", raw.size,
                 "Frame bytes without FCS, 64..1500 (default: 64, or the "
                 "headers' size if larger)");
  app.add_option("--sports", raw.sports,
                 "Distinct source ports: --sport .. --sport+N-1, frame k taking --sport + k mod "
                 "N (default 1)");
  app.add_option("--engine", raw.engine,
                 "live: live frames only; packet: the AF_PACKET ring only; auto: live frames, "
                 "or the ring where the kernel refuses them (default auto). The summary names "
                 "the one used");
  app.add_option("--batch", raw.batch,
                 "Frames per kernel batch (live) or per send (packet, unpaced), 1..256 "
                 "(default 64)");
  app.add_option("--burst", raw.burst,
                 "Paced: frames sent back to back at most, 1..4096 (default 64, a quarter of a "
                 "veth's ring)");
  app.add_option("--threads", raw.threads,
                 "Unpaced live frames: threads calling the kernel in turn, on the CPUs this "
                 "process may use (default 2; the packet ring sends from one)");

  if (auto s = lab::parse_command_line(app, argc, argv, parsed.help); !s) return s.error();
  if (parsed.help) return parsed;
  if (auto s = lab::validate_sender(common, kLimits, o); !s) return s.error();
  if (auto s = validate(raw, o); !s) return s.error();
  return parsed;
}

}  // namespace rl::rlflood
