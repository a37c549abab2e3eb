// rld: attaches the rate limiter to interfaces and keeps it in sync with the policy directory.
//
//   rld --config /etc/rl/rld.yaml
//   rld --interface eth0 --policy-dir /etc/rl/policies
//   rld --cleanup            detach from every interface and remove all pinned state
#include <CLI/CLI.hpp>
#include <iostream>

#include "common/log.h"
#include "daemon/config.h"
#include "daemon/daemon.h"
#include "datapath/pin_lock.h"
#include "daemon/synproxy.h"
#include "datapath/pins.h"
#include "datapath/xdp_link.h"

int main(int argc, char** argv) {
  using rl::daemon::Config;
  CLI::App app{
      "rld: kernel-level (XDP) rate limiter daemon.\n\n"
      "Attaches the limiter to interfaces, applies every *.yaml policy in the policy\n"
      "directory (reloading on change and on SIGHUP), exports Prometheus metrics and\n"
      "answers rlctl on a Unix socket. The limiter stays attached and enforcing when rld\n"
      "stops or crashes; a restarted rld adopts it with its state.",
      "rld"};
  app.set_version_flag("--version", std::string("rld ") + RL_VERSION);
  std::string config_path = "/etc/rl/rld.yaml";
  Config flags;
  std::vector<std::string> interfaces;
  bool cleanup = false;
  app.add_option("-c,--config", config_path, "configuration file (YAML); flags override it")
      ->capture_default_str();
  auto* o_if = app.add_option("-i,--interface", interfaces, "interface to protect (repeatable)");
  auto* o_mode = app.add_option("--xdp-mode", flags.xdp_mode,
                                "auto (native, else generic), native or generic");
  auto* o_dir = app.add_option("--policy-dir", flags.policy_dir, "directory of *.yaml policies");
  auto* o_metrics = app.add_option("--metrics-listen", flags.metrics_listen,
                                   "address:port of the Prometheus endpoint ('' to disable)");
  auto* o_sock = app.add_option("--control-socket", flags.control_socket, "Unix socket for rlctl");
  auto* o_pin =
      app.add_option("--pin-root", flags.pin_root, "bpffs directory for pinned maps and links");
  auto* o_cap =
      app.add_option("--key-capacity", flags.key_capacity, "tracked keys (16 bytes each)");
  auto* o_off = app.add_option("--offender-capacity", flags.offender_capacity,
                               "offenders kept for rlctl top (64 bytes each)");
  auto* o_log = app.add_option("--log-level", flags.log_level, "debug, info, warn or error");
  auto* o_deb = app.add_option("--reload-debounce-ms", flags.reload_debounce_ms,
                               "quiet time after a policy file change before reloading");
  auto* o_det = app.add_flag("--detach-on-exit", flags.detach_on_exit,
                             "detach from the interfaces on SIGTERM (default: keep enforcing)");
  auto* o_rhost =
      app.add_option("--redis-host", flags.redis_host, "Redis for cluster-wide limits (address)");
  auto* o_rport = app.add_option("--redis-port", flags.redis_port, "Redis port");
  auto* o_rsock = app.add_option("--redis-socket", flags.redis_socket,
                                 "Redis Unix socket (instead of host:port)");
  auto* o_node = app.add_option("--node-name", flags.node_name,
                                "this node's name in the cluster (default: host name)");
  auto* o_sync =
      app.add_option("--sync-interval-ms", flags.sync_interval_ms, "cluster sync interval");
  auto* o_nodes = app.add_option("--cluster-nodes", flags.cluster_nodes,
                                 "expected fleet size, for each node's share of a cluster limit");
  app.add_flag("--cleanup", cleanup, "detach everything rld attached, remove its pins, and exit");
  CLI11_PARSE(app, argc, argv);

  Config cfg;
  bool explicit_config = app.get_option("--config")->count() > 0;
  if (explicit_config || ::access(config_path.c_str(), R_OK) == 0) {
    if (auto s = rl::daemon::load_config_file(config_path, cfg); !s) {
      std::cerr << s.error().message << "\n";
      return 2;
    }
  }
  if (o_if->count()) cfg.interfaces = interfaces;
  if (o_mode->count()) cfg.xdp_mode = flags.xdp_mode;
  if (o_dir->count()) cfg.policy_dir = flags.policy_dir;
  if (o_metrics->count()) cfg.metrics_listen = flags.metrics_listen;
  if (o_sock->count()) cfg.control_socket = flags.control_socket;
  if (o_pin->count()) cfg.pin_root = flags.pin_root;
  if (o_cap->count()) cfg.key_capacity = flags.key_capacity;
  if (o_off->count()) cfg.offender_capacity = flags.offender_capacity;
  if (o_log->count()) cfg.log_level = flags.log_level;
  if (o_deb->count()) cfg.reload_debounce_ms = flags.reload_debounce_ms;
  if (o_det->count()) cfg.detach_on_exit = flags.detach_on_exit;
  if (o_rhost->count()) cfg.redis_host = flags.redis_host;
  if (o_rport->count()) cfg.redis_port = flags.redis_port;
  if (o_rsock->count()) cfg.redis_socket = flags.redis_socket;
  if (o_node->count()) cfg.node_name = flags.node_name;
  if (o_sync->count()) cfg.sync_interval_ms = flags.sync_interval_ms;
  if (o_nodes->count()) cfg.cluster_nodes = flags.cluster_nodes;
  if (auto s = rl::daemon::validate_config(cfg); !s) {
    std::cerr << "rld: " << s.error().message << "\n";
    return 2;
  }
  rl::log::Level level;
  if (!rl::log::parse_level(cfg.log_level, &level)) {
    std::cerr << "rld: log level must be debug, info, warn or error\n";
    return 2;
  }
  rl::log::set_level(level);

  if (cleanup) {
    // Not from under a running rld: it would keep writing maps that no longer have pins.
    auto lock = rl::lock_pin_root(cfg.pin_root);
    if (!lock && lock.error().err != ENOENT) {
      rl::log::error("cleanup refused", {{"error", lock.error().str()}});
      return 1;
    }
    for (const auto& ifname : rl::pinned_links(cfg.pin_root))
      if (auto s = rl::detach_xdp(ifname, cfg.pin_root); !s)
        rl::log::error("detach failed", {{"interface", ifname}, {"error", s.error().str()}});
      else
        rl::log::info("detached", {{"interface", ifname}});
    if (auto s = rl::daemon::SynProxy::remove(); !s)
      rl::log::error("cleanup failed", {{"error", s.error().str()}});
    if (auto s = rl::remove_pins(cfg.pin_root); !s) {
      rl::log::error("cleanup failed", {{"error", s.error().str()}});
      return 1;
    }
    rl::log::info("removed pinned state", {{"pin_root", cfg.pin_root}});
    return 0;
  }

  auto d = rl::daemon::Daemon::start(cfg);
  if (!d) {
    rl::log::error("rld failed to start", {{"error", d.error().str()}});
    return 1;
  }
  return (*d)->run();
}
