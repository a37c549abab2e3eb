// SPDX-License-Identifier: GPL-2.0-only
#include "frames.h"

#include "packet.h"

namespace rl::rlsend {
namespace {

constexpr size_t kEth = 14, kVlan = 4, kMaxFrameBytes = 128u << 20;

// A later fragment's offset, in 8-byte units: where a 1500-byte MTU's first fragment ends.
constexpr uint16_t kLaterOffset8 = 185;

size_t header_bytes(const Options& o) {
  size_t n = kEth + (o.vlan ? kVlan : 0) + (o.dst.family == 4 ? 20 : 40);
  if (o.fragment != Fragment::kNone && o.dst.family == 6) n += 8;  // the fragment header
  if (o.fragment == Fragment::kLater) return n;                    // payload only
  return n + (o.proto == Proto::kTcp ? 20 : 8);  // UDP and ICMP echo headers are 8 bytes
}

}  // namespace

Address nth_source(const Prefix& p, uint32_t i) {
  Address a = p.addr;
  if (p.len == a.width()) return a;
  // Big-endian add of i + 1 into the address bytes; validation keeps it inside the prefix.
  uint64_t carry = uint64_t{i} + 1;
  for (int b = static_cast<int>(a.width() / 8) - 1; b >= 0 && carry; b--) {
    uint64_t v = a.bytes[b] + (carry & 0xff);
    a.bytes[b] = static_cast<uint8_t>(v);
    carry = (carry >> 8) + (v >> 8);
  }
  return a;
}

Result<std::vector<Frame>> build_frames(const Options& o, const Mac& src_mac, int mtu) {
  size_t headers = header_bytes(o);
  size_t size = o.size == 0 ? std::max<size_t>(headers, 60) : o.size;
  if (size < headers)
    return Error{0, "--size " + std::to_string(o.size) + " cannot hold the headers (" +
                        std::to_string(headers) + " bytes)"};
  size_t l3 = size - kEth - (o.vlan ? kVlan : 0);
  if (l3 > static_cast<size_t>(mtu))
    return Error{0, "--size " + std::to_string(size) + " exceeds the interface MTU (" +
                        std::to_string(mtu) + " bytes of IP)"};
  if (size * o.sources > kMaxFrameBytes)
    return Error{0, "--size x --sources needs more than 128 MiB of frames"};

  std::vector<Frame> frames;
  frames.reserve(o.sources);
  for (uint32_t i = 0; i < o.sources; i++) {
    packet::Builder b;
    b.mac(src_mac, o.dst_mac);
    if (o.vlan) b.vlan(*o.vlan);
    Address src = nth_source(o.src, i);
    if (o.dst.family == 4) {
      b.ipv4_raw({src.bytes[0], src.bytes[1], src.bytes[2], src.bytes[3]},
                 {o.dst.bytes[0], o.dst.bytes[1], o.dst.bytes[2], o.dst.bytes[3]});
    } else {
      b.ipv6_raw(src.bytes, o.dst.bytes);
    }
    if (o.fragment == Fragment::kFirst) b.fragment(0, true);
    if (o.fragment == Fragment::kLater) b.fragment(kLaterOffset8, false);
    switch (o.proto) {
      case Proto::kUdp:
        b.udp(o.sport, o.dport);
        break;
      case Proto::kTcp:
        b.tcp(o.sport, o.dport, o.syn ? packet::kSyn : packet::kAck);
        break;
      case Proto::kIcmp:
        b.icmp(o.dst.family == 4 ? 8 : 128);  // echo request
        break;
    }
    b.payload(size - headers);  // a payload rather than padding: receivers see the full size
    frames.push_back(b.build());
    if (frames.back().size() != size)
      return Error{0, "internal: built a " + std::to_string(frames.back().size()) +
                          "-byte frame, wanted " + std::to_string(size)};
  }
  return frames;
}

}  // namespace rl::rlsend
