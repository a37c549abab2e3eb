// SPDX-License-Identifier: GPL-2.0-only
// A store call's error and its kind. The kind is set where the error is produced (a socket
// timeout, a server that hung up, an error reply's prefix), so that callers decide on it and
// never on the message, which is for people.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/result.h"

namespace rl::cluster {

enum class ErrorKind : uint8_t {
  kUnreachable,     // no connection: refused, no route, or backing off after a failure
  kTimeout,         // no answer before the deadline (connect or command)
  kConnectionLost,  // the connection failed mid-call: the server hung up, a socket error
  kNoScript,        // NOSCRIPT: the server does not have the script
  kAuth,            // NOAUTH, WRONGPASS, or AUTH refused
  kTls,             // the TLS handshake failed: a certificate refused (the server's or ours)
  kPermission,      // NOPERM: the ACL user may not run a command or touch a key
  kReadOnly,        // READONLY, or ROLE not master: the server is a replica (a failover)
  kRedirect,        // MOVED or ASK: a Redis Cluster node does not serve the key's slot
  kClusterDown,     // CLUSTERDOWN or TRYAGAIN: the cluster cannot serve the slot just now
  kProtocol,        // a reply that is not what the command returns
  kServer,          // any other error reply
  kInvalid,         // options or arguments the store refuses before sending anything
  kResource,        // out of memory
};

const char* to_string(ErrorKind kind);

// The kind of an error reply, from its first word (the Redis error code).
ErrorKind reply_error_kind(std::string_view reply);

// A command the ACL refused inside a script, in Redis 7.0's words: no NOPERM code and no
// command name, only where in the script ("script: SHA1, on @user_script:LINE."). The SHA1 is
// empty and the line 0 when the reply does not say where.
struct ScriptRefusal {
  std::string sha1;
  size_t line = 0;
};
std::optional<ScriptRefusal> script_refusal(std::string_view reply);

struct StoreError : Error {
  ErrorKind kind = ErrorKind::kServer;

  StoreError() = default;
  StoreError(ErrorKind k, Error e) : Error(std::move(e)), kind(k) {}
  StoreError(ErrorKind k, int e, std::string message) : Error{e, std::move(message)}, kind(k) {}
  StoreError wrap(const std::string& context) const { return {kind, Error::wrap(context)}; }
};

template <typename T>
using StoreResult = Result<T, StoreError>;

using StoreStatus = BasicStatus<StoreError>;

}  // namespace rl::cluster
