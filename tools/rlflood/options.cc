#include "options.h"

#include <net/if.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "rlsend/lab_range.h"

namespace rl::rlflood {
namespace {

using rlsend::in_range;

// As typed. Signed on purpose: CLI11 wraps "-5" into a huge unsigned value.
struct Raw {
  std::string dst_mac, src, dst, proto = "udp", order = "seq";
  int64_t sources = 1, sport = 40000, dport = 9, size = 0, count = 0, rate = 0, batch = 64,
          threads = 2;
};

Status validate(const Raw& raw, Options& o) {
  if (o.iface.empty() || o.iface.size() >= IFNAMSIZ)
    return Error{0, "--iface '" + o.iface + "' is not a valid interface name"};
  auto mac = rlsend::parse_mac(raw.dst_mac);
  if (!mac) return mac.error().wrap("--dst-mac");
  o.dst_mac = *mac;

  if (auto s = rlsend::parse_lab_addresses(raw.src, raw.dst, o.src, o.dst); !s) return s;

  if (auto s = in_range("--sources", raw.sources, 1, kMaxSources, o.sources); !s) return s;
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

  if (raw.proto == "udp")
    o.proto = Proto::kUdp;
  else if (raw.proto == "tcp-syn")
    o.proto = Proto::kTcpSyn;
  else
    return Error{0, "--proto must be udp or tcp-syn, not '" + raw.proto + "'"};
  if (auto s = in_range("--sport", raw.sport, 0, 65535, o.sport); !s) return s;
  if (auto s = in_range("--dport", raw.dport, 0, 65535, o.dport); !s) return s;
  if (raw.size != 0) {
    if (auto s = in_range("--size", raw.size, kMinSize, kMaxSize, o.size); !s) return s;
  }
  if (auto s = in_range("--count", raw.count, 1, kMaxCount, o.count); !s) return s;
  if (auto s = in_range("--rate", raw.rate, 0, kMaxRate, o.rate); !s) return s;
  if (auto s = in_range("--batch", raw.batch, 1, kMaxBatch, o.batch); !s) return s;
  if (auto s = in_range("--threads", raw.threads, 1, kMaxThreads, o.threads); !s) return s;
  if (!(o.max_seconds > 0 && o.max_seconds <= kMaxSeconds))
    return Error{0, "--max-seconds must be in (0, " + std::to_string(int(kMaxSeconds)) + "]"};
  return {};
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
  Raw raw;
  CLI::App app{
      "Floods a lab interface with frames from BPF_PROG_TEST_RUN in live-frames mode: an XDP\n"
      "program gives each copy of one template frame the next source address (and checksums)\n"
      "and transmits it with XDP_TX. Run it inside the sending lab namespace. Addresses must\n"
      "lie in 198.18.0.0/15 or 2001:db8::/32. Prints one JSON line at the end:\n"
      "{\"sent\":N,\"seconds\":X,\"pps\":R,...}. Exit: 0 all sent, 1 runtime error, 2 invalid or\n"
      "refused arguments, 3 stopped by --max-seconds or a signal before --count.",
      "rlflood"};
  app.add_option("--iface", o.iface, "Interface to send on (the sending end of a veth)")
      ->required();
  app.add_option("--dst-mac", raw.dst_mac, "Destination MAC (the receiving interface's)")
      ->required();
  app.add_option("--src", raw.src, "Source address, or a CIDR prefix to draw --sources from")
      ->required();
  app.add_option("--sources", raw.sources, "Distinct sources: prefix+1 .. prefix+N (default 1)");
  app.add_option("--order", raw.order,
                 "seq: sources in turn; random: a pseudo-random order that visits each of the N "
                 "sources once per N frames (default seq)");
  app.add_option("--dst", raw.dst, "Destination address")->required();
  app.add_option("--proto", raw.proto, "udp or tcp-syn (default udp)");
  app.add_option("--dport", raw.dport, "Destination port (default 9)");
  app.add_option("--sport", raw.sport, "Source port (default 40000)");
  app.add_option("--size", raw.size,
                 "Frame bytes without FCS, 64..1500 (default: 64, or the "
                 "headers' size if larger)");
  app.add_option("--count", raw.count, "Frames to send")->required();
  app.add_option("--rate", raw.rate,
                 "Frames per second, paced a millisecond's worth at a time; 0 = as fast as the "
                 "kernel makes them (default 0)");
  app.add_option("--max-seconds", o.max_seconds, "Stop after this long (default 10, max 120)");
  app.add_option("--batch", raw.batch, "Frames per kernel batch, 1..256 (default 64)");
  app.add_option("--threads", raw.threads,
                 "Unpaced: threads calling the kernel in turn, on the CPUs this process may use "
                 "(default 2)");
  app.add_flag("--quiet", o.quiet, "Only the JSON summary and fatal errors");
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success&) {
    parsed.help = app.help();
    return parsed;
  } catch (const CLI::ParseError& e) {
    return Error{0, e.what()};
  }
  if (auto s = validate(raw, o); !s) return s.error();
  return parsed;
}

}  // namespace rl::rlflood
