// SPDX-License-Identifier: GPL-2.0-only
// Waiting at start for configured interfaces that do not exist yet (a VLAN, a bond, a NIC whose
// driver loads late), with a bound, as systemd-networkd-wait-online does: rld watches rtnetlink's
// link events and looks again at each one, so it attaches as soon as the last one appears.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace rl::daemon {

// The names in `names` that are no interface of this network namespace now.
std::vector<std::string> missing_links(const std::vector<std::string>& names);

// Waits until every name in `names` is an interface, or `bound` passed. `tick` runs at least
// once a second with the names still missing (for the watchdog and systemd's STATUS=). Returns
// the names still missing: empty when all appeared.
std::vector<std::string> wait_for_links(
    const std::vector<std::string>& names, std::chrono::milliseconds bound,
    const std::function<void(const std::vector<std::string>& missing)>& tick);

// "eth1", "eth1 and bond0", "eth1, bond0 and vlan7": names for a message.
std::string name_list(const std::vector<std::string>& names);

}  // namespace rl::daemon
