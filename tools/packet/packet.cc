// SPDX-License-Identifier: GPL-2.0-only
#include "packet.h"

#include <arpa/inet.h>

#include <stdexcept>
#include <string>

namespace rl::packet {
namespace {

constexpr uint8_t kTcp = 6, kUdp = 17, kIcmp = 1, kIcmpv6 = 58, kFragment = 44, kAh = 51;

void put16(std::vector<uint8_t>& b, uint16_t v) {
  b.push_back(v >> 8);
  b.push_back(v & 0xff);
}
void put32(std::vector<uint8_t>& b, uint32_t v) {
  put16(b, v >> 16);
  put16(b, v & 0xffff);
}
void set16(std::vector<uint8_t>& b, size_t at, uint16_t v) {
  b[at] = v >> 8;
  b[at + 1] = v & 0xff;
}

uint32_t sum16(const uint8_t* p, size_t n, uint32_t acc = 0) {
  for (size_t i = 0; i + 1 < n; i += 2) acc += (p[i] << 8) | p[i + 1];
  if (n & 1) acc += p[n - 1] << 8;
  return acc;
}
uint16_t fold(uint32_t acc) {
  while (acc >> 16) acc = (acc & 0xffff) + (acc >> 16);
  return static_cast<uint16_t>(~acc);
}

}  // namespace

Builder& Builder::vlan(uint16_t vid, uint16_t tpid) {
  vlans_.push_back({tpid, vid});  // NOLINT(modernize-use-emplace): an aggregate
  return *this;
}
Builder& Builder::ethertype(uint16_t type) {
  ethertype_ = type;
  family_ = 0;
  return *this;
}
Builder& Builder::ipv4_raw(const std::array<uint8_t, 4>& s, const std::array<uint8_t, 4>& d) {
  family_ = 4;
  ethertype_ = 0x0800;
  std::copy(s.begin(), s.end(), src_.begin());
  std::copy(d.begin(), d.end(), dst_.begin());
  return *this;
}
Builder& Builder::ipv4(std::string_view s, std::string_view d) {
  std::array<uint8_t, 4> a{}, b{};
  if (inet_pton(AF_INET, std::string(s).c_str(), a.data()) != 1 ||
      inet_pton(AF_INET, std::string(d).c_str(), b.data()) != 1)
    throw std::invalid_argument("bad IPv4 address");
  return ipv4_raw(a, b);
}
Builder& Builder::ipv6_raw(const std::array<uint8_t, 16>& s, const std::array<uint8_t, 16>& d) {
  family_ = 6;
  ethertype_ = 0x86dd;
  src_ = s;
  dst_ = d;
  return *this;
}
Builder& Builder::ipv6(std::string_view s, std::string_view d) {
  std::array<uint8_t, 16> a{}, b{};
  if (inet_pton(AF_INET6, std::string(s).c_str(), a.data()) != 1 ||
      inet_pton(AF_INET6, std::string(d).c_str(), b.data()) != 1)
    throw std::invalid_argument("bad IPv6 address");
  return ipv6_raw(a, b);
}
Builder& Builder::ipv4_options(uint8_t words) {
  ipv4_opt_words_ = words;
  return *this;
}
Builder& Builder::ipv6_ext(uint8_t type, uint8_t len8) {
  ext_.push_back({type, len8});
  return *this;
}
Builder& Builder::fragment(uint16_t off8, bool more) {
  frag_ = true;
  frag_off8_ = off8;
  frag_more_ = more;
  return *this;
}
Builder& Builder::tcp(uint16_t sport, uint16_t dport, uint8_t flags) {
  proto_ = kTcp;
  sport_ = sport;
  dport_ = dport;
  tcp_flags_ = flags;
  return *this;
}
Builder& Builder::tcp_seq(uint32_t seq, uint32_t ack) {
  tcp_seq_ = seq;
  tcp_ack_ = ack;
  return *this;
}
Builder& Builder::tcp_options(std::vector<uint8_t> options) {
  options.resize((options.size() + 3) / 4 * 4, 0);
  tcp_options_ = std::move(options);
  return *this;
}
Builder& Builder::udp(uint16_t sport, uint16_t dport) {
  proto_ = kUdp;
  sport_ = sport;
  dport_ = dport;
  return *this;
}
Builder& Builder::icmp(uint8_t type, uint8_t code) {
  proto_ = family_ == 6 ? kIcmpv6 : kIcmp;
  icmp_type_ = type;
  icmp_code_ = code;
  return *this;
}
Builder& Builder::l4_protocol(uint8_t proto) {
  proto_ = proto;
  return *this;
}
Builder& Builder::payload(size_t n) {
  payload_ = n;
  payload_bytes_.clear();
  return *this;
}
Builder& Builder::payload(const std::vector<uint8_t>& bytes) {
  payload_ = bytes.size();
  payload_bytes_ = bytes;
  return *this;
}
Builder& Builder::ttl(uint8_t t) {
  ttl_ = t;
  return *this;
}
Builder& Builder::mac(const std::array<uint8_t, 6>& s, const std::array<uint8_t, 6>& d) {
  src_mac_ = s;
  dst_mac_ = d;
  return *this;
}

std::vector<uint8_t> Builder::build() const {
  std::vector<uint8_t> b;
  b.insert(b.end(), dst_mac_.begin(), dst_mac_.end());
  b.insert(b.end(), src_mac_.begin(), src_mac_.end());
  for (auto [tpid, vid] : vlans_) {
    put16(b, tpid);
    put16(b, vid & 0x0fff);
  }
  put16(b, ethertype_);
  if (family_ == 0) {
    b.resize(b.size() + std::max<size_t>(payload_, 46), 0);
    return b;
  }

  // Transport header and payload first: the IP header needs their length.
  std::vector<uint8_t> l4 = transport();
  if (family_ == 4)
    put_ipv4(b, l4.size());
  else
    put_ipv6(b, l4.size());
  b.insert(b.end(), l4.begin(), l4.end());
  if (b.size() < 60) b.resize(60, 0);  // Ethernet minimum (without FCS)
  return b;
}

std::vector<uint8_t> Builder::transport() const {
  std::vector<uint8_t> l4;
  bool first_fragment = !frag_ || frag_off8_ == 0;
  if (first_fragment) {
    if (proto_ == kTcp) {
      put16(l4, sport_);
      put16(l4, dport_);
      put32(l4, tcp_seq_);
      put32(l4, tcp_ack_);
      l4.push_back(static_cast<uint8_t>((5 + tcp_options_.size() / 4) << 4));
      l4.push_back(tcp_flags_);
      put16(l4, 65535);  // window
      put16(l4, 0);      // checksum
      put16(l4, 0);      // urgent
      l4.insert(l4.end(), tcp_options_.begin(), tcp_options_.end());
    } else if (proto_ == kUdp) {
      put16(l4, sport_);
      put16(l4, dport_);
      put16(l4, static_cast<uint16_t>(8 + payload_));
      put16(l4, 0);
    } else if (proto_ == kIcmp || proto_ == kIcmpv6) {
      l4.push_back(icmp_type_);
      l4.push_back(icmp_code_);
      put16(l4, 0);
      put32(l4, 0x00010001);  // id, sequence
    }
  }
  if (payload_bytes_.empty())
    l4.resize(l4.size() + payload_, 0xab);
  else
    l4.insert(l4.end(), payload_bytes_.begin(), payload_bytes_.end());

  // L4 checksum over the pseudo header (only for an unfragmented datagram: a fragment's
  // checksum covers bytes this frame does not carry).
  if (!frag_ && (proto_ == kTcp || proto_ == kUdp || proto_ == kIcmp || proto_ == kIcmpv6)) {
    uint32_t acc = 0;
    if (proto_ != kIcmp) {
      size_t alen = family_ == 4 ? 4 : 16;
      acc = sum16(src_.data(), alen, acc);
      acc = sum16(dst_.data(), alen, acc);
      acc += proto_;
      acc += static_cast<uint32_t>(l4.size());
    }
    acc = sum16(l4.data(), l4.size(), acc);
    uint16_t c = fold(acc);
    if (proto_ == kUdp && c == 0) c = 0xffff;
    size_t at = proto_ == kTcp ? 16 : (proto_ == kUdp ? 6 : 2);
    set16(l4, at, c);
  }
  return l4;
}

void Builder::put_ipv4(std::vector<uint8_t>& b, size_t l4_len) const {
  size_t ip = b.size();
  uint8_t ihl = 5 + ipv4_opt_words_;
  b.push_back(0x40 | ihl);
  b.push_back(0);
  put16(b, static_cast<uint16_t>(size_t{ihl} * 4 + l4_len));
  put16(b, 0x1234);
  uint16_t frag = frag_ ? ((frag_more_ ? 0x2000 : 0) | (frag_off8_ & 0x1fff)) : 0x4000;
  put16(b, frag);
  b.push_back(ttl_);
  b.push_back(proto_);
  put16(b, 0);
  b.insert(b.end(), src_.begin(), src_.begin() + 4);
  b.insert(b.end(), dst_.begin(), dst_.begin() + 4);
  for (int i = 0; i < ipv4_opt_words_ * 4; i++) b.push_back(1);  // NOP options
  set16(b, ip + 10, fold(sum16(&b[ip], size_t{ihl} * 4)));
}

void Builder::put_ipv6(std::vector<uint8_t>& b, size_t l4_len) const {
  std::vector<uint8_t> ext;
  std::vector<uint8_t> chain;
  for (const auto& e : ext_) chain.push_back(e.type);
  if (frag_) chain.push_back(kFragment);
  for (size_t i = 0; i < chain.size(); i++) {
    uint8_t next = i + 1 < chain.size() ? chain[i + 1] : proto_;
    if (chain[i] == kFragment) {
      ext.push_back(next);
      ext.push_back(0);
      put16(ext, static_cast<uint16_t>((frag_off8_ << 3) | (frag_more_ ? 1 : 0)));
      put32(ext, 0xabcd);
    } else if (chain[i] == kAh) {
      // AH counts its length in 4-octet units, minus 2; SPI, sequence and ICV left zero.
      uint8_t len8 = ext_[i].len8;
      ext.push_back(next);
      ext.push_back(static_cast<uint8_t>(2 * len8));
      ext.resize(ext.size() + 6 + size_t{8} * len8, 0);
    } else {
      uint8_t len8 = ext_[i].len8;
      ext.push_back(next);
      ext.push_back(len8);
      ext.resize(ext.size() + 6 + size_t{8} * len8, 0);
      // PadN option filling the header, so it parses as valid options.
      size_t opt = ext.size() - (6 + 8 * len8);
      ext[opt] = 1;
      ext[opt + 1] = static_cast<uint8_t>(4 + 8 * len8);
    }
  }
  uint32_t plen = static_cast<uint32_t>(ext.size() + l4_len);
  put32(b, 0x60000000);
  put16(b, static_cast<uint16_t>(plen));
  b.push_back(chain.empty() ? proto_ : chain[0]);
  b.push_back(ttl_);
  b.insert(b.end(), src_.begin(), src_.end());
  b.insert(b.end(), dst_.begin(), dst_.end());
  b.insert(b.end(), ext.begin(), ext.end());
}

}  // namespace rl::packet
