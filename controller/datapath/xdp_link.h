// SPDX-License-Identifier: GPL-2.0-only
// Attaching the XDP program to interfaces through BPF links pinned in bpffs. A pinned link keeps
// the program attached when rld exits or crashes; attaching a new program to an interface that
// already has rld's link replaces the program in place (bpf_link_update), so the interface is
// never left unprotected.
#pragma once

#include <string>

#include "common/result.h"

namespace rl {

enum class XdpMode { kAuto, kNative, kGeneric };

Result<XdpMode> parse_xdp_mode(const std::string& s);
const char* xdp_mode_name(XdpMode m);

struct Attachment {
  std::string ifname;
  std::string mode;       // "native" or "generic", as the kernel reports it
  bool replaced = false;  // an existing link got the new program
  std::string warning;    // e.g. native was not supported and generic was used
};

Result<Attachment> attach_xdp(int prog_fd, const std::string& ifname, XdpMode mode,
                              const std::string& pin_root);

// Removes rld's link from the interface (unpins it); an interface without one is not an error.
Status detach_xdp(const std::string& ifname, const std::string& pin_root);

// "native", "generic", "offload" or "none": what the kernel reports for the interface.
Result<std::string> attached_mode(const std::string& ifname);

}  // namespace rl
