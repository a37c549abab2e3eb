// SPDX-License-Identifier: GPL-2.0-only
#include "http_get.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>

namespace rl::testing {
namespace {

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

Result<HttpResponse> http_get(uint16_t port, const std::string& target,
                              std::chrono::milliseconds timeout) {
  Fd s{socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (s.fd < 0) return errno_error("socket");
  // Bounds every send and recv below, so a server that stalls fails the test instead of hanging.
  timeval tv{};
  tv.tv_sec = timeout.count() / 1000;
  tv.tv_usec = (timeout.count() % 1000) * 1000;
  setsockopt(s.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(s.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));

  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(s.fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) < 0)
    return errno_error("connect to 127.0.0.1:" + std::to_string(port));

  // HTTP/1.0: the server closes the connection after the body and sends no chunked encoding.
  std::string request = "GET " + target + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  for (size_t sent = 0; sent < request.size();) {
    ssize_t n = send(s.fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0) return errno_error("send");
    sent += size_t(n);
  }

  std::string raw;
  char buf[16384];
  for (;;) {
    ssize_t n = recv(s.fd, buf, sizeof(buf), 0);
    if (n < 0) return errno_error("recv from 127.0.0.1:" + std::to_string(port));
    if (n == 0) break;
    raw.append(buf, size_t(n));
  }

  size_t end = raw.find("\r\n\r\n");
  HttpResponse r;
  if (end == std::string::npos || std::sscanf(raw.c_str(), "HTTP/%*d.%*d %d", &r.status) != 1)
    return Error{0, "malformed HTTP response: " + raw.substr(0, 200)};
  r.headers = raw.substr(0, end);
  r.body = raw.substr(end + 4);
  return r;
}

std::string url_encode(const std::string& s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += char(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace rl::testing
