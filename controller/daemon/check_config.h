// SPDX-License-Identifier: GPL-2.0-only
// `rld --check-config`: everything rld would check before touching the kernel, without
// touching it (no program loaded, nothing attached, pinned or mounted).
#pragma once

#include <string>
#include <vector>

#include "daemon/config.h"

namespace rl::daemon {

struct ConfigCheck {
  std::vector<std::string> errors;  // file:line:col: error: ... for each problem
  std::string summary;              // the settings rld would run with and the policy it would apply
  bool ok() const { return errors.empty(); }
};

// Checks the (already loaded and validated) settings' policy directory: every policy file as
// rld loads it, merged, then compiled.
ConfigCheck check_config(const Config& cfg);

}  // namespace rl::daemon
