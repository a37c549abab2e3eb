// SPDX-License-Identifier: GPL-2.0-only
#include "iface.h"

#include <dirent.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace rl::lab {

Result<Mac> parse_mac(const std::string& text) {
  Mac m{};
  unsigned v[6];
  char tail;
  if (std::sscanf(text.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4],
                  &v[5], &tail) != 6 ||
      text.size() != 17)
    return Error{0, "'" + text + "' is not a MAC address (aa:bb:cc:dd:ee:ff)"};
  for (int i = 0; i < 6; i++) m[i] = static_cast<uint8_t>(v[i]);
  return m;
}

Result<Iface> lookup_iface(const std::string& name) {
  Iface out;
  out.index = static_cast<int>(if_nametoindex(name.c_str()));
  if (out.index == 0) return errno_error("interface '" + name + "' not found");

  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno_error("socket for interface queries");
  ifreq req{};
  std::strncpy(req.ifr_name, name.c_str(), IFNAMSIZ - 1);
  if (ioctl(fd, SIOCGIFHWADDR, &req) != 0) {
    Error e = errno_error("SIOCGIFHWADDR on '" + name + "'");
    close(fd);
    return e;
  }
  std::memcpy(out.mac.data(), req.ifr_hwaddr.sa_data, out.mac.size());
  if (ioctl(fd, SIOCGIFMTU, &req) != 0) {
    Error e = errno_error("SIOCGIFMTU on '" + name + "'");
    close(fd);
    return e;
  }
  out.mtu = req.ifr_mtu;
  close(fd);
  return out;
}

Status require_lab_namespace(const std::string& tool) {
  struct stat self {};
  if (stat("/proc/self/ns/net", &self) != 0) return errno_error("stat /proc/self/ns/net");
  const Error refused{
      0,
      "refusing to send outside a lab namespace; run it as: ip netns exec rl-... " + tool + " ..."};
  DIR* dir = opendir("/run/netns");
  if (dir == nullptr) return refused;
  bool found = false;
  while (dirent* e = readdir(dir)) {
    struct stat ns {};
    std::string path = std::string("/run/netns/") + e->d_name;
    if (std::strncmp(e->d_name, "rl-", 3) == 0 && stat(path.c_str(), &ns) == 0 &&
        ns.st_dev == self.st_dev && ns.st_ino == self.st_ino) {
      found = true;
      break;
    }
  }
  closedir(dir);
  if (!found) return refused;
  return {};
}

}  // namespace rl::lab
