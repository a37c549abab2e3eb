// SPDX-License-Identifier: GPL-2.0-only
// tcp_peer: the two ends of real TCP connections for the lab, each bounded in count and time.
//   tcp_peer serve --port P [--expect N] [--seconds S]
//     accepts connections (IPv4 and IPv6), echoes one message on each, closes it; says
//     "listening" on stderr once bound, and prints {"accepted":N,"seconds":X,"peers":{...}}.
//   tcp_peer connect --to ADDR --port P --count N [--seconds S] [--timeout-ms T]
//     opens N connections one after another, each sends a message and waits for its echo;
//     prints {"completed":N,"failed":F,"seconds":X}.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "sockaddr_text.h"

namespace {

using rl::testing::now_s;

constexpr double kMaxSeconds = 60;
constexpr char kMessage[] = "rl tcp_peer\n";

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }

bool wait_fd(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  return poll(&p, 1, timeout_ms) == 1 && (p.revents & events);
}

// Reads until `want` bytes arrived or the peer closed; false on timeout or error.
bool read_all(int fd, char* buf, size_t want, int timeout_ms) {
  size_t got = 0;
  while (got < want) {
    if (!wait_fd(fd, POLLIN, timeout_ms)) return false;
    ssize_t n = read(fd, buf + got, want - got);
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

std::string seconds_since(double start) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6f", now_s() - start);
  return buf;
}

int serve(uint16_t port, int64_t expect, double seconds, int timeout_ms) {
  sockaddr_storage ss{};
  socklen_t len;
  rl::testing::to_sockaddr("::", port, ss, len);
  int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int zero = 0, one = 1;
  if (fd >= 0) {
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  }
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || listen(fd, 128) != 0) {
    std::fprintf(stderr, "tcp_peer: listen on port %u: %s\n", port, std::strerror(errno));
    return 1;
  }
  std::fprintf(stderr, "tcp_peer: listening on port %u\n", port);
  std::map<std::string, uint64_t> peers;
  uint64_t accepted = 0;
  const double start = now_s(), deadline = start + seconds;
  while (!g_stop.load() && (expect == 0 || accepted < static_cast<uint64_t>(expect))) {
    double left = deadline - now_s();
    if (left <= 0) break;
    if (!wait_fd(fd, POLLIN, std::max(1, static_cast<int>(left * 1e3)))) continue;
    sockaddr_storage from{};
    socklen_t from_len = sizeof(from);
    int c = accept4(fd, reinterpret_cast<sockaddr*>(&from), &from_len, SOCK_CLOEXEC);
    if (c < 0) continue;
    char buf[sizeof(kMessage) - 1];
    if (read_all(c, buf, sizeof(buf), timeout_ms) &&
        write(c, buf, sizeof(buf)) == static_cast<ssize_t>(sizeof(buf))) {
      accepted++;
      peers[rl::testing::source_of(from)]++;
    }
    close(c);
  }
  close(fd);
  std::string json = "{\"accepted\":" + std::to_string(accepted) +
                     ",\"seconds\":" + seconds_since(start) + ",\"peers\":{";
  bool first = true;
  for (const auto& [peer, n] : peers) {
    json += (first ? "\"" : ",\"") + peer + "\":" + std::to_string(n);
    first = false;
  }
  std::printf("%s}}\n", json.c_str());
  return 0;
}

// One connection: connect (bounded), send the message, read its echo.
bool exchange(const sockaddr_storage& to, socklen_t len, int timeout_ms) {
  int fd = socket(to.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  bool ok = false;
  int rc = connect(fd, reinterpret_cast<const sockaddr*>(&to), len);
  if (rc == 0 || (errno == EINPROGRESS && wait_fd(fd, POLLOUT, timeout_ms))) {
    int err = 0;
    socklen_t elen = sizeof(err);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen);
    char buf[sizeof(kMessage) - 1];
    ok = err == 0 && write(fd, kMessage, sizeof(buf)) == static_cast<ssize_t>(sizeof(buf)) &&
         read_all(fd, buf, sizeof(buf), timeout_ms) && std::memcmp(buf, kMessage, sizeof(buf)) == 0;
  }
  close(fd);
  return ok;
}

int connect_many(const std::string& to, uint16_t port, int64_t count, double seconds,
                 int timeout_ms) {
  sockaddr_storage ss{};
  socklen_t len;
  if (!rl::testing::to_sockaddr(to, port, ss, len)) {
    std::fprintf(stderr, "tcp_peer: --to '%s' is not an address\n", to.c_str());
    return 2;
  }
  uint64_t completed = 0, failed = 0;
  const double start = now_s(), deadline = start + seconds;
  for (int64_t i = 0; i < count && !g_stop.load() && now_s() < deadline; i++)
    (exchange(ss, len, timeout_ms) ? completed : failed)++;
  std::printf("{\"completed\":%llu,\"failed\":%llu,\"seconds\":%s}\n",
              static_cast<unsigned long long>(completed), static_cast<unsigned long long>(failed),
              seconds_since(start).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Real TCP connections for the lab, bounded in count and time; prints JSON.",
               "tcp_peer"};
  app.require_subcommand(1);
  int64_t port = 0, expect = 0, count = 1, timeout_ms = 3000;
  double seconds = 10;
  std::string to;
  auto* serve_cmd = app.add_subcommand("serve", "accept and echo");
  serve_cmd->add_option("--port", port, "TCP port")->required();
  serve_cmd->add_option("--expect", expect, "stop after this many connections (0: off)");
  serve_cmd->add_option("--seconds", seconds, "stop after this long (max 60)");
  auto* connect_cmd = app.add_subcommand("connect", "connect, send, read the echo");
  connect_cmd->add_option("--to", to, "server address")->required();
  connect_cmd->add_option("--port", port, "TCP port")->required();
  connect_cmd->add_option("--count", count, "connections, one after another");
  connect_cmd->add_option("--seconds", seconds, "stop after this long (max 60)");
  for (auto* c : {serve_cmd, connect_cmd})
    c->add_option("--timeout-ms", timeout_ms, "per step of a connection");
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "tcp_peer: %s\n", e.what());
    return 2;
  }
  if (port < 1 || port > 65535 || expect < 0 || count < 0 || count > 100000 || timeout_ms < 1 ||
      !(seconds > 0 && seconds <= kMaxSeconds)) {
    std::fprintf(stderr,
                 "tcp_peer: need 1 <= --port <= 65535, --seconds in (0, 60], --count <= "
                 "100000, --timeout-ms >= 1\n");
    return 2;
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  if (*serve_cmd)
    return serve(static_cast<uint16_t>(port), expect, seconds, static_cast<int>(timeout_ms));
  return connect_many(to, static_cast<uint16_t>(port), count, seconds,
                      static_cast<int>(timeout_ms));
}
