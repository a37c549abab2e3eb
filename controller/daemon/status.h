// SPDX-License-Identifier: GPL-2.0-only
// What rld says about itself, one model for both ways it is read: `rlctl status` renders it as
// JSON (status_json), a metrics scrape copies it into the exporter's Snapshot (fill_snapshot),
// so the two cannot tell different stories about the same rld. Built by Daemon::status_model()
// from its parts; pure from here on, so unit tests drive the renderings without a kernel.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "control/protocol.h"
#include "daemon/key_usage.h"
#include "daemon/policy/policy_manager.h"
#include "metrics/snapshot.h"

namespace rl::daemon {

struct StatusModel {
  // rld itself
  std::string version;
  std::string policy_dir, pin_root;
  std::string pin_warning;  // the pins will not outlive rld, and why ("" when they will)
  std::chrono::seconds uptime{};
  // Known on the event loop only (rlctl status), not on the exporter's threads (a scrape).
  std::string event_loop;  // the loop thread's scheduling ("SCHED_FIFO 1", "nice 0")
  std::optional<bool> reload_running;

  // The policy in force and its reloads
  ReloadReport last_reload;
  std::chrono::system_clock::time_point last_good_reload{};
  uint64_t reloads_ok = 0, reloads_failed = 0;
  size_t rules = 0;
  std::vector<SetView> sets;
  uint32_t data_path_generation = 0;  // which of the two rule generations packets use
  bool adopted = false;               // found enforcing in the pinned maps at startup

  // The data path
  std::vector<std::string> configured_interfaces;  // interfaces: and --interface
  std::vector<metrics::InterfaceSnapshot> interfaces;
  KeyUsageSampler::Usage keys;  // counted once a second off the reply path
  uint64_t keys_capacity = 0;
  uint64_t keys_capacity_in_use = 0;  // slots of the sets packets use; grows to keys_capacity
};

// Whether rld enforces what it is configured to, for /readyz, systemd's STATUS= and rlctl
// status. Ready: the policy directory's policy is in force (an empty directory's empty rule set
// counts) and every interface rld manages runs the program. Degraded: rld kept a rule set it
// adopted from the pinned state because the policy did not load at start; it enforces, but not
// what it is configured to. A failed reload since is not ready either: the policy before it is
// enforced, not the directory's.
struct Readiness {
  bool ready = false;
  bool degraded = false;
  std::vector<std::string> reasons;  // why not ready, one line each
  std::string summary;               // what is enforced, one line
};
Readiness readiness(const StatusModel& m);

control::Json status_json(const StatusModel& m, std::chrono::steady_clock::time_point now =
                                                    std::chrono::steady_clock::now());
// The model's part of a scrape; the counters, the cluster and the runtime lists are read apart.
void fill_snapshot(const StatusModel& m, metrics::Snapshot& s);

}  // namespace rl::daemon
