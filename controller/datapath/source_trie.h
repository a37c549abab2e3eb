// SPDX-License-Identifier: GPL-2.0-only
// The source tries' updates (rl_abi.h, "Source LPM tries"). Each entry answers for both
// generations, one half each, so a rule set's sources are held once and a new rule set writes
// only what it changes:
//
//   1. before the switch, the inactive generation's half of every entry whose answer changes,
//      and the entries the new rule set adds, whose active half answers as the trie did before
//      they came (their closest covering entry's);
//   2. the switch;
//   3. after the grace period (no packet reads the old generation any more), the other halves
//      brought level, and the entries the new rule set does not hold removed.
//
// Why each step leaves every generation whole: an entry answers what the longest prefix of its
// generation covering it answers. An entry added in step 1 changes no answer of the active
// generation, which was its covering entry's already. An entry removed in step 3 is covered by
// the next one up, whose answer for the new generation is the same: any prefix of the new rule
// set between the two would itself be an entry. The kernel replaces an entry whole (a new
// node, under RCU), so a packet reads one half as written either before or after.
#pragma once

#include <vector>

#include "common/prefix.h"
#include "compiler/compiled.h"
#include "rl_abi.h"

namespace rl {

struct SourceTrieEntry {
  Prefix prefix;
  rl_src_pair value{};
};

struct SourceTriePlan {
  std::vector<SourceTrieEntry> before;  // step 1
  std::vector<SourceTrieEntry> after;   // step 3: both halves of entries that stay
  std::vector<Prefix> remove;           // step 3
};

// What takes the tries from `current` (every entry they hold, sorted by prefix) to `next` (the
// compiler's flattened entries, sorted, each family's /0 included) in generation `next_gen`.
// An entry that nothing covers (the tries were empty: a data path that never held a rule set,
// whose generations are all zeros) answers {0, 0} for the active generation.
// `active_reads[fam6]`: whether packets of the generation in force ever ask the family's trie
// (its config's min_len is not 0). When they do not, the active halves are never read, so the
// plan writes both halves in step 1 and has nothing to level in step 3: a first rule set, or the
// first with sources of a family, costs one write per entry instead of two.
SourceTriePlan plan_source_trie(const std::vector<SourceTrieEntry>& current,
                                const std::vector<compiler::SourceEntry>& next, uint32_t next_gen,
                                const bool active_reads[2]);

// The tries' entries once a plan for `next` is carried out: each prefix answering the same in
// both generations.
std::vector<SourceTrieEntry> settled_source_trie(const std::vector<compiler::SourceEntry>& next);

}  // namespace rl
