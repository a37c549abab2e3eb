// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/compat.h"

#include <bpf/bpf.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace rl::compat {

std::string runtime_layout_unreadable(uint32_t abi) {
  if (abi >= kRuntimeLayoutSinceAbi && abi <= RL_ABI_VERSION) return "";
  return "the runtime maps of ABI " + std::to_string(abi) +
         " are unknown to this build, which reads those of ABI " +
         std::to_string(kRuntimeLayoutSinceAbi) + " to " + std::to_string(RL_ABI_VERSION);
}

Result<rl_control> read_pinned_control(int fd, const std::string& name) {
  bpf_map_info info{};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) return errno_error("inspect pinned " + name);
  std::vector<uint8_t> value(std::max<size_t>(info.value_size, sizeof(rl_control)));
  uint32_t zero = 0;
  if (bpf_map_lookup_elem(fd, &zero, value.data()) != 0) return errno_error("read pinned " + name);
  rl_control c{};
  std::memcpy(&c, value.data(), sizeof(c));
  return c;
}

}  // namespace rl::compat
