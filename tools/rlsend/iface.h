// What rlsend needs to know about the interface it writes on, and the check that it is running
// inside a lab namespace rather than the machine's own.
#pragma once

#include <string>

#include "common/result.h"
#include "options.h"

namespace rl::rlsend {

struct Iface {
  int index = 0;
  Mac mac{};
  int mtu = 0;
};

Result<Iface> lookup_iface(const std::string& name);

// Frames must never leave from a namespace with real links: refuse unless this process runs in
// a named lab namespace, /run/netns/rl-* (what `ip netns exec rl-... rlsend` gives).
Status require_lab_namespace();

}  // namespace rl::rlsend
