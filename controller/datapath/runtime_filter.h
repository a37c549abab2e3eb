// SPDX-License-Identifier: GPL-2.0-only
// The runtime lists' filter (abi/rl_abi.h, "Runtime filter"): rld's side. Packets look in the
// runtime tries only for a source whose filter bit is set, so an operator's `rlctl deny` of
// thousands of offenders does not make every other packet walk a deep trie. Pure code over the
// map's mmapped words, with the kernel's grace period injected, so that unit tests can drive it.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "common/prefix.h"
#include "common/result.h"
#include "rl_hash.h"

namespace rl {

class RuntimeFilter {
 public:
  // Returns once no packet that started before the call is still running (rcu_grace_period).
  using GracePeriod = std::function<Status()>;
  // Every runtime entry, hosts and prefixes, of both families.
  using Entries = std::function<Result<std::vector<Prefix>>()>;

  // `words` is the whole map, RL_RUNTIME_FILTER_ENTRIES words.
  RuntimeFilter(std::span<uint64_t> words, GracePeriod grace_period);

  // Before `p` goes into its map, so that a packet never finds an entry whose bit is clear:
  // sets its bit, or rebuilds the filter when p is shorter than its family's min_len; for a
  // host entry (/32, /128), also the family's hosts bit, so that packets ask its host table.
  Status add(const Prefix& p, const Entries& entries);
  // After an entry has left its map. Its bit stays (a false positive costs a lookup) until the
  // bits of removed entries could be half of those set; then the filter is rebuilt, which also
  // raises a min_len that the removed entry held down and clears the hosts bit of a family left
  // without hosts.
  Status removed(const Entries& entries);
  // Builds the filter for `entries` in the half packets do not use and switches to it.
  Status rebuild(const std::vector<Prefix>& entries);
  // Before a host entry goes into the family's hosts' hash (its set of the host table had no way
  // free): packets of the family ask the hash until hash_emptied.
  void hash_in_use(uint32_t fam6);
  // After the family's hosts' hash has lost its last entry.
  void hash_emptied(uint32_t fam6);
  bool hash_may_hold(uint32_t fam6) const { return hashed_ & rl_rtf_hash_bit(fam6); }

 private:
  uint64_t switch_word() const;
  uint64_t* half_words(uint32_t half, uint32_t fam6) const;

  std::span<uint64_t> words_;
  GracePeriod grace_period_;
  uint64_t hashed_ = 0;   // the hash bits (rl_rtf_hash_bit) of the families whose hash is in use
  uint64_t set_ = 0;      // entries whose bits were set since the last rebuild
  uint64_t removed_ = 0;  // of those, removed since
};

}  // namespace rl
