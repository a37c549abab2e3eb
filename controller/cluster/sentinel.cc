// SPDX-License-Identifier: GPL-2.0-only
#include "cluster/sentinel.h"

#include <hiredis/hiredis.h>

#include <charconv>

namespace rl::cluster {

namespace {

std::string text(const redisReply& r) { return std::string(r.str, r.len); }

// One sentinel's answer: the master's endpoint, or why not.
StoreResult<Endpoint> ask(const SentinelOptions& o, const TlsContext* tls, const Endpoint& sentinel,
                          std::chrono::milliseconds timeout) {
  const std::string who = "sentinel " + sentinel.host + ":" + std::to_string(sentinel.port);
  auto conn = RedisConn::connect(sentinel, timeout, tls);
  if (!conn) return conn.error().wrap(who);
  const bool auth = !o.password.empty();
  if (auth) {
    StoreStatus s = o.user.empty() ? conn->append({"AUTH", o.password})
                                   : conn->append({"AUTH", o.user, o.password});
    if (!s) return s.error().wrap(who);
  }
  if (StoreStatus s = conn->append({"SENTINEL", "get-master-addr-by-name", o.master_name}); !s)
    return s.error().wrap(who);
  Exchange ex = conn->exchange(RedisConn::Clock::now() + timeout);
  if (ex.failure) return ex.failure->wrap(who);
  if (auth && ex.replies[0]->type == REDIS_REPLY_ERROR)
    return StoreError{ErrorKind::kAuth, 0, who + ": AUTH: " + text(*ex.replies[0])};
  const redisReply& r = *ex.replies.back();
  if (r.type == REDIS_REPLY_ERROR)
    return StoreError{reply_error_kind(text(r)), 0, who + ": " + text(r)};
  if (r.type == REDIS_REPLY_NIL)
    return StoreError{ErrorKind::kInvalid, 0,
                      who + " monitors no master named '" + o.master_name + "'"};
  if (r.type != REDIS_REPLY_ARRAY || r.elements != 2 || r.element[0]->type != REDIS_REPLY_STRING ||
      r.element[1]->type != REDIS_REPLY_STRING)
    return StoreError{ErrorKind::kProtocol, EPROTO,
                      who + ": not an address for '" + o.master_name + "'"};
  Endpoint master;
  master.host = text(*r.element[0]);
  const std::string port = text(*r.element[1]);
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), master.port);
  if (ec != std::errc{} || end != port.data() + port.size() || master.port < 1 ||
      master.port > 65535)
    return StoreError{ErrorKind::kProtocol, EPROTO, who + ": port '" + port + "'"};
  return master;
}

}  // namespace

StoreResult<Endpoint> resolve_master(const SentinelOptions& o, const TlsContext* tls, size_t first,
                                     std::chrono::milliseconds timeout, size_t tries) {
  if (o.sentinels.empty()) return StoreError{ErrorKind::kInvalid, EINVAL, "no sentinels"};
  StoreError last;
  for (size_t i = 0; i < o.sentinels.size() && i < tries; i++) {
    auto master = ask(o, tls, o.sentinels[(first + i) % o.sentinels.size()], timeout);
    if (master) return master;
    last = master.error();
  }
  return last.wrap("no sentinel gave the master of '" + o.master_name + "'");
}

}  // namespace rl::cluster
