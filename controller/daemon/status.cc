// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/status.h"

namespace rl::daemon {

using control::Json;

namespace {

// Unix seconds, or none for a time that never came.
std::optional<int64_t> unix_seconds(std::chrono::system_clock::time_point t) {
  if (t.time_since_epoch().count() == 0) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

bool runs_program(const std::string& mode) { return mode == "native" || mode == "generic"; }

}  // namespace

Readiness readiness(const StatusModel& m) {
  Readiness r;
  const auto& last = m.last_reload;
  std::string first_error = last.errors.empty() ? "" : ": " + last.errors.front();
  if (m.reloads_ok == 0 && m.adopted) {
    r.degraded = true;
    r.reasons.push_back("degraded: the policy in " + m.policy_dir +
                        " did not load; enforcing the " + std::to_string(m.rules) +
                        " rules adopted from the pinned state" + first_error);
  } else if (m.reloads_ok == 0) {
    r.reasons.emplace_back("no policy enforced yet");
  } else if (!last.ok && !last.trigger.empty()) {
    r.reasons.push_back("the last policy load failed (" + last.trigger +
                        "); the policy before it is enforced" + first_error);
  }
  for (const auto& want : m.configured_interfaces) {
    bool found = false;
    for (const auto& i : m.interfaces) found = found || i.name == want;
    if (!found) r.reasons.push_back(want + ": not attached");
  }
  std::string ifs;
  for (const auto& i : m.interfaces) {
    if (!runs_program(i.mode))
      r.reasons.push_back(i.name + ": no XDP program attached (" + i.mode + ")");
    ifs += (ifs.empty() ? "" : ", ") + i.name + " (" + i.mode + ")";
  }
  r.ready = r.reasons.empty();
  r.summary =
      "enforcing " + std::to_string(m.rules) + " rules (generation " +
      std::to_string(last.generation) + ") on " +
      (ifs.empty() ? "no interface" : std::to_string(m.interfaces.size()) + " interfaces: " + ifs);
  if (last.no_files && last.ok) r.summary += "; " + m.policy_dir + " holds no policy files";
  return r;
}

Json status_json(const StatusModel& m, std::chrono::steady_clock::time_point now) {
  control::StatusResponse j;
  j.version = m.version;
  for (const auto& i : m.interfaces) j.interfaces.push_back({i.name, i.mode});
  j.policy_dir = m.policy_dir;
  j.pin_root = m.pin_root;
  j.pins_outlive_rld = m.pin_warning.empty();
  j.pin_warning = m.pin_warning;
  j.adopted = m.adopted;
  j.generation = m.last_reload.generation;
  j.data_path_generation = m.data_path_generation;
  j.rules = m.rules;
  j.last_reload = {m.last_reload.ok, m.last_reload.trigger, unix_seconds(m.last_reload.at),
                   m.last_reload.errors};
  j.last_good_reload = unix_seconds(m.last_good_reload);
  j.reloads = {m.reloads_ok, m.reloads_failed};
  std::vector<control::SetState> sets;
  for (const auto& s : m.sets)
    sets.push_back({s.name, s.source, s.directory, s.prefixes, s.files, unix_seconds(s.updated)});
  j.sets = std::move(sets);
  j.keys = {m.keys.tracked, m.keys.blocked, m.keys_capacity, m.keys_capacity_in_use,
            std::chrono::duration_cast<std::chrono::milliseconds>(now - m.keys.at).count()};
  j.event_loop = m.event_loop;
  j.uptime_seconds = m.uptime.count();
  j.reload_running = m.reload_running;
  Readiness r = readiness(m);
  j.ready = r.ready;
  j.degraded = r.degraded;
  j.not_ready = r.reasons;
  return j;
}

void fill_snapshot(const StatusModel& m, metrics::Snapshot& s) {
  s.keys_tracked = m.keys.tracked;
  s.active_blocks = m.keys.blocked;
  s.keys_capacity = m.keys_capacity;
  s.keys_capacity_in_use = m.keys_capacity_in_use;
  s.interfaces = m.interfaces;
  s.reloads_ok = m.reloads_ok;
  s.reloads_failed = m.reloads_failed;
  s.last_reload_success_seconds =
      m.last_good_reload.time_since_epoch().count()
          ? std::chrono::duration<double>(m.last_good_reload.time_since_epoch()).count()
          : 0;
  // Before the first reload nothing has failed.
  s.last_reload_ok = m.last_reload.ok || m.last_reload.trigger.empty();
  s.generation = m.last_reload.generation;
  for (const auto& set : m.sets)
    s.sets.push_back({set.name, set.prefixes,
                      std::chrono::duration<double>(set.updated.time_since_epoch()).count()});
  Readiness r = readiness(m);
  s.not_ready = r.reasons;
  s.degraded = r.degraded;
  s.ready_summary = r.summary;
}

}  // namespace rl::daemon
