// SPDX-License-Identifier: GPL-2.0-only
// `rlctl key show KEY [--rule NAME]`: an address's keys in each rule that keys on addresses, one
// per limit of the rule (a rule can stack a per-source and a per-/24 limit, each with keys of its
// own), each key's state read from the pinned key table (like `nft list meter`), with what the
// offender table knows of it, and the runtime override that judges the address under a limit.
#pragma once

#include <vector>

#include "control/protocol.h"
#include "daemon/offenders/offenders.h"
#include "daemon/overrides/override_book.h"
#include "daemon/policy/policy_manager.h"
#include "datapath/datapath.h"

namespace rl::daemon {

control::Json key_show(const Datapath& dp, const std::vector<RuleView>& rules,
                       OffenderLog& offenders, const control::Json& args,
                       const OverrideBook* overrides = nullptr);

}  // namespace rl::daemon
