// SPDX-License-Identifier: GPL-2.0-only
// Whether the data path can enforce a limit as written: its counters are fixed-width, so some
// rates and bursts are too fast, too slow or too large to represent.
#pragma once

#include <string>
#include <vector>

#include "policy/model.h"

namespace rl::policy::detail {

struct LimitProblem {
  enum class Field { kRate, kBurst };
  Field field;
  std::string message;
};

// `limit.burst` is the effective burst (the default already applied for token_bucket);
// `burst_given` says whether the operator wrote it, so that problems with a default burst
// point at the rate that produced it.
std::vector<LimitProblem> check_limit(const Limit& limit, bool burst_given);

}  // namespace rl::policy::detail
