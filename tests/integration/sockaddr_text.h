// SPDX-License-Identifier: GPL-2.0-only
// What the lab's socket tools (udp_sink, tcp_peer) share: a peer's address as text and a
// monotonic clock in seconds.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>

#include <string>

namespace rl::testing {

inline double now_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// IPv4 peers on a dual-stack socket show up as ::ffff:a.b.c.d; report them as a.b.c.d.
inline std::string source_of(const sockaddr_storage& ss) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(ss).sin_addr, buf, sizeof(buf));
  } else {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(ss).sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&a))
      inet_ntop(AF_INET, &a.s6_addr[12], buf, sizeof(buf));
    else
      inet_ntop(AF_INET6, &a, buf, sizeof(buf));
  }
  return buf;
}

// The port in host order.
inline uint16_t port_of(const sockaddr_storage& ss) {
  return ntohs(ss.ss_family == AF_INET ? reinterpret_cast<const sockaddr_in&>(ss).sin_port
                                       : reinterpret_cast<const sockaddr_in6&>(ss).sin6_port);
}

// An address and port as a sockaddr; false when `addr` is not an address.
inline bool to_sockaddr(const std::string& addr, uint16_t port, sockaddr_storage& ss,
                        socklen_t& len) {
  ss = {};
  if (addr.find(':') == std::string::npos) {
    auto& sin = reinterpret_cast<sockaddr_in&>(ss);
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port);
    len = sizeof(sin);
    return inet_pton(AF_INET, addr.c_str(), &sin.sin_addr) == 1;
  }
  auto& sin6 = reinterpret_cast<sockaddr_in6&>(ss);
  sin6.sin6_family = AF_INET6;
  sin6.sin6_port = htons(port);
  len = sizeof(sin6);
  return inet_pton(AF_INET6, addr.c_str(), &sin6.sin6_addr) == 1;
}

}  // namespace rl::testing
