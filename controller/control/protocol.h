// SPDX-License-Identifier: GPL-2.0-only
// rld's control protocol: one JSON request and one JSON response per connection on a Unix
// socket (mode 0600, root), each a single line.
//   -> {"v":1,"cmd":"status","args":{}}
//   <- {"v":1,"ok":true,"data":{...}}   or   {"v":1,"ok":false,"error":"...","errors":[...]}
// A client and a daemon of different versions refuse each other with a clear error.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rl::control {

constexpr int kProtocolVersion = 1;
constexpr size_t kMaxMessageBytes = 16 << 20;  // policy files travel in requests

using Json = nlohmann::json;

// The one way rl turns JSON into text: bytes that are not UTF-8 (a policy file's contents in an
// error, a file name) become U+FFFD instead of making nlohmann throw and the process abort.
inline std::string to_text(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

inline Json request(const std::string& cmd, Json args = Json::object()) {
  return Json{{"v", kProtocolVersion}, {"cmd", cmd}, {"args", std::move(args)}};
}

inline Json ok(Json data = Json::object()) {
  return Json{{"v", kProtocolVersion}, {"ok", true}, {"data", std::move(data)}};
}

inline Json fail(const std::string& error, Json errors = Json::array()) {
  return Json{
      {"v", kProtocolVersion}, {"ok", false}, {"error", error}, {"errors", std::move(errors)}};
}

}  // namespace rl::control
