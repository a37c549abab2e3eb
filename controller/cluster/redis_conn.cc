// SPDX-License-Identifier: GPL-2.0-only
#include "cluster/redis_conn.h"

#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <utility>

#include "common/sigpipe.h"

namespace rl::cluster {
namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  // A zero timeval means "no timeout" to the kernel: never hand one out.
  if (ms.count() < 1) ms = std::chrono::milliseconds(1);
  return timeval{static_cast<time_t>(ms.count() / 1000),
                 static_cast<suseconds_t>((ms.count() % 1000) * 1000)};
}

}  // namespace

void ReplyDeleter::operator()(redisReply* r) const { freeReplyObject(r); }

void ReaderDeleter::operator()(redisReader* r) const { redisReaderFree(r); }

std::string Endpoint::addr() const {
  if (!unix_socket.empty()) return "unix:" + unix_socket;
  return host + ":" + std::to_string(port);
}

std::string Endpoint::str() const { return "redis " + addr(); }

StoreResult<Endpoint> parse_endpoint(const std::string& t) {
  auto bad = [&](const std::string& why) {
    return StoreError{ErrorKind::kInvalid, EINVAL, "address '" + t + "': " + why};
  };
  size_t colon = t.rfind(':');
  if (colon == std::string::npos || colon == 0) return bad("want host:port");
  Endpoint ep;
  ep.host = t.substr(0, colon);
  if (ep.host.front() == '[') {
    if (ep.host.back() != ']') return bad("an IPv6 address is written [addr]:port");
    ep.host = ep.host.substr(1, ep.host.size() - 2);
  }
  const std::string port = t.substr(colon + 1);
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), ep.port);
  if (ec != std::errc{} || end != port.data() + port.size() || ep.port < 1 || ep.port > 65535)
    return bad("port '" + port + "'");
  return ep;
}

StoreResult<RedisConn> RedisConn::connect(const Endpoint& ep, std::chrono::milliseconds timeout,
                                          const TlsContext* tls) {
  if (tls && !ep.unix_socket.empty())
    return StoreError{ErrorKind::kInvalid, EINVAL,
                      ep.str() + ": TLS is for TCP, not a unix socket"};
  const Clock::time_point deadline = Clock::now() + timeout;
  timeval tv = to_timeval(timeout);
  errno = 0;
  // hiredis makes the connection (its connect is bounded by the timeout); the socket is then
  // ours, and hiredis only formats commands and reads replies.
  redisContext* c = ep.unix_socket.empty()
                        ? redisConnectWithTimeout(ep.host.c_str(), ep.port, tv)
                        : redisConnectUnixWithTimeout(ep.unix_socket.c_str(), tv);
  int e = errno;
  if (!c) return StoreError{ErrorKind::kResource, ENOMEM, ep.str() + ": connect: out of memory"};
  if (c->err) {
    StoreError err =
        c->err == REDIS_ERR_IO && e != 0
            ? StoreError{ErrorKind::kUnreachable, e, ep.str() + ": connect"}
            : StoreError{ErrorKind::kUnreachable, 0, ep.str() + ": connect: " + c->errstr};
    if (e == ETIMEDOUT || e == EINPROGRESS)
      err = StoreError{
          ErrorKind::kTimeout, ETIMEDOUT,
          ep.str() + ": connect: no answer within " + std::to_string(timeout.count()) + " ms"};
    redisFree(c);
    return err;
  }
  UniqueFd fd(redisFreeKeepFd(c));
  int flags = fcntl(fd.get(), F_GETFL);
  if (flags < 0 || fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) < 0)
    return StoreError{ErrorKind::kResource, errno_error(ep.str() + ": connect: O_NONBLOCK")};
  Ssl ssl;
  if (tls) {
    auto session = tls->session(fd.get(), ep.host);
    if (!session) return session.error().wrap(ep.str());
    ssl = std::move(*session);
  }
  RedisConn conn(std::move(fd), std::move(ssl), ep.str());
  if (!conn.reader_)
    return StoreError{ErrorKind::kResource, ENOMEM, ep.str() + ": reply reader: out of memory"};
  if (conn.ssl_)
    if (auto err = conn.handshake(deadline)) return std::move(*err);
  return conn;
}

RedisConn::RedisConn(UniqueFd fd, Ssl ssl, std::string name)
    : fd_(std::move(fd)),
      ssl_(std::move(ssl)),
      reader_(redisReaderCreate()),
      name_(std::move(name)) {}

std::optional<StoreError> RedisConn::handshake(Clock::time_point deadline) {
  // OpenSSL writes with write(2), in a handshake or a read too (an alert, a key update); plain
  // writes say MSG_NOSIGNAL.
  SigpipeBlock guard;
  for (;;) {
    ERR_clear_error();
    errno = 0;
    int r = SSL_do_handshake(ssl_.get());
    if (r == 1) return std::nullopt;
    int saved = errno;
    int code = SSL_get_error(ssl_.get(), r);
    if (code == SSL_ERROR_WANT_READ || code == SSL_ERROR_WANT_WRITE) {
      short events = code == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
      if (auto e = wait(events, deadline, "TLS handshake")) return e;
      continue;
    }
    // A server that hung up mid-handshake is an outage like any other, not a TLS refusal.
    const ErrorKind kind =
        code == SSL_ERROR_SYSCALL && SSL_get_verify_result(ssl_.get()) == X509_V_OK
            ? ErrorKind::kConnectionLost
            : ErrorKind::kTls;
    return StoreError{kind, 0, name_ + ": TLS handshake: " + tls_failure(ssl_.get(), r, saved)};
  }
}

StoreStatus RedisConn::append(const std::vector<std::string_view>& argv) {
  if (!fd_) return StoreError{ErrorKind::kConnectionLost, ENOTCONN, name_ + ": not connected"};
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  ptrs.reserve(argv.size());
  lens.reserve(argv.size());
  for (auto a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  char* cmd = nullptr;
  int len = redisFormatCommandArgv(&cmd, static_cast<int>(argv.size()), ptrs.data(), lens.data());
  if (len < 0 || !cmd)
    return StoreError{ErrorKind::kResource, ENOMEM, name_ + ": queue command: out of memory"};
  out_.append(cmd, static_cast<size_t>(len));
  redisFreeCommand(cmd);
  queued_++;
  return StoreStatus::Ok();
}

std::optional<StoreError> RedisConn::wait(short events, Clock::time_point deadline,
                                          const char* what) {
  // EINTR restarts the wait with what is left, so signals cannot stretch the deadline.
  for (;;) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return StoreError{ErrorKind::kTimeout, ETIMEDOUT, name_ + ": " + what};
    pollfd p{fd_.get(), events, 0};
    int n = poll(&p, 1, static_cast<int>(left.count()));
    if (n > 0) return std::nullopt;
    if (n < 0 && errno != EINTR)
      return StoreError{ErrorKind::kConnectionLost, errno_error(name_ + ": " + what + ": poll")};
  }
}

RedisConn::Io RedisConn::tls_io(int ret, int saved_errno, const char* what) {
  const std::string where = name_ + ": " + what;
  switch (SSL_get_error(ssl_.get(), ret)) {
    case SSL_ERROR_WANT_READ:
      return {0, POLLIN, std::nullopt};
    case SSL_ERROR_WANT_WRITE:
      return {0, POLLOUT, std::nullopt};
    case SSL_ERROR_ZERO_RETURN:
      return {
          0, 0,
          StoreError{ErrorKind::kConnectionLost, 0, where + ": the server closed the TLS session"}};
    case SSL_ERROR_SYSCALL:
      ERR_clear_error();
      if (saved_errno != 0)
        return {0, 0, StoreError{ErrorKind::kConnectionLost, saved_errno, where}};
      return {0, 0, StoreError{ErrorKind::kConnectionLost, 0, where + ": the server hung up"}};
    default:
      // A TLS 1.3 server refuses a client certificate after the handshake: it comes here.
      return {
          0, 0,
          StoreError{ErrorKind::kTls, 0, where + ": " + tls_failure(ssl_.get(), ret, saved_errno)}};
  }
}

RedisConn::Io RedisConn::write_some() {
  const char* p = out_.data() + out_sent_;
  const size_t n = out_.size() - out_sent_;
  if (ssl_) {
    ERR_clear_error();
    errno = 0;
    int r = SSL_write(ssl_.get(), p, static_cast<int>(std::min<size_t>(n, INT_MAX)));
    if (r > 0) return {static_cast<size_t>(r), 0, std::nullopt};
    Io io = tls_io(r, errno, "write");
    if (io.failure && io.failure->kind == ErrorKind::kConnectionLost) {
      // A TLS 1.3 server checks our certificate after our handshake is over, and hangs up
      // with an alert our first write runs into: the alert, still queued, says why.
      char byte;
      ERR_clear_error();
      int rr = SSL_read(ssl_.get(), &byte, 1);
      if (rr <= 0 && SSL_get_error(ssl_.get(), rr) == SSL_ERROR_SSL)
        return {
            0, 0,
            StoreError{ErrorKind::kTls, 0, name_ + ": write: " + tls_failure(ssl_.get(), rr, 0)}};
      ERR_clear_error();
    }
    return io;
  }
  ssize_t r = ::send(fd_.get(), p, n, MSG_NOSIGNAL);
  if (r >= 0) return {static_cast<size_t>(r), 0, std::nullopt};
  if (errno == EAGAIN || errno == EWOULDBLOCK) return {0, POLLOUT, std::nullopt};
  if (errno == EINTR) return {};
  return {0, 0, StoreError{ErrorKind::kConnectionLost, errno, name_ + ": write"}};
}

RedisConn::Io RedisConn::read_some(char* buf, size_t len) {
  if (ssl_) {
    ERR_clear_error();
    errno = 0;
    int r = SSL_read(ssl_.get(), buf, static_cast<int>(std::min<size_t>(len, INT_MAX)));
    if (r > 0) return {static_cast<size_t>(r), 0, std::nullopt};
    return tls_io(r, errno, "read");
  }
  ssize_t r = ::recv(fd_.get(), buf, len, 0);
  if (r > 0) return {static_cast<size_t>(r), 0, std::nullopt};
  if (r == 0)
    return {0, 0, StoreError{ErrorKind::kConnectionLost, 0, name_ + ": read: the server hung up"}};
  if (errno == EAGAIN || errno == EWOULDBLOCK) return {0, POLLIN, std::nullopt};
  if (errno == EINTR) return {};
  return {0, 0, StoreError{ErrorKind::kConnectionLost, errno, name_ + ": read"}};
}

std::optional<StoreError> RedisConn::send(Clock::time_point deadline) {
  if (!fd_) return StoreError{ErrorKind::kConnectionLost, ENOTCONN, name_ + ": not connected"};
  std::optional<SigpipeBlock> guard;
  if (ssl_) guard.emplace();
  while (unsent() > 0) {
    Io io = write_some();
    if (io.failure) return io.failure;
    out_sent_ += io.bytes;
    if (io.wait_for)
      if (auto e = wait(io.wait_for, deadline, "write")) return e;
  }
  out_.clear();
  out_sent_ = 0;
  return std::nullopt;
}

Exchange RedisConn::exchange(Clock::time_point deadline) {
  Exchange out;
  size_t want = std::exchange(queued_, 0);
  std::optional<SigpipeBlock> guard;
  if (ssl_) guard.emplace();
  if (auto e = send(deadline)) {
    out.failure = std::move(*e);
    return out;
  }
  out.replies.reserve(want);
  char buf[16 * 1024];
  while (out.replies.size() < want) {
    void* r = nullptr;
    if (redisReaderGetReply(reader_.get(), &r) != REDIS_OK) {
      out.failure = StoreError{ErrorKind::kProtocol, EPROTO,
                               name_ + ": read: " + std::string(reader_->errstr)};
      return out;
    }
    if (r) {
      out.replies.emplace_back(static_cast<redisReply*>(r));
      continue;
    }
    // Read before waiting: TLS may hold decrypted bytes that poll cannot see.
    Io io = read_some(buf, sizeof(buf));
    if (io.failure) {
      out.failure = std::move(io.failure);
      return out;
    }
    if (io.bytes > 0 && redisReaderFeed(reader_.get(), buf, io.bytes) != REDIS_OK) {
      out.failure = StoreError{ErrorKind::kResource, ENOMEM, name_ + ": read: out of memory"};
      return out;
    }
    if (io.wait_for)
      if (auto e = wait(io.wait_for, deadline, "read")) {
        out.failure = std::move(*e);
        return out;
      }
  }
  return out;
}

}  // namespace rl::cluster
