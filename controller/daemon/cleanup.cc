// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/cleanup.h"

#include <unistd.h>

#include <csignal>
#include <fstream>
#include <thread>

#include "common/cli_exit.h"
#include "common/log.h"
#include "daemon/connections/connection_watch.h"
#include "daemon/synproxy/synproxy.h"
#include "datapath/pin_lock.h"
#include "datapath/pin_scope.h"
#include "datapath/pins.h"
#include "datapath/xdp_link.h"

namespace rl::daemon {

CleanupConfig cleanup_config(const std::string& path, bool explicit_path) {
  CleanupConfig out;
  if (!explicit_path && ::access(path.c_str(), F_OK) != 0) return out;
  if (auto s = load_config_file(path, out.cfg); !s) {
    out.cfg = Config{};
    out.note = s.error().message + "; cleaning up the default pin root " + out.cfg.pin_root +
               " (--pin-root names another)";
  }
  return out;
}

bool is_rld(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string comm;
  return std::getline(in, comm) && comm == "rld";
}

Result<UniqueFd> stop_running_rld(const std::string& pin_root, std::chrono::milliseconds wait) {
  auto lock = lock_pin_root(pin_root);
  if (lock || lock.error().err != EBUSY) return lock;
  const pid_t pid = pin_root_holder(pin_root);
  if (pid <= 0 || pid == ::getpid() || !is_rld(pid)) return lock;  // not one it can see
  log::info("stopping the rld running on the pin root",
            {{"pid", std::to_string(pid)}, {"pin_root", pin_root}});
  if (::kill(pid, SIGTERM) != 0) return errno_error("signal rld (pid " + std::to_string(pid) + ")");
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    lock = lock_pin_root(pin_root);
    if (lock || lock.error().err != EBUSY || std::chrono::steady_clock::now() >= deadline)
      return lock;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// Fails if rl's program is still attached to an interface afterwards (held by a link these pins
// do not know, e.g. an rld whose pins live in another mount namespace's bpffs).
int cleanup(const Config& cfg) {
  // Not from under a running rld: it would keep writing maps that no longer have pins. It is
  // stopped first; the lock then keeps a new one (systemd's, a DaemonSet's) off the pins.
  auto lock = stop_running_rld(cfg.pin_root, std::chrono::seconds(15));
  if (!lock && lock.error().err != ENOENT) {
    log::error("cleanup refused", {{"error", lock.error().str()}});
    return kExitFailure;
  }
  int rc = kExitOk;
  for (const auto& ifname : pinned_links(cfg.pin_root))
    if (auto s = detach_xdp(ifname, cfg.pin_root); !s) {
      log::error("detach failed", {{"interface", ifname}, {"error", s.error().str()}});
      rc = kExitFailure;
    } else {
      log::info("detached", {{"interface", ifname}});
    }
  if (auto s = SynProxy::remove(cfg.netfilter_sysctl_dir); !s) {
    log::error("cleanup failed", {{"error", s.error().str()}});
    rc = kExitFailure;
  }
  if (auto s = ConnectionWatch::remove_table(); !s) {
    log::error("cleanup failed", {{"error", s.error().str()}});
    rc = kExitFailure;
  }
  if (auto s = remove_pins(cfg.pin_root); !s) {
    log::error("cleanup failed", {{"error", s.error().str()}});
    return kExitFailure;
  }
  log::info("removed pinned state", {{"pin_root", cfg.pin_root}});
  for (const auto& ifname : interfaces_running_rl()) {
    std::string why = "it is held by a link outside " + cfg.pin_root +
                      ": an rld still running, or one whose pins are in another mount "
                      "namespace's bpffs (ip netns exec); stop that rld, or run rld --cleanup "
                      "in its mount namespace";
    auto scope = pin_scope(cfg.pin_root);
    if (scope && scope->private_pins()) why += "; " + scope->warning(cfg.pin_root);
    log::error("rl is still attached", {{"interface", ifname}, {"reason", why}});
    rc = kExitFailure;
  }
  return rc;
}

}  // namespace rl::daemon
