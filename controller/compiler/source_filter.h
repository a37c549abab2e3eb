// SPDX-License-Identifier: GPL-2.0-only
// The hash a source filter gives an address (rl_abi.h, RL_FILTER_BITS_LOG2): rl_filter_hash of
// its prefix of the filter's length, for the policy's filter (source_entries.cc) and the runtime
// lists' (datapath/runtime_filter.cc) alike. The XDP program's side is rl_source_prefix_hash
// (bpf/lib/classify.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "common/prefix.h"
#include "rl_hash.h"

namespace rl::compiler {

inline uint32_t source_filter_hash(const Address& a, uint32_t len) {
  const Prefix at = Prefix::of(
      a, static_cast<uint8_t>(std::min<uint32_t>(len, static_cast<uint32_t>(a.width()))));
  uint32_t words[4];
  std::memcpy(words, at.addr.bytes.data(), sizeof(words));
  return rl_filter_hash(words, at.addr.family);
}

}  // namespace rl::compiler
