// SPDX-License-Identifier: GPL-2.0-only
// A private CA for TLS tests, made with the openssl command in a temp dir of its own: a server
// certificate for 127.0.0.1 and redis.test (valid for client use too, as Redis presents it to
// its replicas and cluster peers), a client certificate, and a second CA that signed neither.
#pragma once

#include <optional>
#include <string>

#include "common/result.h"
#include "files.h"

namespace rl::testing {

struct TestPki {
  std::optional<TempDir> dir;
  std::string ca;  // PEM files, all in dir
  std::string server_cert, server_key;
  std::string client_cert, client_key;
  std::string other_ca;

  static Result<TestPki> create();
};

}  // namespace rl::testing
