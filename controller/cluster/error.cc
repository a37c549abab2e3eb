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
  std::string_view code = reply.substr(0, reply.find(' '));
  if (code == "NOSCRIPT") return ErrorKind::kNoScript;
  if (code == "NOAUTH" || code == "WRONGPASS") return ErrorKind::kAuth;
  return ErrorKind::kServer;
}

}  // namespace rl::cluster
