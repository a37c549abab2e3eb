// SPDX-License-Identifier: GPL-2.0-only
#include "cluster/redis_conn.h"

#include <hiredis/hiredis.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>

#include <cerrno>
#include <charconv>
#include <utility>

namespace rl::cluster {
namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  // A zero timeval means "no timeout" to the kernel: never hand one out.
  if (ms.count() < 1) ms = std::chrono::milliseconds(1);
  return timeval{static_cast<time_t>(ms.count() / 1000),
                 static_cast<suseconds_t>((ms.count() % 1000) * 1000)};
}

// hiredis writes with write(2): to a peer that hung up that raises SIGPIPE, whose default
// action kills the daemon. Block it around our writes and consume the one we caused.
class SigpipeBlock {
 public:
  SigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    was_pending_ = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlock() {
    if (!was_pending_) {
      timespec zero{};
      // Standard signals do not queue: at most one is pending.
      sigtimedwait(&pipe_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  sigset_t pipe_{};
  sigset_t old_{};
  bool was_pending_ = false;
};

}  // namespace

void ReplyDeleter::operator()(redisReply* r) const { freeReplyObject(r); }

std::string Endpoint::str() const {
  if (!unix_socket.empty()) return "redis unix:" + unix_socket;
  return "redis " + host + ":" + std::to_string(port);
}

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

StoreResult<RedisConn> RedisConn::connect(const Endpoint& ep, std::chrono::milliseconds timeout) {
  timeval tv = to_timeval(timeout);
  errno = 0;
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
  return RedisConn(c, ep.str());
}

RedisConn::RedisConn(RedisConn&& o) noexcept
    : c_(std::exchange(o.c_, nullptr)),
      name_(std::move(o.name_)),
      queued_(std::exchange(o.queued_, 0)) {}

RedisConn& RedisConn::operator=(RedisConn&& o) noexcept {
  if (this != &o) {
    if (c_) redisFree(c_);
    c_ = std::exchange(o.c_, nullptr);
    name_ = std::move(o.name_);
    queued_ = std::exchange(o.queued_, 0);
  }
  return *this;
}

RedisConn::~RedisConn() {
  if (c_) redisFree(c_);
}

StoreStatus RedisConn::append(const std::vector<std::string_view>& argv) {
  if (!c_) return StoreError{ErrorKind::kConnectionLost, ENOTCONN, name_ + ": not connected"};
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  ptrs.reserve(argv.size());
  lens.reserve(argv.size());
  for (auto a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  if (redisAppendCommandArgv(c_, static_cast<int>(argv.size()), ptrs.data(), lens.data()) !=
      REDIS_OK)
    return StoreError{ErrorKind::kResource, ENOMEM,
                      name_ + ": queue command: " + std::string(c_->errstr)};
  queued_++;
  return StoreStatus::Ok();
}

std::optional<StoreError> RedisConn::wait(short events, Clock::time_point deadline,
                                          const char* what) {
  // EINTR restarts the wait with what is left, so signals cannot stretch the deadline.
  for (;;) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return StoreError{ErrorKind::kTimeout, ETIMEDOUT, name_ + ": " + what};
    pollfd p{c_->fd, events, 0};
    int n = poll(&p, 1, static_cast<int>(left.count()));
    if (n > 0) {
      // A blocking write would otherwise wait for all its bytes: cap it at what is left.
      if (events & POLLOUT) redisSetTimeout(c_, to_timeval(left));
      return std::nullopt;
    }
    if (n < 0 && errno != EINTR)
      return StoreError{ErrorKind::kConnectionLost, errno_error(name_ + ": " + what + ": poll")};
  }
}

StoreError RedisConn::io_error(const char* what, int saved_errno) const {
  if (c_->err == REDIS_ERR_IO && saved_errno != 0) {
    // A socket timeout reports EAGAIN; say what it means.
    if (saved_errno == EAGAIN)
      return StoreError{ErrorKind::kTimeout, ETIMEDOUT, name_ + ": " + what};
    return StoreError{ErrorKind::kConnectionLost, saved_errno, name_ + ": " + what};
  }
  ErrorKind kind = c_->err == REDIS_ERR_PROTOCOL ? ErrorKind::kProtocol
                   : c_->err == REDIS_ERR_OOM    ? ErrorKind::kResource
                                                 : ErrorKind::kConnectionLost;
  return StoreError{kind, 0, name_ + ": " + what + ": " + std::string(c_->errstr)};
}

// hiredis keeps what it has not written yet in its output buffer (trimmed as writes succeed).
size_t RedisConn::unsent() const { return c_ ? sdslen(c_->obuf) : 0; }

std::optional<StoreError> RedisConn::send(Clock::time_point deadline) {
  if (!c_) return StoreError{ErrorKind::kConnectionLost, ENOTCONN, name_ + ": not connected"};
  SigpipeBlock guard;
  for (int done = 0; !done;) {
    if (auto e = wait(POLLOUT, deadline, "write")) return e;
    errno = 0;
    if (redisBufferWrite(c_, &done) != REDIS_OK) return io_error("write", errno);
  }
  return std::nullopt;
}

Exchange RedisConn::exchange(Clock::time_point deadline) {
  Exchange out;
  size_t want = std::exchange(queued_, 0);
  if (auto e = send(deadline)) {
    out.failure = std::move(*e);
    return out;
  }
  out.replies.reserve(want);
  while (out.replies.size() < want) {
    void* r = nullptr;
    if (redisGetReplyFromReader(c_, &r) != REDIS_OK) {
      out.failure = io_error("read", 0);
      return out;
    }
    if (r) {
      out.replies.emplace_back(static_cast<redisReply*>(r));
      continue;
    }
    if (auto e = wait(POLLIN, deadline, "read")) {
      out.failure = std::move(*e);
      return out;
    }
    errno = 0;
    if (redisBufferRead(c_) != REDIS_OK) {
      out.failure = io_error("read", errno);
      return out;
    }
  }
  return out;
}

}  // namespace rl::cluster
