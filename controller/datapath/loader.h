// SPDX-License-Identifier: GPL-2.0-only
// Opening and loading the rl_xdp skeleton, and its maps' pins: maps a previous rld of the same
// layout pinned are adopted with their state; another layout's are left to its program until
// every interface runs this one (take_over_pins), and fresh pins can be withdrawn.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/fd.h"
#include "common/result.h"
#include "rl_abi.h"

struct rl_xdp;  // generated skeleton
struct bpf_map;

namespace rl {

struct LoadOptions {
  uint32_t key_capacity = RL_DEFAULT_KEY_CAPACITY;  // rounded up to a power of two
  // bpffs directory for the maps (see datapath/pins.h); empty: nothing is pinned. Maps already
  // pinned there are adopted with their state, and their key capacity wins over key_capacity.
  std::string pin_root;
  uint32_t cluster_keys = RL_CLUSTER_KEYS;  // keys of cluster rules counted between syncs
  // Rules per generation the maps hold (rld.yaml max_rules): a multiple of 64 from 64 to
  // RL_MAX_RULES_CAP. Pins of another size are replaced, as another layout's.
  uint32_t max_rules = RL_DEFAULT_MAX_RULES;
  bool trace_decisions = false;   // tests: record every decision (see DatapathTestHooks)
  uint32_t bench_src_spread = 0;  // benchmarks: vary IPv6 sources over this many addresses
  // Sample 1 in 2^k packets of matched rules into rl_samples (bpf/lib/sample.h); 0: off.
  uint32_t traffic_sample_shift = 0;
  // SYN cookies when the kernel offers what they need; false loads the program as on a kernel
  // without it (tests).
  bool syn_cookies = true;
  // Packets use every set of the key table from the start, instead of 2^RL_KEY_SETS_MIN_LOG2
  // sets that rld doubles as keys arrive (grow_key_table).
  bool key_table_full = false;
};

struct SkeletonDeleter {
  void operator()(rl_xdp* s) const;
};
using Skeleton = std::unique_ptr<rl_xdp, SkeletonDeleter>;

// The loaded program and what loading chose.
struct LoadedSkeleton {
  Skeleton skel;
  uint32_t key_sets = 0;   // the key table's capacity, in sets
  uint64_t hash_seed = 0;  // the key hash's secret: the adopted table's, or a new one
  bool adopted = false;    // pinned maps of this layout taken over
  bool syn_cookies = false;
  uint32_t replaced_abi = 0;  // the ABI of pinned maps of another layout, left to their program
};

// Why `max_rules` cannot size the data path, or "".
std::string max_rules_problem(uint32_t max_rules);

// Opens the skeleton, adopts or sets aside pinned maps, sizes the maps and runs the verifier.
Result<LoadedSkeleton> load_skeleton(const LoadOptions& opts);

// Why the map pinned under `root` cannot be reused as `m` (libbpf would refuse to load it), or
// "". A map the loader sizes with the key table (`sized_by_keys`) is compared in shape only.
std::string pinned_map_mismatch(const std::string& root, const bpf_map* m, bool sized_by_keys);

// The map pinned under `root` by a data path this one replaces, opened only if its shape is
// `like`'s, so that it can be read as this build's own; EPROTO when it is not pinned or has
// another shape (what the carry of runtime state reports and goes on without).
Result<UniqueFd> open_replaced_map(const std::string& root, const bpf_map* like);

// Pins every map under `root` in place of the ones another layout left there.
Status take_over_pins(const rl_xdp& skel, const std::string& root);
// Unpins every map that has a pin path.
Status unpin_maps(const rl_xdp& skel);

}  // namespace rl
