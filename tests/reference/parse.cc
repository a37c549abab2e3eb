// SPDX-License-Identifier: GPL-2.0-only
#include "model.h"

#include <algorithm>

namespace rl::reference {
namespace {

uint16_t be16(const std::vector<uint8_t>& f, size_t at) { return (f[at] << 8) | f[at + 1]; }

bool is_vlan(uint16_t type) { return type == 0x8100 || type == 0x88a8; }
bool is_ext(uint8_t h) { return h == 0 || h == 43 || h == 44 || h == 60 || h == 51; }

// The transport after the IP header(s), or false if its header is cut short.
bool transport(const std::vector<uint8_t>& f, size_t off, Packet& p) {
  switch (p.proto) {
    case 6:
      if (f.size() < off + 20 || (f[off + 12] >> 4) < 5) return false;
      p.has_l4 = true;
      p.port_kind = RL_PORT_KIND_TCP;
      p.l4_index = be16(f, off + 2);
      p.sport = be16(f, off);
      p.tcp_new = (f[off + 13] & 0x02) && !(f[off + 13] & 0x10);
      p.tcp_flags = f[off + 13];
      return true;
    case 17:
      if (f.size() < off + 8) return false;
      p.has_l4 = true;
      p.port_kind = RL_PORT_KIND_UDP;
      p.l4_index = be16(f, off + 2);
      p.sport = be16(f, off);
      return true;
    case 1:
    case 58:
      if (f.size() < off + 4) return false;
      p.has_l4 = true;
      p.port_kind = p.proto == 1 ? RL_PORT_KIND_ICMP : RL_PORT_KIND_ICMPV6;
      p.l4_index = f[off];
      p.icmp_code = f[off + 1];
      return true;
  }
  return true;
}

// IPv6 extension headers from `off`: the offset of the transport, or 0 when the chain is longer
// than the walk or cut short (the transport is then unknown).
size_t ipv6_chain(const std::vector<uint8_t>& f, size_t off, uint8_t nh, Packet& p) {
  for (int i = 0; i < RL_IPV6_MAX_EXT_HDRS && is_ext(nh); i++) {
    if (nh == 44) {
      if (f.size() < off + 8) return 0;
      nh = f[off];
      off += 8;
      if (be16(f, off - 6) & 0xfff8) {
        // A later fragment: what follows is payload, and the protocol is the declared one.
        p.fragment = true;
        p.proto = nh;
        p.proto_known = !is_ext(nh);
        return off;
      }
      if (be16(f, off - 6) & 1) p.first_fragment = true;
      continue;
    }
    if (f.size() < off + 2) return 0;
    size_t len = nh == 51 ? (f[off + 1] + 2u) * 4 : (f[off + 1] + 1u) * 8;
    if (f.size() < off + len) return 0;
    nh = f[off];
    off += len;
  }
  if (is_ext(nh)) return 0;
  p.proto = nh;
  return off;
}

}  // namespace

Packet parse(const std::vector<uint8_t>& f) {
  Packet p;
  size_t off = 14;
  if (f.size() < off) return p;
  uint16_t type = be16(f, 12);
  for (int tags = 0; tags < RL_VLAN_MAX_TAGS && is_vlan(type); tags++) {
    if (f.size() < off + 4) return p;
    type = be16(f, off + 2);
    off += 4;
  }
  if (is_vlan(type)) return p;  // deeper than the walk: what it carries is unknown
  if (type != 0x0800 && type != 0x86dd) {
    p.kind = Packet::kNonIp;
    return p;
  }

  // From here on the source is known once the IP header is whole; anything wrong after that
  // leaves the packet judged on its addresses.
  if (type == 0x0800) {
    if (f.size() < off + 20) return p;
    unsigned version = f[off] >> 4, ihl = f[off] & 0xf;
    if (version != 4 || ihl < 5) return p;
    if (be16(f, off + 2) < ihl * 4) return p;
    if (f.size() < off + size_t{4} * ihl) return p;
    p.kind = Packet::kIp;
    p.src.family = 4;
    std::copy(&f[off + 12], &f[off + 16], p.src.bytes.begin());
    p.dst.family = 4;
    std::copy(&f[off + 16], &f[off + 20], p.dst.bytes.begin());
    p.proto = f[off + 9];
    p.ttl = f[off + 8];
    p.l3_len = be16(f, off + 2);
    p.fragment = (be16(f, off + 6) & 0x1fff) != 0;
    p.first_fragment = !p.fragment && (be16(f, off + 6) & 0x2000);
    off += size_t{4} * ihl;
  } else {
    if (f.size() < off + 40) return p;
    if ((f[off] >> 4) != 6) return p;
    p.kind = Packet::kIp;
    p.src.family = 6;
    std::copy(&f[off + 8], &f[off + 24], p.src.bytes.begin());
    p.dst.family = 6;
    std::copy(&f[off + 24], &f[off + 40], p.dst.bytes.begin());
    p.ttl = f[off + 7];
    p.l3_len = static_cast<uint16_t>(std::min(be16(f, off + 4) + 40, 65535));
    off = ipv6_chain(f, off + 40, f[off + 6], p);
    if (!off) {
      p.no_l4 = true;
      p.proto_known = false;
      return p;
    }
  }

  if (!p.fragment && !transport(f, off, p)) p.no_l4 = true;
  return p;
}

}  // namespace rl::reference
