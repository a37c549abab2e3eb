// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/service/link_wait.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "common/fd.h"

namespace rl::daemon {
namespace {

// A socket that becomes readable on every link event (RTM_NEWLINK and others of RTMGRP_LINK),
// or none when it cannot be opened: the wait then looks again every 200 ms.
UniqueFd link_events() {
  UniqueFd fd(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE));
  if (!fd) return fd;
  sockaddr_nl sa{};
  sa.nl_family = AF_NETLINK;
  sa.nl_groups = RTMGRP_LINK;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) return UniqueFd();
  return fd;
}

}  // namespace

std::vector<std::string> missing_links(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names)
    if (::if_nametoindex(n.c_str()) == 0) out.push_back(n);
  return out;
}

std::vector<std::string> wait_for_links(
    const std::vector<std::string>& names, std::chrono::milliseconds bound,
    const std::function<void(const std::vector<std::string>& missing)>& tick) {
  using clock = std::chrono::steady_clock;
  const auto end = clock::now() + bound;
  // Subscribed before the first look: a link that appears between the two is not missed.
  UniqueFd events = link_events();
  auto missing = missing_links(names);
  while (!missing.empty()) {
    if (tick) tick(missing);
    auto left = std::chrono::ceil<std::chrono::milliseconds>(end - clock::now());
    if (left.count() <= 0) break;
    auto wait = std::min<std::chrono::milliseconds>(
        left, events ? std::chrono::milliseconds(1000) : std::chrono::milliseconds(200));
    pollfd p{events ? events.get() : -1, POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(wait.count()));
    // What the events say is not parsed: any of them (or none, at a tick) means look again.
    char buf[8192];
    if (events)
      while (::recv(events.get(), buf, sizeof(buf), 0) > 0) {
      }
    missing = missing_links(missing);
  }
  return missing;
}

std::string name_list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); i++)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

}  // namespace rl::daemon
