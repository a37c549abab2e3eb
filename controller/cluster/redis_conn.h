// SPDX-License-Identifier: GPL-2.0-only
// One connection to Redis, owned: plain or TLS on a non-blocking socket, with hiredis for the
// protocol only (its command formatter and reply reader). Commands are queued, then exchanged in
// one round trip in which every wait is bounded by a single deadline, so no call can stall past
// it however the server or the network misbehaves.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/error.h"
#include "cluster/tls.h"
#include "common/fd.h"

struct redisReader;
struct redisReply;

namespace rl::cluster {

struct ReplyDeleter {
  void operator()(redisReply* r) const;
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

struct ReaderDeleter {
  void operator()(redisReader* r) const;
};

struct Endpoint {
  std::string host;
  int port = 6379;
  std::string unix_socket;   // used instead of host:port when set
  std::string addr() const;  // "127.0.0.1:6379", "unix:/run/redis.sock"
  std::string str() const;   // "redis " + addr()
};

// "host:port" (IPv6 as "[addr]:port"): a sentinel's or a cluster node's address.
StoreResult<Endpoint> parse_endpoint(const std::string& text);

// Every reply read before the exchange stopped and, if it stopped early, why. Replies that
// came before a failure still tell something (AUTH refused before the server hung up).
struct Exchange {
  std::vector<Reply> replies;
  std::optional<StoreError> failure;
};

class RedisConn {
 public:
  using Clock = std::chrono::steady_clock;

  // Bounded by `timeout`, TLS handshake included, except for name resolution: give an address,
  // not a host name. With `tls`, the session is TLS and the server's certificate verified.
  static StoreResult<RedisConn> connect(const Endpoint& ep, std::chrono::milliseconds timeout,
                                        const TlsContext* tls = nullptr);

  RedisConn(RedisConn&& o) noexcept = default;
  RedisConn& operator=(RedisConn&& o) noexcept = default;
  RedisConn(const RedisConn&) = delete;
  RedisConn& operator=(const RedisConn&) = delete;
  ~RedisConn() = default;

  // Queues one command; nothing is sent before send() or exchange().
  StoreStatus append(const std::vector<std::string_view>& argv);
  size_t queued() const { return queued_; }
  // Bytes queued and not sent yet.
  size_t unsent() const { return out_.size() - out_sent_; }
  // Sends what is queued without waiting for replies, so that the server starts on the first
  // commands while later ones are still being built. Failure leaves the connection unusable.
  std::optional<StoreError> send(Clock::time_point deadline);
  // Sends every queued command and reads one reply each, all before `deadline`. After a
  // failure the connection is unusable: a command may be half sent.
  Exchange exchange(Clock::time_point deadline);
  const std::string& name() const { return name_; }

 private:
  // What one non-blocking read or write did: moved bytes, must wait for the socket to be
  // readable or writable (TLS may need either for both), or failed.
  struct Io {
    size_t bytes = 0;
    short wait_for = 0;
    std::optional<StoreError> failure;
  };

  RedisConn(UniqueFd fd, Ssl ssl, std::string name);
  std::optional<StoreError> handshake(Clock::time_point deadline);
  std::optional<StoreError> wait(short events, Clock::time_point deadline, const char* what);
  Io write_some();
  Io read_some(char* buf, size_t len);
  Io tls_io(int ret, int saved_errno, const char* what);

  UniqueFd fd_;
  Ssl ssl_;  // null for a plain connection
  std::unique_ptr<redisReader, ReaderDeleter> reader_;
  std::string out_;  // formatted commands; those before out_sent_ are sent
  size_t out_sent_ = 0;
  std::string name_;
  size_t queued_ = 0;
};

}  // namespace rl::cluster
