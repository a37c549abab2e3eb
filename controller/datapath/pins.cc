#include "datapath/pins.h"

#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>

#include <filesystem>

namespace rl {
namespace fs = std::filesystem;

namespace {

bool is_bpffs(const std::string& path) {
  struct statfs st {};
  return statfs(path.c_str(), &st) == 0 && st.f_type == BPF_FS_MAGIC;
}

}  // namespace

Status prepare_pin_root(const std::string& root) {
  std::error_code ec;
  fs::path mount_point = fs::path(root).parent_path();
  if (mount_point.empty()) return Error{EINVAL, "pin root '" + root + "' needs a parent directory"};
  if (!is_bpffs(mount_point)) {
    fs::create_directories(mount_point, ec);
    if (::mount("bpf", mount_point.c_str(), "bpf", 0, "mode=0700") != 0)
      return errno_error("mount bpffs on " + mount_point.string());
  }
  for (const char* sub : {"maps", "links"}) {
    fs::create_directories(fs::path(root) / sub, ec);
    if (ec) return Error{ec.value(), "create " + (fs::path(root) / sub).string()};
  }
  ::chmod(root.c_str(), 0700);
  return {};
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
