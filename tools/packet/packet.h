// SPDX-License-Identifier: GPL-2.0-only
// Builds Ethernet frames byte by byte: VLAN tags, IPv4 (options, fragments), IPv6 (extension
// headers, fragments), TCP, UDP, ICMP/ICMPv6, with valid checksums. Used by the BPF tests, the
// benchmarks and rlsend; it can also cut frames short to make malformed ones.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace rl::packet {

enum TcpFlag : uint8_t { kFin = 0x01, kSyn = 0x02, kRst = 0x04, kPsh = 0x08, kAck = 0x10 };

class Builder {
 public:
  Builder& vlan(uint16_t vid, uint16_t tpid = 0x8100);
  Builder& ethertype(uint16_t type);  // a non-IP frame (ARP, ...)
  Builder& ipv4(std::string_view src, std::string_view dst);
  Builder& ipv4_raw(const std::array<uint8_t, 4>& src, const std::array<uint8_t, 4>& dst);
  Builder& ipv4_options(uint8_t words);  // IHL = 5 + words
  Builder& ipv6(std::string_view src, std::string_view dst);
  Builder& ipv6_raw(const std::array<uint8_t, 16>& src, const std::array<uint8_t, 16>& dst);
  // Hop-by-hop 0, routing 43, dstopts 60 or AH 51, 8 * (len8 + 1) bytes long.
  Builder& ipv6_ext(uint8_t type, uint8_t len8 = 0);
  Builder& fragment(uint16_t offset8, bool more);  // IPv4 flags or an IPv6 fragment header
  Builder& tcp(uint16_t sport, uint16_t dport, uint8_t flags = kAck);
  Builder& tcp_seq(uint32_t seq, uint32_t ack);
  Builder& tcp_options(std::vector<uint8_t> options);  // padded with EOL to whole words
  Builder& udp(uint16_t sport, uint16_t dport);
  Builder& icmp(uint8_t type, uint8_t code = 0);  // ICMPv6 on IPv6
  Builder& l4_protocol(uint8_t proto);            // a protocol without a header here
  Builder& payload(size_t bytes);
  Builder& payload(const std::vector<uint8_t>& bytes);  // e.g. the datagram an ICMP error quotes
  Builder& ttl(uint8_t ttl);
  Builder& mac(const std::array<uint8_t, 6>& src, const std::array<uint8_t, 6>& dst);

  std::vector<uint8_t> build() const;

 private:
  // The transport header (none for a later fragment), the payload and the L4 checksum.
  std::vector<uint8_t> transport() const;
  // The IP header, and IPv6's extension headers, for `l4_len` bytes of transport and payload.
  void put_ipv4(std::vector<uint8_t>& b, size_t l4_len) const;
  void put_ipv6(std::vector<uint8_t>& b, size_t l4_len) const;

  struct Ext {
    uint8_t type;
    uint8_t len8;
  };
  std::vector<std::pair<uint16_t, uint16_t>> vlans_;  // (tpid, vid)
  std::array<uint8_t, 6> src_mac_{0x02, 0, 0, 0, 0, 1}, dst_mac_{0x02, 0, 0, 0, 0, 2};
  uint16_t ethertype_ = 0x0800;
  uint8_t family_ = 0;
  std::array<uint8_t, 16> src_{}, dst_{};
  uint8_t ipv4_opt_words_ = 0;
  std::vector<Ext> ext_;
  bool frag_ = false;
  uint16_t frag_off8_ = 0;
  bool frag_more_ = false;
  uint8_t proto_ = 0;
  uint16_t sport_ = 0, dport_ = 0;
  uint8_t tcp_flags_ = 0;
  uint32_t tcp_seq_ = 1, tcp_ack_ = 0;
  std::vector<uint8_t> tcp_options_;
  uint8_t icmp_type_ = 0, icmp_code_ = 0;
  size_t payload_ = 0;
  std::vector<uint8_t> payload_bytes_;
  uint8_t ttl_ = 64;
};

}  // namespace rl::packet
