// SPDX-License-Identifier: GPL-2.0-only
// rld.yaml's cluster: section as the Redis store it names: one server, Sentinel or a Redis
// Cluster. rld's start and rld --check-config make it the same way, so a configuration the
// check passes is one rld can start with.
#pragma once

#include <memory>

#include "cluster/store.h"
#include "common/result.h"
#include "daemon/config/config.h"

namespace rl::daemon {

// The store for cfg's Redis, made without connecting (rld starts while Redis is down); an
// error names the setting that is wrong.
Result<std::unique_ptr<cluster::Store>> make_redis_store(const Config& cfg);

// "standalone", "sentinel" or "cluster".
const char* redis_topology(const Config& cfg);

}  // namespace rl::daemon
