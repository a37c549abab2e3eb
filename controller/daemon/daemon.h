// SPDX-License-Identifier: GPL-2.0-only
// rld: keeps the kernel's data path in sync with the policy directory and answers rlctl.
// One thread runs the event loop (signals, inotify, the offender ring buffer, the control
// socket, a housekeeping timer), raised above the kernel's packet threads (loop_priority.h);
// the metrics endpoint's threads and the key table's counter only read.
#pragma once

#include <cerrno>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "common/fd.h"
#include "common/mutex.h"
#include "common/result.h"
#include "control/control_server.h"
#include "control/handler_table.h"
#include "control/protocol.h"
#include "daemon/cluster_sync.h"
#include "daemon/config/config.h"
#include "daemon/connections/connection_watch.h"
#include "daemon/handlers/handlers.h"
#include "daemon/key_usage.h"
#include "daemon/offenders/offenders.h"
#include "daemon/overrides/override_book.h"
#include "daemon/policy/load_worker.h"
#include "daemon/policy/policy_manager.h"
#include "daemon/status.h"
#include "daemon/synproxy/synproxy.h"
#include "daemon/traffic/traffic.h"
#include "datapath/bpf_datapath.h"
#include "datapath/pins.h"
#include "datapath/xdp_link.h"
#include "metrics/snapshot.h"
#include "policy/set_files.h"

namespace rl::daemon {

using control::ControlServer;

// The errno of a start that failed on the policy or the cluster settings: nothing but an edit of
// the files can fix it (rld exits kExitNotConfigured, which the unit does not restart).
inline constexpr int kNotConfiguredErrno = EBADMSG;

class Daemon {
 public:
  static Result<std::unique_ptr<Daemon>> start(const Config& cfg);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Runs until SIGTERM or SIGINT; returns the process exit code.
  int run();

  // One control request (also used by tests without a socket).
  control::Json handle(const control::Json& request);

  Result<metrics::Snapshot> snapshot() const;

 private:
  explicit Daemon(Config cfg);
  // The start, in its steps (daemon.cc).
  Status init();
  Status block_signals();
  Status claim_pin_root();
  Status load_datapath();
  Status make_policy_manager();
  Status load_first_policy();
  Status take_over_replaced_pins();
  void start_event_logs();
  void start_key_usage();
  Status start_metrics();
  Status open_event_loop();
  Status open_control_socket();
  Status watch_policy_dir();
  // Watches the directories of the set files the policy in force reads (a file's directory, so
  // that a rename over it is seen), and no others.
  void watch_set_files();
  void on_inotify();
  void housekeeping();
  // STATUS= for systemd from readiness(); remembered in notify_status_.
  std::string systemd_status();
  void register_handlers();

  StatusModel status_model() const;  // any thread: the metrics endpoint builds one too
  control::Json cmd_status();
  // The configured interfaces and the pinned links an earlier run left (daemon_interfaces.cc).
  Status attach_interfaces();
  // Refuses to replace a data path of another layout when the first policy did not load.
  Status refuse_unruled_replacement(const ReloadReport& first) const;
  // The configured interfaces that do not exist yet, waited for up to interface_wait_seconds.
  Status wait_for_interfaces();
  // Redis and the sync thread, when the configuration names a Redis (daemon_cluster.cc).
  Status make_cluster_store();
  Status start_cluster();
  std::string redis_text() const;
  control::Json cmd_attach(const control::Json& args);
  control::Json cmd_detach(const control::Json& args);
  // Policy loads, on loads_ (policy_requests.cc). `then` runs on the loop with the outcome.
  struct ReloadRequest;
  void request_reload(const std::string& trigger, bool force,
                      std::function<void(const ReloadReport&)> then = {});
  // policy.reload, .diff and .apply: answered on `conn` once their load is done. False for
  // every other request.
  bool defer_policy_request(const control::Json& req, ControlServer::Responder reply);
  policy::LoadLimits load_limits() const;
  // A rule id's rule in the policy in force: for offender reports and top.
  RuleRef rule_ref(uint32_t id) const;
  // On key_usage_'s thread: grow the key table for `tracked` keys, logging what happened, and
  // the keys the data path has inserted since its counters were made (none if unreadable).
  void grow_key_table(uint64_t tracked);
  std::optional<uint64_t> keys_inserted() const;

  Config cfg_;
  std::unique_ptr<BpfDatapath> dp_;
  std::unique_ptr<KeyUsageSampler> key_usage_;  // reads dp_; read by the exporter's threads
  std::optional<uint64_t> inserted_at_count_;   // keys_inserted() at key_usage_'s last count
  std::unique_ptr<PolicyManager> policies_;
  SynProxy synproxy_{cfg_.netfilter_sysctl_dir};  // the stack side of syn_cookies rules
  std::unique_ptr<ConnectionWatch> connections_;  // connection limits' counts; reads dp_
  std::unique_ptr<OverrideBook> overrides_;       // runtime overrides; writes dp_
  std::unique_ptr<OffenderLog> offenders_;
  std::unique_ptr<TrafficLog> traffic_;  // traffic samples, when traffic_sample_shift is set
  std::unique_ptr<ClusterSync> cluster_;
  // Made before anything is loaded or attached, so that settings it refuses fail the start with
  // nothing to undo; start_cluster() hands it to the sync.
  std::unique_ptr<cluster::Store> store_;
  std::shared_ptr<void> exporter_;  // metrics::Exporter, type-erased to keep this header light
  std::map<std::string, Attachment> attachments() const;
  bool is_attached(const std::string& ifname) const;  // by this rld or a pin it adopts

  mutable Mutex mu_;  // the metrics endpoint reads interfaces_ from its own threads
  std::map<std::string, Attachment> interfaces_ GUARDED_BY(mu_);
  std::string pin_warning_;  // the pins will not outlive rld (a private bpffs), and why
  UniqueFd pin_lock_;        // held for rld's life: one rld per pin root
  MadeDirs made_pin_dirs_;   // the pin root's directories this start made (a failed one removes)
  UniqueFd epoll_, signals_, inotify_, listen_;
  std::map<std::string, int> set_watches_;  // directory -> inotify watch
  // Set files as the last load read them; used by the load worker's one load at a time.
  std::unique_ptr<policy::SetFileCache> set_cache_ = std::make_unique<policy::SetFileCache>();
  std::unique_ptr<ControlServer> control_;
  std::string notify_status_;             // the last STATUS= sent (loop thread)
  std::string loop_priority_ = "nice 0";  // what the event loop runs at, for rlctl status
  // Declared after what its jobs' `done` uses; its destructor joins a running load.
  std::unique_ptr<LoadWorker> loads_ = std::make_unique<LoadWorker>();
  std::shared_ptr<ReloadRequest> queued_reload_;  // submitted, not started: merged into
  bool reload_pending_ = false;
  std::chrono::steady_clock::time_point reload_at_{};
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_housekeeping_{};
  std::chrono::steady_clock::time_point last_tables_check_{};  // rld's nftables tables, restore()
  bool stop_ = false;
  handlers::RuleRates rates_;               // per-rule counters one interval apart, for rlctl stats
  handlers::RuntimeExpiry runtime_expiry_;  // when housekeeping next lists the runtime entries
  control::HandlerTable handlers_;          // every command answered on the spot
};

}  // namespace rl::daemon
