// SPDX-License-Identifier: GPL-2.0-only
// Whether rld's pins can outlive it. They do on the host's bpffs; under `ip netns exec` (which
// gives the command a mount namespace with a fresh /sys) or in a container without the host's
// /sys/fs/bpf, the pin root lies on a bpffs private to rld's mount namespace: the pins, and
// the links they hold, go away with the last process in it, and another rld (or rld --cleanup)
// in another namespace cannot see them.
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace rl {

struct PinScope {
  bool own_mount_ns = false;  // rld's mount namespace is not PID 1's
  bool host_bpffs = true;     // the pin root is on the bpffs /proc/1/root/sys/fs/bpf has
  bool private_pins() const { return own_mount_ns && !host_bpffs; }
  // For the operator: what happens and how to fix it; "" when the pins are the host's.
  std::string warning(const std::string& pin_root) const;
};

// Compares the mount namespaces of this process and PID 1 (the parent process where PID 1 is out
// of reach), and the device of the bpffs under pin_root (the nearest existing ancestor) with that
// of their /sys/fs/bpf.
Result<PinScope> pin_scope(const std::string& pin_root);

// Interfaces (in this network namespace) that still run rl's XDP program, whoever holds it.
std::vector<std::string> interfaces_running_rl();

}  // namespace rl
