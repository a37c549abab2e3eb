// SPDX-License-Identifier: GPL-2.0-only
// Runtime overrides (rlctl override) in the kernel's maps: per family the trie of (limit id,
// source prefix), and per stats slot the count of entries that tells a rule's packets to ask it
// (bpf/lib/override.h). rld is the only writer, so a mirror of the keys in memory answers which
// entries exist and how many each family and slot holds without listing the tries.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "datapath/datapath.h"

struct rl_xdp;

namespace rl {

class BpfOverrides final : public Overrides {
 public:
  // The mirror and the counts from one listing of the tries (pinned ones may hold entries).
  static Result<std::unique_ptr<BpfOverrides>> open(const rl_xdp& skel);

  Status override_set(const OverrideEntry& e) override;
  Result<bool> override_remove(uint32_t limit_id, const Prefix& prefix) override;
  Result<std::vector<OverrideEntry>> override_list() const override;

  // The entries of the data path of ABI `old_abi` pinned under `root`, which this one replaces,
  // read but not written: their limit ids are the old policy's, so rld compiles them again
  // against the policy it applies (carried()). A layout whose tries this build cannot read
  // sets carry_error().
  Status carry_from(const std::string& root, uint32_t old_abi);
  const std::vector<OverrideEntry>& carried() const { return carried_; }
  const std::string& carry_error() const { return carry_error_; }

 private:
  explicit BpfOverrides(const rl_xdp& skel) : skel_(&skel) {}
  Status load();
  // Moves a stats slot's count by `delta` and writes it to rl_override_slots.
  Status count(uint32_t slot, int delta);

  using Key = std::pair<uint32_t, Prefix>;  // limit id, prefix
  const rl_xdp* skel_;
  std::map<Key, uint32_t> mirror_;  // -> the entry's stats slot
  std::array<size_t, 2> per_family_{};
  std::vector<uint32_t> slot_counts_;
  std::vector<OverrideEntry> carried_;
  std::string carry_error_;
};

}  // namespace rl
