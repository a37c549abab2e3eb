// SPDX-License-Identifier: GPL-2.0-only
// Redis Sentinel's side of a connection: which server is the master of a named set now. The
// store asks before every connection it opens, so a failover is followed by the reconnection
// its first failed call causes, without a restart.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "cluster/error.h"
#include "cluster/redis_conn.h"
#include "cluster/tls.h"

namespace rl::cluster {

struct SentinelOptions {
  std::vector<Endpoint> sentinels;  // addresses, not names: resolution is not bounded
  std::string master_name;
  std::string user;      // the sentinels' own ACL user, "" for the default
  std::string password;  // the sentinels' own AUTH, not the master's
};

// Asks the sentinels in turn, starting at `first` (callers rotate it so that a dead sentinel is
// not always asked first), for the master's address. Each sentinel gets at most `timeout`.
// Fails with the last sentinel's error when none answers with an address.
// `tries` bounds how many are asked (a periodic check asks one).
// With `tls`, the sentinels are asked over TLS.
StoreResult<Endpoint> resolve_master(const SentinelOptions& o, const TlsContext* tls, size_t first,
                                     std::chrono::milliseconds timeout, size_t tries = SIZE_MAX);

}  // namespace rl::cluster
