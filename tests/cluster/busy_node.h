// SPDX-License-Identifier: GPL-2.0-only
// The keys of a busy node, as the Redis benchmarks (scale_test.cc, cost_test.cc) sync them.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "cluster/redis_store.h"
#include "cluster/sync_memory.h"

namespace rl::testing {

// How many keys a busy node syncs in one pass.
inline constexpr int kBusyKeys = 100'000;

// Key i: a source address and port, as a per-source-and-port rule keys it.
inline std::string busy_key(int i) {
  return "198.18." + std::to_string(i / 256 % 256) + "." + std::to_string(i % 256) + ":" +
         std::to_string(i / 65536);
}

// Key i's delta in a sync every 100 ms: 1 to 50, 200 for one key in a hundred.
inline uint64_t busy_delta(int i) { return i % 100 == 0 ? 200 : 1 + i % 50; }

// Key i's limit per 1 s window less the headroom a node of three takes off (docs/cluster.md),
// so limits differ from key to key as rld's do.
inline uint64_t busy_limit(int i) { return 1000 - std::min<uint64_t>(500, 3 * busy_delta(i)); }

// Store options for syncs of 100,000 keys: buffers kept mapped, as rld keeps them, and a
// command timeout well past the benchmarks' 5 s bound.
inline cluster::RedisOptions bulk_options(cluster::RedisOptions o) {
  cluster::keep_sync_buffers_mapped();
  o.command_timeout = std::chrono::seconds(10);
  return o;
}

}  // namespace rl::testing
