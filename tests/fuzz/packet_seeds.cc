// SPDX-License-Identifier: GPL-2.0-only
// Writes the packet fuzzer's seed corpus: one frame per file, made by the packet builder, over
// the shapes the parser tells apart (VLAN tags, IPv4 options and fragments, IPv6 extension
// headers and fragments, each L4 protocol) and each of them cut short.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "packet.h"

namespace {

using rl::packet::Builder;

std::vector<Builder> shapes() {
  std::vector<Builder> out;
  for (bool v6 : {false, true}) {
    auto ip = [v6] {
      Builder b;
      return v6 ? b.ipv6("2001:db8::1", "2001:db8::2") : b.ipv4("192.0.2.1", "198.51.100.2");
    };
    out.push_back(ip().tcp(40000, 443, rl::packet::kSyn));
    out.push_back(ip().tcp(40000, 80).tcp_options({2, 4, 5, 0xb4}).payload(64));
    out.push_back(ip().udp(5353, 53).payload(32));
    out.push_back(ip().icmp(v6 ? 128 : 8));
    out.push_back(ip().l4_protocol(47).payload(8));
    out.push_back(ip().fragment(0, true).udp(1000, 53).payload(16));
    out.push_back(ip().fragment(100, false).udp(1000, 53));
    out.push_back(ip().vlan(10).vlan(20, 0x88a8).tcp(1, 22, rl::packet::kSyn));
  }
  out.push_back(Builder().ipv4("10.0.0.1", "10.0.0.2").ipv4_options(3).udp(1, 2));
  out.push_back(Builder()
                    .ipv6("fe80::1", "fe80::2")
                    .ipv6_ext(0)
                    .ipv6_ext(43, 2)
                    .ipv6_ext(60)
                    .tcp(1, 2, rl::packet::kSyn));
  out.push_back(Builder().ethertype(0x0806).payload(28));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  int n = 0;
  auto write = [&](const std::vector<uint8_t>& frame) {
    std::ofstream f(std::string(argv[1]) + "/frame-" + std::to_string(n++), std::ios::binary);
    f.write(reinterpret_cast<const char*>(frame.data()),
            static_cast<std::streamsize>(frame.size()));
    return static_cast<bool>(f);
  };
  for (const Builder& b : shapes()) {
    std::vector<uint8_t> frame = b.build();
    if (!write(frame)) return 1;
    frame.resize(frame.size() / 2);  // a header cut short
    if (!write(frame)) return 1;
  }
  return 0;
}
