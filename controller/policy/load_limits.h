// SPDX-License-Identifier: GPL-2.0-only
// The bounds of one policy load (every file of it together), so that no policy file can hang
// or balloon rld or rlctl. docs/policies.md states them for operators.
#pragma once

#include <chrono>
#include <cstddef>

#include "rl_abi.h"

namespace rl::policy {

class SetFileCache;

struct LoadLimits {
  // A policy nests 6 levels (rules, a rule, match, sources, an entry); the rest is slack.
  size_t max_depth = 32;
  // YAML nodes in all files together, each alias counted as the nodes it stands for.
  // yaml-cpp takes about 550 bytes and 3 us per node, so this bounds a load's parsed trees
  // to about 170 MB and 1 s, and still allows sets as large as the data path holds (131,072
  // prefixes per family).
  size_t max_nodes = 300'000;
  // Source sets read from files (policy/set_files.h): a file's size, the files of one set's
  // directory, and the prefixes of every set file together. A million IPv6 prefixes written
  // out in full take about 45 MB; the prefix bound holds the largest set capacity rld.yaml can
  // give both families.
  size_t max_set_file_bytes = size_t{256} << 20;
  size_t max_set_dir_files = 4096;
  size_t max_set_prefixes = size_t{1} << 24;
  // Rules in all files together: the data path's rule table (rld.yaml max_rules).
  size_t max_rules = RL_DEFAULT_MAX_RULES;
  // Checked while scanning and between steps; past it the load stops with an error. rld also
  // stops waiting at its own deadline (reload_timeout_ms).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();

  bool expired() const { return std::chrono::steady_clock::now() > deadline; }

  // Not a bound: where a load finds set files it read before and that did not change since
  // (policy/set_files.h); none: every file is read. Used by one load at a time.
  SetFileCache* set_cache = nullptr;
};

}  // namespace rl::policy
