// SPDX-License-Identifier: GPL-2.0-only
// `rlctl key show KEY [--rule NAME]`: one key's state in each rule that keys on sources, read
// from the pinned key table (like `nft list meter`), with what the offender table knows of it.
#pragma once

#include <vector>

#include "control/protocol.h"
#include "daemon/offenders.h"
#include "daemon/policy_manager.h"
#include "datapath/datapath.h"

namespace rl::daemon {

control::Json key_show(const Datapath& dp, const std::vector<RuleView>& rules,
                       OffenderLog& offenders, const control::Json& args);

}  // namespace rl::daemon
