// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/pin_scope.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/magic.h>
#include <net/if.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "common/fd.h"

namespace rl {
namespace {

// The nearest existing ancestor of path (path itself if it exists).
std::string existing_ancestor(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p(path);
  std::error_code ec;
  while (!p.empty() && p != p.root_path() && !fs::exists(p, ec)) p = p.parent_path();
  return p.empty() ? "/" : p.string();
}

bool on_bpffs(const std::string& path, dev_t* dev) {
  struct statfs fs {};
  struct stat st {};
  if (::statfs(path.c_str(), &fs) != 0 || fs.f_type != BPF_FS_MAGIC) return false;
  if (::stat(path.c_str(), &st) != 0) return false;
  *dev = st.st_dev;
  return true;
}

}  // namespace

std::string PinScope::warning(const std::string& pin_root) const {
  if (!private_pins()) return "";
  return "pins under " + pin_root +
         " are on a bpffs private to rld's mount namespace (not the host's /sys/fs/bpf): they "
         "will not outlive rld, the limiter detaches when rld exits, and rld --cleanup from "
         "another namespace cannot see them. Bind-mount the host's /sys/fs/bpf into rld's mount "
         "namespace, or enter only the network namespace (nsenter --net=/run/netns/NAME) "
         "instead of `ip netns exec`, which mounts a private /sys";
}

Result<PinScope> pin_scope(const std::string& pin_root) {
  PinScope s;
  struct stat self {};
  if (::stat("/proc/self/ns/mnt", &self) != 0) return errno_error("stat /proc/self/ns/mnt");
  // The host is PID 1's view. Where PID 1 is out of reach (a PID namespace of our own, or a
  // sandbox that denies access to it), the parent's view stands in: systemd is both, and
  // `ip netns exec` or a container runtime starts rld from the host's mount namespace.
  std::string host;
  struct stat ref {};
  for (const std::string& proc : {std::string("/proc/1"), "/proc/" + std::to_string(::getppid())}) {
    if (::stat((proc + "/ns/mnt").c_str(), &ref) == 0 &&
        ::access((proc + "/root/").c_str(), X_OK) == 0) {
      host = proc + "/root/sys/fs/bpf";
      break;
    }
  }
  if (host.empty()) return s;  // nothing to compare with: assume the pins are the host's
  s.own_mount_ns = self.st_ino != ref.st_ino || self.st_dev != ref.st_dev;
  dev_t ours = 0, theirs = 0;
  bool ours_bpf = on_bpffs(existing_ancestor(pin_root), &ours);
  bool host_bpf = on_bpffs(host, &theirs);
  s.host_bpffs = ours_bpf && host_bpf && ours == theirs;
  return s;
}

std::vector<std::string> interfaces_running_rl() {
  std::vector<std::string> out;
  struct if_nameindex* all = if_nameindex();
  if (!all) return out;
  for (auto* i = all; i->if_index != 0; i++) {
    LIBBPF_OPTS(bpf_xdp_query_opts, q);
    if (bpf_xdp_query(static_cast<int>(i->if_index), 0, &q) != 0) continue;
    for (uint32_t id : {q.prog_id, q.drv_prog_id, q.skb_prog_id}) {
      if (!id) continue;
      UniqueFd fd(bpf_prog_get_fd_by_id(id));
      bpf_prog_info info{};
      uint32_t len = sizeof(info);
      if (fd && bpf_obj_get_info_by_fd(fd.get(), &info, &len) == 0 &&
          std::strncmp(info.name, "rl_xdp", sizeof(info.name)) == 0) {
        out.emplace_back(i->if_name);
        break;
      }
    }
  }
  if_freenameindex(all);
  return out;
}

}  // namespace rl
