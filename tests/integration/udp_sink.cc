// SPDX-License-Identifier: GPL-2.0-only
// udp_sink: counts the UDP datagrams that reach an application socket, per source address, and
// the distinct source ports they came from, for a bounded time; the integration tests compare
// that with what was sent. Prints, when done:
//   {"received":N,"bytes":B,"seconds":X,"source_ports":P,"sources":{"198.18.200.1":10,...}}
// It says "listening" on stderr once bound, so a test knows when to start sending.
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "sockaddr_text.h"

namespace {

using rl::testing::now_s;
using rl::testing::port_of;
using rl::testing::source_of;

constexpr double kMaxSeconds = 60;
constexpr int kRcvBuf = 16 << 20;  // a burst at full speed must not overflow before we read

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }

int open_socket(const std::string& bind_addr, uint16_t port) {
  sockaddr_storage ss{};
  socklen_t len;
  if (!rl::testing::to_sockaddr(bind_addr, port, ss, len)) return -2;
  bool v4 = ss.ss_family == AF_INET;
  int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  int zero = 0, buf = kRcvBuf;
  if (!v4) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) != 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
  if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

int main(int argc, char** argv) {
  std::string bind_addr = "::";
  int64_t port = 0, expect = 0, idle_ms = 0;
  double seconds = 10;
  CLI::App app{"Counts UDP datagrams per source for a bounded time; prints JSON.", "udp_sink"};
  app.add_option("--port", port, "UDP port to bind")->required();
  app.add_option("--bind", bind_addr, "Local address (default :: = IPv4 and IPv6)");
  app.add_option("--seconds", seconds, "Stop after this long (default 10, max 60)");
  app.add_option("--expect", expect, "Stop once this many datagrams arrived (0: off)");
  app.add_option("--idle-ms", idle_ms, "Stop when nothing arrived for this long after the first");
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "udp_sink: %s\n", e.what());
    return 2;
  }
  if (port < 1 || port > 65535 || expect < 0 || idle_ms < 0 ||
      !(seconds > 0 && seconds <= kMaxSeconds)) {
    std::fprintf(stderr,
                 "udp_sink: need 1 <= --port <= 65535, --seconds in (0, 60], --expect and "
                 "--idle-ms >= 0\n");
    return 2;
  }

  int fd = open_socket(bind_addr, static_cast<uint16_t>(port));
  if (fd == -2) {
    std::fprintf(stderr, "udp_sink: --bind '%s' is not an address\n", bind_addr.c_str());
    return 2;
  }
  if (fd < 0) {
    std::fprintf(stderr, "udp_sink: bind %s port %lld: %s\n", bind_addr.c_str(),
                 static_cast<long long>(port), std::strerror(errno));
    return 1;
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;  // no SA_RESTART: poll returns EINTR and the summary still prints
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::fprintf(stderr, "udp_sink: listening on [%s]:%lld\n", bind_addr.c_str(),
               static_cast<long long>(port));

  std::map<std::string, uint64_t> sources;
  std::set<uint16_t> source_ports;
  uint64_t received = 0, bytes = 0;
  const double start = now_s(), deadline = start + seconds;
  double last = start;
  char buf[65536];
  while (!g_stop.load()) {
    double now = now_s();
    if (now >= deadline || (expect && received >= static_cast<uint64_t>(expect))) break;
    double until = deadline;
    if (idle_ms && received) {
      double idle_end = last + static_cast<double>(idle_ms) / 1e3;
      if (now >= idle_end) break;
      until = std::min(until, idle_end);
    }
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, std::max(1, static_cast<int>((until - now) * 1e3))) <= 0) continue;
    for (;;) {
      sockaddr_storage from{};
      socklen_t from_len = sizeof(from);
      ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, reinterpret_cast<sockaddr*>(&from), &from_len);
      if (n < 0) break;  // EAGAIN: drained
      received++;
      bytes += static_cast<uint64_t>(n);
      sources[source_of(from)]++;
      source_ports.insert(port_of(from));
      last = now_s();
    }
  }
  close(fd);

  std::string json = "{\"received\":" + std::to_string(received) +
                     ",\"bytes\":" + std::to_string(bytes) + ",\"seconds\":";
  char secs[32];
  std::snprintf(secs, sizeof(secs), "%.6f", now_s() - start);
  json += secs;
  json += ",\"source_ports\":" + std::to_string(source_ports.size());
  json += ",\"sources\":{";
  bool first = true;
  for (const auto& [src, n] : sources) {
    json += (first ? "\"" : ",\"") + src + "\":" + std::to_string(n);
    first = false;
  }
  json += "}}";
  std::printf("%s\n", json.c_str());
  return 0;
}
