// SPDX-License-Identifier: GPL-2.0-only
// The source tries in the kernel, updated in the steps of datapath/source_trie.h. What they hold
// is mirrored here, so that a new rule set costs only the entries it changes; the mirror is read
// back from the kernel when it is not known (a restarted rld, a write that failed).
#pragma once

#include <vector>

#include "compiler/compiled.h"
#include "datapath/map.h"
#include "datapath/source_trie.h"

struct rl_xdp;

namespace rl {

class BpfSourceTries {
 public:
  explicit BpfSourceTries(const rl_xdp& skel);

  // Step 1 for `next` in generation `next_gen`; the plan's step 3 waits for after_switch().
  // `active` is the config of the generation in force, which says whether its packets ask the
  // tries (plan_source_trie).
  Status before_switch(const std::vector<compiler::SourceEntry>& next, uint32_t next_gen,
                       const rl_gen_config& active);
  // Step 3, once no packet reads the generation switched away from. A failure here leaves the
  // new rule set whole (only inactive halves and covered entries are left behind), so it is not
  // the rule set's failure: the next update reads the tries back and finishes the work.
  Status after_switch(const std::vector<compiler::SourceEntry>& next);

  // Entries in the tries as last known (both families).
  size_t entries() const { return mirror_.size(); }

 private:
  Status read_back();
  Status write(const std::vector<SourceTrieEntry>& entries) const;
  Status remove(const std::vector<Prefix>& prefixes) const;

  MapRef<rl_src4_key, rl_src_pair> v4_;
  MapRef<rl_src6_key, rl_src_pair> v6_;
  std::vector<SourceTrieEntry> mirror_;
  bool known_ = false;
  SourceTriePlan pending_;
};

}  // namespace rl
