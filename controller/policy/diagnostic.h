// SPDX-License-Identifier: GPL-2.0-only
// A problem found in a policy file, pinned to where the operator has to fix it.
#pragma once

#include <string>
#include <string_view>

#include "policy/model.h"

namespace rl::policy {

struct Diagnostic {
  SourceLocation where;
  std::string message;

  // "file:line:col: error: message", the format editors and CI logs turn into links. A
  // problem with a whole file (it can't be read) has no line: "file: error: message".
  std::string str() const {
    std::string at = where.line > 0 ? where.str() : where.file;
    return at + ": error: " + message;
  }
};

// Text from a policy file (or a path) made safe to show: control characters and every byte
// outside printable ASCII become \xNN, so a message is valid UTF-8 and one line whatever the
// file holds, and it is cut at `max` characters. A file that is not a policy at all (a binary,
// another program's secrets behind a symlink) cannot fill a log through its errors.
inline std::string printable(std::string_view text, size_t max = 240) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace rl::policy
