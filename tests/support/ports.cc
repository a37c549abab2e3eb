// SPDX-License-Identifier: GPL-2.0-only
#include "ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace rl::testing {

Result<uint16_t> free_loopback_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno_error("socket");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    int e = errno;
    close(fd);
    return errno_error("bind 127.0.0.1:0", e);
  }
  close(fd);
  return ntohs(a.sin_port);
}

Result<uint16_t> free_loopback_port_pair(uint16_t offset) {
  for (int attempt = 0; attempt < 100; attempt++) {
    auto p = free_loopback_port();
    if (!p) return p.error();
    if (uint32_t{*p} + offset > 65535) continue;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno_error("socket");
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(*p + offset));
    bool free = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    close(fd);
    if (free) return *p;
  }
  return Error{EADDRINUSE, "no free loopback port pair " + std::to_string(offset) + " apart"};
}

}  // namespace rl::testing
