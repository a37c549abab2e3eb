// SPDX-License-Identifier: GPL-2.0-only
#include "options.h"

#include <CLI/CLI.hpp>

namespace rl::rlsend {
namespace {

const lab::SenderLimits kLimits{
    .max_sources = kMaxSources,
    .max_count = 1'000'000'000,
    .max_rate = 100'000'000,
    .max_seconds = 60,
    .sources_help = "Distinct sources, cycled: prefix+1 .. prefix+N (default 1)",
    .rate_help = "Frames per second, 0 = as fast as possible (default 0)",
};

// rlsend's own options as typed (signed, like lab::SenderRaw).
struct Raw {
  std::string src_mac, proto = "udp", fragment;
  int64_t size = 0, vlan = 0;
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

Result<Fragment> parse_fragment(const std::string& s) {
  if (s.empty()) return Fragment::kNone;
  if (s == "first") return Fragment::kFirst;
  if (s == "later") return Fragment::kLater;
  return Error{0, "--fragment must be first or later, not '" + s + "'"};
}

Status validate(const Raw& raw, Options& o) {
  if (!raw.src_mac.empty()) {
    auto src_mac = lab::parse_mac(raw.src_mac);
    if (!src_mac) return src_mac.error().wrap("--src-mac");
    o.src_mac = *src_mac;
  }
  if (o.sources > source_capacity(o.src))
    return Error{0, "--src " + o.src.str() + " holds only " +
                        std::to_string(source_capacity(o.src)) + " source(s), not " +
                        std::to_string(o.sources)};

  auto proto = parse_proto(raw.proto);
  if (!proto) return proto.error();
  o.proto = *proto;
  if (o.syn && o.proto != Proto::kTcp) return Error{0, "--syn needs --proto tcp"};
  auto fragment = parse_fragment(raw.fragment);
  if (!fragment) return fragment.error();
  o.fragment = *fragment;

  if (raw.has_vlan) {
    uint16_t vid = 0;
    if (auto s = lab::in_range("--vlan", raw.vlan, 1, 4094, vid); !s) return s;
    o.vlan = vid;
  }
  if (raw.size != 0 && raw.size < 60)
    return Error{0, "--size must be 0 (smallest) or at least 60, the Ethernet minimum"};
  return lab::in_range("--size", raw.size, 0, 65535, o.size);
}

}  // namespace

Result<Parsed> parse_options(int argc, char** argv) {
  Parsed parsed;
  Options& o = parsed.options;
  lab::SenderRaw common;
  Raw raw;
  CLI::App app{
      "Writes generated Ethernet frames on an interface inside a lab network namespace.\n"
      "Addresses must lie in 198.18.0.0/15 or 2001:db8::/32. Prints one JSON line at the end:\n"
      "{\"sent\":N,\"errors\":N,\"seconds\":X}. Exit: 0 all sent, 1 runtime error or failed "
      "sends,\n"
      "2 invalid or refused arguments, 3 stopped by --max-seconds or a signal before --count.",
      "rlsend"};
  lab::add_sender_options(app, kLimits, common, o);
  app.add_option("--src-mac", raw.src_mac, "Source MAC (default: the interface's)");
  app.add_option("--proto", raw.proto, "udp, tcp or icmp (default udp)");
  app.add_flag("--syn", o.syn, "TCP SYN without ACK (default flags: ACK)");
  app.add_option("--size", raw.size, "Frame bytes without FCS, >= 60 (default: smallest)");
  auto* vlan = app.add_option("--vlan", raw.vlan, "Add an 802.1Q tag with this VLAN id");
  app.add_option("--fragment", raw.fragment,
                 "Send fragments: first (offset 0, with the transport header) or later (offset "
                 "1480, payload only)");

  if (auto s = lab::parse_command_line(app, argc, argv, parsed.help); !s) return s.error();
  if (parsed.help) return parsed;
  raw.has_vlan = vlan->count() > 0;
  if (auto s = lab::validate_sender(common, kLimits, o); !s) return s.error();
  if (auto s = validate(raw, o); !s) return s.error();
  return parsed;
}

}  // namespace rl::rlsend
