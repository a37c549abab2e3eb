// SPDX-License-Identifier: GPL-2.0-only
// What the policy tests share: durations in the policy model's nanoseconds, and a load's
// errors as one text for a failed assertion's message.
#pragma once

#include <cstdint>
#include <string>

#include "policy/loader.h"

namespace rl::policy::test_util {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kSec = 1'000 * kMs;
constexpr uint64_t kMin = 60 * kSec;
constexpr uint64_t kHour = 60 * kMin;
constexpr uint64_t kDay = 24 * kHour;

inline std::string all_errors(const LoadResult& r) {
  std::string out;
  for (const auto& e : r.errors) out += e.str() + "\n";
  return out;
}

}  // namespace rl::policy::test_util
