// SPDX-License-Identifier: GPL-2.0-only
// A minimal HTTP/1.0 GET over a plain socket, loopback only: enough to read /metrics and the
// Prometheus query API without adding an HTTP client dependency to the tests.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "common/result.h"

namespace rl::testing {

struct HttpResponse {
  int status = 0;
  std::string headers;
  std::string body;
};

// `target` is the request target ("/metrics?x=y"), already percent-encoded.
Result<HttpResponse> http_get(uint16_t port, const std::string& target,
                              std::chrono::milliseconds timeout = std::chrono::seconds(5));

std::string url_encode(const std::string& s);

}  // namespace rl::testing
