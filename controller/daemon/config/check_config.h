// SPDX-License-Identifier: GPL-2.0-only
// `rld --check-config`: everything rld would check before touching the kernel, without
// touching it (no program loaded, nothing attached, pinned or mounted).
#pragma once

#include <string>
#include <vector>

#include "daemon/config/config.h"

namespace rl::daemon {

struct ConfigCheck {
  std::vector<std::string> errors;    // file:line:col: error: ... for each problem
  std::vector<std::string> warnings;  // valid, but likely not what the operator meant
  std::string summary;  // the settings rld would run with and the policy it would apply
  bool ok() const { return errors.empty(); }
};

// Checks the (already loaded and validated) settings' policy directory: every policy file as
// rld loads it, merged, then compiled. With `connect`, also tries the configured Redis (its
// sentinels or cluster nodes) with the configured credentials and TLS (cluster::Store::check).
ConfigCheck check_config(const Config& cfg, bool connect = false);

// What rld and --check-config say when no interface is configured: a valid state (the package
// ships it), in which rld protects nothing but the interfaces an earlier run left attached.
inline constexpr char kNoInterfaceWarning[] =
    "no interface configured (interfaces: is empty and no --interface): rld protects no "
    "interface until one is set in rld.yaml or attached with rlctl attach";

}  // namespace rl::daemon
