#include "options.h"

#include <net/if.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "lab_range.h"

namespace rl::rlsend {
namespace {

// Options as typed, before validation. Numbers are signed on purpose: CLI11 wraps "-5" into a
// huge unsigned value, so the range checks below must see the sign.
struct Raw {
  std::string dst_mac, src_mac, src, dst, proto = "udp";
  int64_t sources = 1, sport = 40000, dport = 9, size = 0, vlan = 0, count = 0, rate = 0;
  bool has_vlan = false;
};

Result<Proto> parse_proto(const std::string& s) {
  if (s == "udp") return Proto::kUdp;
  if (s == "tcp") return Proto::kTcp;
  if (s == "icmp") return Proto::kIcmp;
  return Error{0, "--proto must be udp, tcp or icmp, not '" + s + "'"};
}

// How many distinct sources the prefix can supply: the prefix address itself for a full-length
// prefix, otherwise the addresses after it (the all-zero host is skipped).
uint64_t source_capacity(const Prefix& p) {
  size_t host_bits = p.addr.width() - p.len;
  if (host_bits == 0) return 1;
  if (host_bits >= 32) return UINT32_MAX;
  return (uint64_t{1} << host_bits) - 1;
}

Status validate(const Raw& raw, Options& o) {
  if (o.iface.empty() || o.iface.size() >= IFNAMSIZ)
    return Error{0, "--iface '" + o.iface + "' is not a valid interface name"};

  auto dst_mac = parse_mac(raw.dst_mac);
  if (!dst_mac) return dst_mac.error().wrap("--dst-mac");
  o.dst_mac = *dst_mac;
  if (!raw.src_mac.empty()) {
    auto src_mac = parse_mac(raw.src_mac);
    if (!src_mac) return src_mac.error().wrap("--src-mac");
    o.src_mac = *src_mac;
  }

  if (auto s = parse_lab_addresses(raw.src, raw.dst, o.src, o.dst); !s) return s;

  if (auto s = in_range("--sources", raw.sources, 1, kMaxSources, o.sources); !s) return s;
  if (o.sources > source_capacity(o.src))
    return Error{0, "--src " + o.src.str() + " holds only " +
                        std::to_string(source_capacity(o.src)) + " source(s), not " +
                        std::to_string(o.sources)};

  auto proto = parse_proto(raw.proto);
  if (!proto) return proto.error();
  o.proto = *proto;
  if (o.syn && o.proto != Proto::kTcp) return Error{0, "--syn needs --proto tcp"};

  if (auto s = in_range("--sport", raw.sport, 0, 65535, o.sport); !s) return s;
  if (auto s = in_range("--dport", raw.dport, 0, 65535, o.dport); !s) return s;
  if (raw.has_vlan) {
    uint16_t vid = 0;
    if (auto s = in_range("--vlan", raw.vlan, 1, 4094, vid); !s) return s;
    o.vlan = vid;
  }
  if (raw.size != 0 && raw.size < 60)
    return Error{0, "--size must be 0 (smallest) or at least 60, the Ethernet minimum"};
  if (auto s = in_range("--size", raw.size, 0, 65535, o.size); !s) return s;

  if (auto s = in_range("--count", raw.count, 1, kMaxCount, o.count); !s) return s;
  if (auto s = in_range("--rate", raw.rate, 0, kMaxRate, o.rate); !s) return s;
  if (!(o.max_seconds > 0 && o.max_seconds <= kMaxSeconds))
    return Error{0, "--max-seconds must be in (0, " + std::to_string(int(kMaxSeconds)) + "]"};
  return {};
}

}  // namespace

Result<Mac> parse_mac(const std::string& text) {
  Mac m{};
  unsigned v[6];
  char tail;
  if (std::sscanf(text.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4],
                  &v[5], &tail) != 6 ||
      text.size() != 17)
    return Error{0, "'" + text + "' is not a MAC address (aa:bb:cc:dd:ee:ff)"};
  for (int i = 0; i < 6; i++) m[i] = static_cast<uint8_t>(v[i]);
  return m;
}

Result<Parsed> parse_options(int argc, char** argv) {
  Parsed parsed;
  Options& o = parsed.options;
  Raw raw;
  CLI::App app{
      "Writes generated Ethernet frames on an interface inside a lab network namespace.\n"
      "Addresses must lie in 198.18.0.0/15 or 2001:db8::/32. Prints one JSON line at the end:\n"
      "{\"sent\":N,\"errors\":N,\"seconds\":X}. Exit: 0 all sent, 1 runtime error or failed "
      "sends,\n"
      "2 invalid or refused arguments, 3 stopped by --max-seconds or a signal before --count.",
      "rlsend"};
  app.add_option("--iface", o.iface, "Interface to write on")->required();
  app.add_option("--dst-mac", raw.dst_mac, "Destination MAC (the receiving interface's)")
      ->required();
  app.add_option("--src-mac", raw.src_mac, "Source MAC (default: the interface's)");
  app.add_option("--src", raw.src, "Source address, or a CIDR prefix to draw --sources from")
      ->required();
  app.add_option("--sources", raw.sources,
                 "Distinct sources, cycled: prefix+1 .. prefix+N (default 1)");
  app.add_option("--dst", raw.dst, "Destination address")->required();
  app.add_option("--proto", raw.proto, "udp, tcp or icmp (default udp)");
  app.add_option("--dport", raw.dport, "Destination port (default 9)");
  app.add_option("--sport", raw.sport, "Source port (default 40000)");
  app.add_flag("--syn", o.syn, "TCP SYN without ACK (default flags: ACK)");
  app.add_option("--size", raw.size, "Frame bytes without FCS, >= 60 (default: smallest)");
  auto* vlan = app.add_option("--vlan", raw.vlan, "Add an 802.1Q tag with this VLAN id");
  app.add_option("--count", raw.count, "Frames to send")->required();
  app.add_option("--rate", raw.rate, "Frames per second, 0 = as fast as possible (default 0)");
  app.add_option("--max-seconds", o.max_seconds, "Stop after this long (default 10, max 60)");
  app.add_flag("--quiet", o.quiet, "Only the JSON summary and fatal errors");

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success&) {
    parsed.help = app.help();
    return parsed;
  } catch (const CLI::ParseError& e) {
    return Error{0, e.what()};
  }
  raw.has_vlan = vlan->count() > 0;
  if (auto s = validate(raw, o); !s) return s.error();
  return parsed;
}

}  // namespace rl::rlsend
