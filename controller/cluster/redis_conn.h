// SPDX-License-Identifier: GPL-2.0-only
// One connection to Redis through hiredis, owned. Commands are queued, then exchanged in one
// round trip in which every wait is bounded by a single deadline, so no call can stall past it
// however the server or the network misbehaves (hiredis' own socket timeouts bound each
// syscall, not the call).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/error.h"

struct redisContext;
struct redisReply;

namespace rl::cluster {

struct ReplyDeleter {
  void operator()(redisReply* r) const;
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

struct Endpoint {
  std::string host;
  int port = 6379;
  std::string unix_socket;  // used instead of host:port when set
  std::string str() const;  // "redis 127.0.0.1:6379", "redis unix:/run/redis.sock"
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

  // Bounded by `timeout` except for name resolution: give an address, not a host name.
  static StoreResult<RedisConn> connect(const Endpoint& ep, std::chrono::milliseconds timeout);

  RedisConn(RedisConn&& o) noexcept;
  RedisConn& operator=(RedisConn&& o) noexcept;
  RedisConn(const RedisConn&) = delete;
  RedisConn& operator=(const RedisConn&) = delete;
  ~RedisConn();

  // Queues one command; nothing is sent before send() or exchange().
  StoreStatus append(const std::vector<std::string_view>& argv);
  size_t queued() const { return queued_; }
  // Bytes queued and not sent yet.
  size_t unsent() const;
  // Sends what is queued without waiting for replies, so that the server starts on the first
  // commands while later ones are still being built. Failure leaves the connection unusable.
  std::optional<StoreError> send(Clock::time_point deadline);
  // Sends every queued command and reads one reply each, all before `deadline`. After a
  // failure the connection is unusable: a command may be half sent.
  Exchange exchange(Clock::time_point deadline);
  const std::string& name() const { return name_; }

 private:
  RedisConn(redisContext* c, std::string name) : c_(c), name_(std::move(name)) {}
  std::optional<StoreError> wait(short events, Clock::time_point deadline, const char* what);
  StoreError io_error(const char* what, int saved_errno) const;

  redisContext* c_ = nullptr;
  std::string name_;
  size_t queued_ = 0;
};

}  // namespace rl::cluster
