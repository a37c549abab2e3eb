// SPDX-License-Identifier: GPL-2.0-only
// A pass over a YAML text's parser events before yaml-cpp builds nodes from it. yaml-cpp
// bounds nothing worth relying on: a node costs about 550 bytes, and an alias is one node that
// the schema walk reads as everything it stands for (a "billion laughs" file is a few hundred
// bytes). The scan counts nodes with every alias expanded, and the nesting depth, without
// building anything, and stops at the first bound crossed.
#pragma once

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

namespace rl::policy::detail {

struct ScanLimits {
  size_t max_depth = 0;
  size_t max_nodes = 0;     // for this text; aliases count as the nodes they stand for
  size_t stated_nodes = 0;  // the bound for the whole load, as messages state it (0: max_nodes)
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

struct ScanProblem {
  YAML::Mark mark;
  std::string message;
};

struct ScanResult {
  size_t nodes = 0;  // expanded, as counted against max_nodes
  std::optional<ScanProblem> problem;
};

ScanResult scan_yaml(const std::string& text, const ScanLimits& limits);

}  // namespace rl::policy::detail
