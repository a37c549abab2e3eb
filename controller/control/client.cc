// SPDX-License-Identifier: GPL-2.0-only
#include "control/client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "common/fd.h"

namespace rl::control {

Result<Json> call(const std::string& path, const Json& req, int timeout_ms) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return errno_error("socket");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path))
    return Error{ENAMETOOLONG, "socket path too long: " + path};
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int e = errno;
    if (e == ENOENT || e == ECONNREFUSED)
      return Error{e,
                   "rld is not running (no daemon listening on " + path +
                       "); start it with 'rld --config /etc/rl/rld.yaml' or 'systemctl start rld'"};
    if (e == EACCES) return Error{e, "permission denied on " + path + "; rlctl needs root"};
    return errno_error("connect to " + path, e);
  }
  std::string out = to_text(req) + "\n";
  for (size_t off = 0; off < out.size();) {
    ssize_t n = ::send(fd.get(), out.data() + off, out.size() - off, MSG_NOSIGNAL);
    if (n < 0) return errno_error("send to rld");
    off += static_cast<size_t>(n);
  }
  std::string in;
  char buf[65536];
  while (in.empty() || in.back() != '\n') {
    pollfd p{fd.get(), POLLIN, 0};
    int r = ::poll(&p, 1, timeout_ms);
    if (r == 0)
      return Error{ETIMEDOUT,
                   "rld did not answer within " + std::to_string(timeout_ms / 1000) + " s"};
    if (r < 0) return errno_error("wait for rld");
    ssize_t n = ::recv(fd.get(), buf, sizeof(buf), 0);
    if (n < 0) return errno_error("read from rld");
    if (n == 0) break;
    in.append(buf, static_cast<size_t>(n));
    if (in.size() > kMaxMessageBytes) return Error{EMSGSIZE, "response from rld too large"};
  }
  Json resp = Json::parse(in, nullptr, false);
  if (resp.is_discarded()) return Error{EPROTO, "rld sent a response that is not JSON"};
  if (version_of(resp) != kProtocolVersion)
    return Error{EPROTO, "rld speaks control protocol version " + std::to_string(version_of(resp)) +
                             ", rlctl speaks " + std::to_string(kProtocolVersion) +
                             "; use matching versions"};
  return resp;
}

}  // namespace rl::control
