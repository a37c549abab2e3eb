// SPDX-License-Identifier: GPL-2.0-only
// bpffs pins: where rld keeps the data path's maps and links so that the limiter keeps
// enforcing, with its state, while rld restarts or after it crashes.
//
//   <root>/maps/<map name>    every map of rl_xdp except its private .rodata/.bss
//   <root>/links/<ifname>     the XDP link of each attached interface
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace rl {

// Directories prepare_pin_root made, parents first.
using MadeDirs = std::vector<std::string>;

// Checks that root is (or will be created) on a bpf filesystem, and creates root/maps and
// root/links. The one mount it makes: bpffs on /sys/fs/bpf when root lies under it and nothing
// is mounted there. Any other place off bpffs is an error; rld never mounts over a directory.
// Returns the directories it made (root and its missing parents, maps, links): none when they
// were all there. On an error it leaves none of them behind.
Result<MadeDirs> prepare_pin_root(const std::string& root);

// Removes those of `dirs` that are empty, children first: what a start that failed made and
// left unused. A directory that holds anything (a pin, another directory) stays.
void remove_made_dirs(const MadeDirs& dirs);

std::string pinned_map_path(const std::string& root, const std::string& map);
std::string pinned_link_path(const std::string& root, const std::string& ifname);

// Interfaces with a pinned link under root.
std::vector<std::string> pinned_links(const std::string& root);

// Removes every pin under root and the directories rld created. Links whose last reference was
// the pin detach from their interface.
Status remove_pins(const std::string& root);

}  // namespace rl
