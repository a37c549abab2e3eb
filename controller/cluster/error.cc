// SPDX-License-Identifier: GPL-2.0-only
#include "cluster/error.h"

namespace rl::cluster {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kUnreachable:
      return "unreachable";
    case ErrorKind::kTimeout:
      return "timeout";
    case ErrorKind::kConnectionLost:
      return "connection lost";
    case ErrorKind::kNoScript:
      return "no script";
    case ErrorKind::kAuth:
      return "auth";
    case ErrorKind::kPermission:
      return "permission";
    case ErrorKind::kReadOnly:
      return "read-only";
    case ErrorKind::kProtocol:
      return "protocol";
    case ErrorKind::kServer:
      return "server";
    case ErrorKind::kInvalid:
      return "invalid";
    case ErrorKind::kResource:
      return "resource";
  }
  return "unknown";
}

ErrorKind reply_error_kind(std::string_view reply) {
  // Redis 7.0 reports a command the ACL refuses inside a script without the NOPERM code.
  if (reply.rfind("ERR The user executing the script can't run this command", 0) == 0)
    return ErrorKind::kPermission;
  std::string_view code = reply.substr(0, reply.find(' '));
  if (code == "NOSCRIPT") return ErrorKind::kNoScript;
  if (code == "NOAUTH" || code == "WRONGPASS") return ErrorKind::kAuth;
  if (code == "NOPERM") return ErrorKind::kPermission;
  if (code == "READONLY") return ErrorKind::kReadOnly;
  return ErrorKind::kServer;
}

}  // namespace rl::cluster
