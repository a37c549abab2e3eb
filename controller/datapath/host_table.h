// SPDX-License-Identifier: GPL-2.0-only
// The runtime lists' host table (abi/rl_abi.h, "Host table"): rld's side. A host's entry (/32,
// /128) goes into a way of its set, in the one line a packet from it reads. Pure code over the
// two maps' mmapped sets, so that unit tests can drive it; rld's main loop is its only writer,
// and the metrics thread may read it meanwhile.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>

#include "common/prefix.h"
#include "datapath/datapath.h"
#include "rl_abi.h"

namespace rl {

class HostTable {
 public:
  // `v4` and `v6` are the whole maps (RL_HOST_SETS_V4, RL_HOST_SETS_V6 sets); `seed` the key
  // hash's, which packets hash a host's set with.
  HostTable(std::span<rl_host_set4> v4, std::span<rl_host_set6> v6, uint64_t seed);

  enum class Put { kAdded, kChanged, kFull };
  // Adds the host's entry, or changes the one it has, in one store of its way's word. kFull: its
  // set has no way free, and the entry is not here.
  Put put(const Address& host, uint32_t flags, uint64_t expires_ns);
  // Whether the host had an entry here, now gone.
  bool erase(const Address& host);
  // The host's entry, expired or not. The expiry comes back rounded up to the table's unit
  // (2^RL_HOST_EXPIRY_SHIFT ns), as packets apply it.
  std::optional<RuntimeEntry> find(const Address& host) const;
  void each(const std::function<void(const RuntimeEntry&)>& fn) const;

 private:
  std::span<rl_host_set4> v4_;
  std::span<rl_host_set6> v6_;
  uint64_t seed_;
};

}  // namespace rl
