// SPDX-License-Identifier: GPL-2.0-only
#include "metrics/health.h"

namespace rl::metrics {

Health health_of(const Result<Snapshot>& snapshot) {
  if (!snapshot) return {false, "cannot read the data path: " + snapshot.error().str() + "\n"};
  // What readiness judges is shown, not judged: a liveness failure restarts rld, which would
  // neither attach a program again nor fix a policy.
  Health h{true, "ok\n"};
  for (const auto& i : snapshot->interfaces) h.text += i.name + ": " + i.mode + "\n";
  if (snapshot->interfaces.empty()) h.text += "no interface attached\n";
  for (const auto& why : snapshot->not_ready) h.text += "not ready: " + why + "\n";
  return h;
}

Health readiness_of(const Result<Snapshot>& snapshot) {
  if (!snapshot)
    return {false, "not ready\ncannot read the data path: " + snapshot.error().str() + "\n"};
  if (snapshot->not_ready.empty()) return {true, "ready\n" + snapshot->ready_summary + "\n"};
  Health h{false, "not ready\n"};
  for (const auto& why : snapshot->not_ready) h.text += why + "\n";
  return h;
}

}  // namespace rl::metrics
