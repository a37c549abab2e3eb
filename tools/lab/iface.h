// SPDX-License-Identifier: GPL-2.0-only
// What a lab sender needs to know about the interface it writes on, and the check that it is
// running inside a lab namespace rather than the machine's own.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "common/result.h"

namespace rl::lab {

using Mac = std::array<uint8_t, 6>;

// aa:bb:cc:dd:ee:ff
Result<Mac> parse_mac(const std::string& text);

struct Iface {
  int index = 0;
  Mac mac{};
  int mtu = 0;
};

Result<Iface> lookup_iface(const std::string& name);

// Frames must never leave from a namespace with real links: refuse unless this process runs in
// a named lab namespace, /run/netns/rl-* (what `ip netns exec rl-... TOOL` gives).
Status require_lab_namespace(const std::string& tool);

}  // namespace rl::lab
