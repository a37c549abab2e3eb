// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/pins.h"

#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

namespace rl {
namespace fs = std::filesystem;

namespace {

constexpr char kConventionalMount[] = "/sys/fs/bpf";

bool is_bpffs(const std::string& path) {
  struct statfs st {};
  return statfs(path.c_str(), &st) == 0 && st.f_type == BPF_FS_MAGIC;
}

std::string fs_name(const std::string& path) {
  struct statfs st {};
  if (statfs(path.c_str(), &st) != 0) return "unreadable";
  switch (st.f_type) {
    case SYSFS_MAGIC:
      return "sysfs";
    case TMPFS_MAGIC:
      return "tmpfs";
    case EXT4_SUPER_MAGIC:
      return "ext4";
    case BTRFS_SUPER_MAGIC:
      return "btrfs";
    case XFS_SUPER_MAGIC:
      return "xfs";
    case OVERLAYFS_SUPER_MAGIC:
      return "overlayfs";
  }
  char hex[32];
  std::snprintf(hex, sizeof(hex), "type 0x%lx", static_cast<unsigned long>(st.f_type));
  return hex;
}

// Whether something (anything) is mounted at path.
Result<bool> is_mount_point(const std::string& path) {
  struct statx stx {};
  if (::statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &stx) != 0)
    return errno_error("statx " + path);
  if (!(stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
    return Error{ENOTSUP, "the kernel does not report mount points (statx)"};
  return (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
}

}  // namespace

// A bpffs mount hides whatever the directory held, so rld mounts one only where bpffs belongs
// and only if that place is bare: /sys/fs/bpf with nothing mounted on it.
Result<MadeDirs> prepare_pin_root(const std::string& root) {
  std::error_code ec;
  fs::path path = fs::path(root).lexically_normal();
  if (!path.is_absolute()) return Error{EINVAL, "pin root '" + root + "' must be absolute"};
  MadeDirs made;  // the missing directories, deepest first until reversed below
  fs::path existing = path;
  while (!fs::exists(existing, ec) && existing.has_relative_path()) {
    made.push_back(existing.string());
    existing = existing.parent_path();
  }
  std::reverse(made.begin(), made.end());
  if (!is_bpffs(existing)) {
    auto mounted = is_mount_point(kConventionalMount);
    bool conventional = existing == kConventionalMount && mounted && !*mounted;
    if (!conventional)
      return Error{ENOTSUP, "pin root " + root + " is not on a bpf filesystem (" +
                                existing.string() + " is on " + fs_name(existing) +
                                "); choose a directory under a bpffs mount such as " +
                                kConventionalMount + "/rl"};
    if (::mount("bpf", kConventionalMount, "bpf", 0, "mode=0700") != 0)
      return errno_error(std::string("mount bpffs on ") + kConventionalMount);
  }
  for (const char* sub : {"maps", "links"})
    if (!fs::exists(path / sub, ec)) made.push_back((path / sub).string());
  for (const char* sub : {"maps", "links"}) {
    fs::create_directories(path / sub, ec);
    if (ec) {
      remove_made_dirs(made);
      return Error{ec.value(), "create " + (path / sub).string()};
    }
  }
  ::chmod(root.c_str(), 0700);
  return made;
}

void remove_made_dirs(const MadeDirs& dirs) {
  std::for_each(dirs.rbegin(), dirs.rend(), [](const std::string& d) { ::rmdir(d.c_str()); });
}

std::string pinned_map_path(const std::string& root, const std::string& map) {
  return root + "/maps/" + map;
}

std::string pinned_link_path(const std::string& root, const std::string& ifname) {
  return root + "/links/" + ifname;
}

std::vector<std::string> pinned_links(const std::string& root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root + "/links", ec))
    out.push_back(e.path().filename());
  std::sort(out.begin(), out.end());
  return out;
}

Status remove_pins(const std::string& root) {
  std::error_code ec;
  if (!fs::exists(root, ec)) return {};
  for (const char* sub : {"links", "maps"})
    for (const auto& e : fs::directory_iterator(fs::path(root) / sub, ec))
      if (::unlink(e.path().c_str()) != 0 && errno != ENOENT)
        return errno_error("unpin " + e.path().string());
  for (const char* sub : {"links", "maps"}) ::rmdir((fs::path(root) / sub).c_str());
  if (::rmdir(root.c_str()) != 0 && errno != ENOENT) return errno_error("remove " + root);
  return {};
}

}  // namespace rl
