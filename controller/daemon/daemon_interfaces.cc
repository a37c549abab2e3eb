// SPDX-License-Identifier: GPL-2.0-only
// The interfaces rld runs on: those its configuration names and the pinned links an earlier
// run left (attached at start), and rlctl's attach and detach.
#include <net/if.h>

#include <algorithm>

#include "common/log.h"
#include "daemon/daemon.h"
#include "daemon/service/link_wait.h"
#include "daemon/service/notify.h"
#include "datapath/pins.h"

namespace rl::daemon {

using control::Json;

Status Daemon::wait_for_interfaces() {
  auto missing = missing_links(cfg_.interfaces);
  if (missing.empty() || cfg_.interface_wait_seconds == 0) return {};
  std::string bound = std::to_string(cfg_.interface_wait_seconds) + " s";
  log::warn("waiting for interfaces to appear",
            {{"interfaces", name_list(missing)}, {"interface_wait_seconds", bound}});
  missing = wait_for_links(
      cfg_.interfaces, std::chrono::seconds(cfg_.interface_wait_seconds),
      [](const std::vector<std::string>& m) { notify::starting("waiting for " + name_list(m)); });
  if (!missing.empty())
    return Error{0, (missing.size() == 1 ? "interface " : "interfaces ") + name_list(missing) +
                        " did not appear within " + bound + " (interface_wait_seconds)"};
  log::info("interfaces appeared", {{"interfaces", name_list(cfg_.interfaces)}});
  return {};
}

Status Daemon::attach_interfaces() {
  auto mode = parse_xdp_mode(cfg_.xdp_mode);
  if (!mode) return mode.error();
  if (auto s = wait_for_interfaces(); !s) return s;
  for (const auto& ifname : cfg_.interfaces) {
    auto a = attach_xdp(dp_->prog_fd(), ifname, *mode, cfg_.pin_root);
    if (!a) return a.error();
    if (!a->warning.empty()) log::warn(a->warning, {{"interface", ifname}});
    log::info(a->replaced ? "replaced program on interface" : "attached",
              {{"interface", ifname}, {"mode", a->mode}});
    MutexLock lock(mu_);
    interfaces_[ifname] = *a;
  }
  // Interfaces attached by an earlier run and not in this configuration stay attached and known.
  for (const auto& ifname : pinned_links(cfg_.pin_root)) {
    bool known = false;
    {
      MutexLock lock(mu_);
      known = interfaces_.count(ifname) > 0;
    }
    if (known) continue;
    auto a = attach_xdp(dp_->prog_fd(), ifname, *mode, cfg_.pin_root);
    if (!a && a.error().err == ENODEV) {
      // The interface is gone: its link is severed and the pin protects nothing.
      auto s = detach_xdp(ifname, cfg_.pin_root);
      log::warn(s ? "dropped the pinned link of a missing interface" : "stale link not removed",
                {{"interface", ifname}, {"error", s ? a.error().str() : s.error().str()}});
      continue;
    }
    if (a && !a->warning.empty()) log::warn(a->warning, {{"interface", ifname}});
    MutexLock lock(mu_);
    if (a) interfaces_[ifname] = *a;
  }
  return {};
}

bool Daemon::is_attached(const std::string& ifname) const {
  if (attachments().count(ifname)) return true;
  auto pinned = pinned_links(cfg_.pin_root);
  return std::find(pinned.begin(), pinned.end(), ifname) != pinned.end();
}

std::map<std::string, Attachment> Daemon::attachments() const {
  MutexLock lock(mu_);
  return interfaces_;
}

Json Daemon::cmd_attach(const Json& args) {
  auto req = args.get<control::AttachRequest>();
  const std::string& ifname = req.interface;
  auto mode = parse_xdp_mode(req.mode.value_or(cfg_.xdp_mode));
  if (!mode) return control::fail(mode.error().message);
  auto a = attach_xdp(dp_->prog_fd(), ifname, *mode, cfg_.pin_root);
  if (!a) return control::fail(a.error().str());
  {
    MutexLock lock(mu_);
    interfaces_[ifname] = *a;
  }
  log::info("attached", {{"interface", ifname}, {"mode", a->mode}});
  synproxy_.enable(true);
  synproxy_.settle(policies_->policy());
  return control::ok(control::AttachResponse{ifname, a->mode, a->replaced, a->warning});
}

Json Daemon::cmd_detach(const Json& args) {
  std::string ifname = args.get<control::InterfaceRequest>().interface;
  if (!is_attached(ifname))
    return control::fail(if_nametoindex(ifname.c_str())
                             ? "rl is not attached to " + ifname + "; nothing changed"
                             : "no interface named '" + ifname + "'; nothing changed");
  if (auto s = detach_xdp(ifname, cfg_.pin_root); !s) return control::fail(s.error().str());
  bool none_left = false;
  {
    MutexLock lock(mu_);
    interfaces_.erase(ifname);
    none_left = interfaces_.empty();
  }
  log::info("detached", {{"interface", ifname}});
  synproxy_.enable(!none_left);
  synproxy_.settle(policies_->policy());
  return control::ok(control::DetachResponse{ifname});
}

}  // namespace rl::daemon
