// SPDX-License-Identifier: GPL-2.0-only
#include "cluster/error.h"

#include <charconv>

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
    case ErrorKind::kTls:
      return "tls";
    case ErrorKind::kPermission:
      return "permission";
    case ErrorKind::kReadOnly:
      return "read-only";
    case ErrorKind::kRedirect:
      return "redirect";
    case ErrorKind::kClusterDown:
      return "cluster down";
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

std::optional<ScriptRefusal> script_refusal(std::string_view reply) {
  if (reply.rfind("ERR The user executing the script can't run this command", 0) != 0)
    return std::nullopt;
  constexpr std::string_view kScript = "script: ", kLine = "@user_script:";
  ScriptRefusal where;
  size_t s = reply.find(kScript), l = reply.find(kLine);
  if (s == std::string_view::npos || l == std::string_view::npos) return where;
  std::string_view sha1 = reply.substr(s + kScript.size());
  where.sha1 = sha1.substr(0, sha1.find(','));
  std::string_view line = reply.substr(l + kLine.size());
  std::from_chars(line.data(), line.data() + line.size(), where.line);
  return where;
}

ErrorKind reply_error_kind(std::string_view reply) {
  if (script_refusal(reply)) return ErrorKind::kPermission;
  std::string_view code = reply.substr(0, reply.find(' '));
  if (code == "NOSCRIPT") return ErrorKind::kNoScript;
  if (code == "NOAUTH" || code == "WRONGPASS") return ErrorKind::kAuth;
  if (code == "NOPERM") return ErrorKind::kPermission;
  if (code == "READONLY") return ErrorKind::kReadOnly;
  if (code == "MOVED" || code == "ASK") return ErrorKind::kRedirect;
  if (code == "CLUSTERDOWN" || code == "TRYAGAIN") return ErrorKind::kClusterDown;
  return ErrorKind::kServer;
}

}  // namespace rl::cluster
