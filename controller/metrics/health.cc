// SPDX-License-Identifier: GPL-2.0-only
#include "metrics/health.h"

namespace rl::metrics {

Health health_of(const Result<Snapshot>& snapshot) {
  if (!snapshot) return {false, "cannot read the data path: " + snapshot.error().str() + "\n"};
  Health h{true, ""};
  for (const auto& i : snapshot->interfaces) {
    if (i.mode == "native" || i.mode == "generic") {
      h.text += i.name + ": " + i.mode + "\n";
    } else {
      h.ok = false;
      h.text += i.name + ": no XDP program attached (" + i.mode + ")\n";
    }
  }
  if (snapshot->interfaces.empty()) h.text += "no interface attached\n";
  if (!snapshot->last_reload_ok)
    h.text += "last policy reload failed; the policy before it is enforced\n";
  h.text = (h.ok ? "ok\n" : "unhealthy\n") + h.text;
  return h;
}

}  // namespace rl::metrics
