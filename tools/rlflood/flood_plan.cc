// SPDX-License-Identifier: GPL-2.0-only
#include "flood_plan.h"

#include <optional>

#include "packet.h"

namespace rl::rlflood {
namespace {

constexpr size_t kEth = 14;

size_t header_bytes(bool v6, bool tcp) { return kEth + (v6 ? 40 : 20) + (tcp ? 20 : 8); }

uint16_t word_at(const std::vector<uint8_t>& f, size_t off) {
  return static_cast<uint16_t>((f[off] << 8) | f[off + 1]);
}

// RFC 1624: a checksum C over data that held words m, recomputed for words m', is
// ~(~C + ~m + m'). This is the part that does not depend on m' (the new source's last 32 bits,
// and for the transport's checksum its source port too, at sport_off).
uint32_t csum_base(const std::vector<uint8_t>& f, size_t csum_off, size_t src_off,
                   std::optional<size_t> sport_off = std::nullopt) {
  uint32_t sum = static_cast<uint16_t>(~word_at(f, csum_off));
  sum += static_cast<uint16_t>(~word_at(f, src_off));
  sum += static_cast<uint16_t>(~word_at(f, src_off + 2));
  if (sport_off) sum += static_cast<uint16_t>(~word_at(f, *sport_off));
  return sum;
}

uint8_t bits_for(uint32_t n) {
  uint8_t b = 1;
  while (b < 32 && (uint64_t{1} << b) < n) b++;
  return b;
}

bool walks_are_short(uint32_t n, uint8_t bits, uint32_t seed) {
  for (uint32_t k = 0; k < n; k++)
    if (flood_perm_index(k, n, bits, seed) >= n) return false;
  return true;
}

}  // namespace

Result<FloodPlan> plan_flood(const Options& o, const lab::Mac& src_mac, int mtu) {
  FloodPlan p;
  flood_frame_spec& s = p.spec;
  s.is_v6 = o.dst.family == 6;
  s.is_tcp = o.proto == Proto::kTcpSyn;
  s.n_sources = o.sources;
  s.perm_bits = 1;
  size_t headers = header_bytes(p.v6(), p.tcp());
  size_t size = o.size ? o.size : std::max(kMinSize, headers);
  if (size < headers)
    return Error{0, "--size " + std::to_string(size) + " cannot hold the headers (" +
                        std::to_string(headers) + " bytes)"};
  if (size - kEth > static_cast<size_t>(mtu))
    return Error{0, "--size " + std::to_string(size) + " exceeds the interface MTU (" +
                        std::to_string(mtu) + " bytes of IP)"};

  Address src = o.src.addr;
  if (o.src.len < src.width()) {  // source 0 is prefix + 1; capacity() keeps it in 32 bits
    for (int b = static_cast<int>(src.width() / 8) - 1; b >= 0 && ++src.bytes[b] == 0; b--) {
    }
  }
  packet::Builder b;
  b.mac(src_mac, o.dst_mac);
  if (p.v6())
    b.ipv6_raw(src.bytes, o.dst.bytes);
  else
    b.ipv4_raw({src.bytes[0], src.bytes[1], src.bytes[2], src.bytes[3]},
               {o.dst.bytes[0], o.dst.bytes[1], o.dst.bytes[2], o.dst.bytes[3]});
  if (p.tcp())
    b.tcp(o.sport, o.dport, packet::kSyn);
  else
    b.udp(o.sport, o.dport);
  b.payload(size - headers);
  p.frame = b.build();
  if (p.frame.size() != size)
    return Error{0, "internal: built a " + std::to_string(p.frame.size()) + "-byte frame, wanted " +
                        std::to_string(size)};

  // The offsets flood_frame_write() writes at: the source's last 32 bits, the checksums.
  size_t src_off = flood_src_off(&s), l4_off = flood_l4_off(&s);
  s.base_low = (uint32_t{word_at(p.frame, src_off)} << 16) | word_at(p.frame, src_off + 2);
  s.l4_csum_base = csum_base(p.frame, flood_l4_csum_off(&s), src_off, l4_off);
  s.base_sport = word_at(p.frame, l4_off);
  s.n_sports = o.sports;
  if (!p.v6()) s.ip_csum_base = csum_base(p.frame, kEth + 10, src_off);

  if (o.order == Order::kShuffled && o.sources > 1) {
    s.shuffle = 1;
    s.perm_bits = bits_for(o.sources);
    // Almost every seed works; the check costs a few ns per source, once.
    constexpr int kSeeds = 100;
    int tried = 0;
    for (s.perm_seed = 0x2545f491u; !walks_are_short(o.sources, s.perm_bits, s.perm_seed);
         s.perm_seed += 0x9e3779b9u)
      if (++tried == kSeeds)
        return Error{0, "no permutation seed found for " + std::to_string(o.sources) + " sources"};
  }
  return p;
}

}  // namespace rl::rlflood
