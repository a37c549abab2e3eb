// A problem found in a policy file, pinned to where the operator has to fix it.
#pragma once

#include <string>

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

}  // namespace rl::policy
