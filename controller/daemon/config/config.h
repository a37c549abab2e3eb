// SPDX-License-Identifier: GPL-2.0-only
// rld's configuration: a YAML file (--config, default /etc/rl/rld.yaml) whose every setting can
// also be given as a flag; flags win.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "control/protocol.h"
#include "rl_abi.h"

namespace rl::daemon {

struct Config {
  std::vector<std::string> interfaces;
  std::string xdp_mode = "auto";  // auto | native | generic
  // How long rld waits at start for a configured interface that does not exist yet (link_wait.h):
  // a minute covers a VLAN, bond or late driver at boot and stays inside systemd's default
  // start timeout (90 s), which rld extends while it waits anyway. 0: no wait.
  uint32_t interface_wait_seconds = 60;
  std::string policy_dir = "/etc/rl/policies";
  std::string metrics_listen = "127.0.0.1:9464";  // empty: no metrics endpoint
  std::string control_socket = control::kDefaultSocketPath;
  std::string pin_root = "/sys/fs/bpf/rl";
  uint32_t key_capacity = 1048576;
  // Source prefixes a policy may hold per family, sets from files included.
  uint32_t source_prefixes = RL_DEFAULT_SOURCE_PREFIXES;
  // Rules a policy may hold (rounded up to a multiple of 64): sizes the rule maps and bitmaps.
  uint32_t max_rules = RL_DEFAULT_MAX_RULES;
  uint32_t offender_capacity = 65536;  // offenders kept for `rlctl top`, least recent evicted
  // `rlctl top --by traffic`: the data path samples 1 in 2^k packets of matched rules; 0: off.
  uint32_t traffic_sample_shift = 0;
  std::string log_level = "info";
  uint32_t reload_debounce_ms = 200;
  uint32_t reload_timeout_ms = 10000;
  bool detach_on_exit = false;
  // Where nf_conntrack_tcp_loose is (SYN cookies): a container whose /proc/sys is read-only
  // gets the node's directory bound read-write elsewhere.
  std::string netfilter_sysctl_dir = "/proc/sys/net/netfilter";
  bool key_table_full = false;
  // The event loop's scheduling (loop_priority.h): SCHED_FIFO at this priority, or with 0,
  // SCHED_OTHER at loop_nice.
  uint32_t loop_realtime_priority = 1;
  int loop_nice = 0;
  uint32_t metrics_realtime_priority = 1;  // the metrics endpoint's threads, SCHED_FIFO

  // Cluster-wide limits: enabled when a Redis address is set (redis_host or redis_socket).
  std::string redis_host;
  int redis_port = 6379;
  std::string redis_socket;
  std::string redis_user;  // an ACL user; "" is Redis' default user
  // Sentinel: the master of redis_master_name, asked of these "host:port" sentinels.
  std::vector<std::string> redis_sentinels;
  std::string redis_master_name;
  std::string redis_sentinel_user;
  std::string redis_sentinel_password;
  // Redis Cluster: some of its nodes, "host:port"; the rest is learnt from them.
  std::vector<std::string> redis_cluster_nodes;
  std::string redis_password;
  int redis_db = 0;
  // TLS to every Redis connection (servers, sentinels, cluster nodes), the server verified.
  bool redis_tls = false;
  std::string redis_tls_ca_file;  // "" for the system's CAs
  std::string redis_tls_cert_file;
  std::string redis_tls_key_file;
  std::string redis_tls_server_name;  // "" for the address connected to
  uint32_t redis_connect_timeout_ms = 200;
  uint32_t redis_command_timeout_ms = 1000;  // must cover the largest sync inside Redis
  std::string redis_key_prefix = "rl";
  std::string node_name;  // default: the host name
  uint32_t sync_interval_ms = 100;
  uint32_t cluster_nodes = 0;  // expected fleet size for early-sync shares; 0: nodes seen in Redis

  bool cluster_enabled() const {
    return !redis_host.empty() || !redis_socket.empty() || !redis_sentinels.empty() ||
           !redis_cluster_nodes.empty();
  }
};

// Reads the file into `cfg` (fields it does not mention keep their values). Unknown keys and
// wrong types are errors naming file:line:column.
Status load_config_file(const std::string& path, Config& cfg);

Status validate_config(const Config& cfg);

// The rules the data path holds: max_rules rounded up to whole bitmap words.
inline uint32_t rule_capacity(const Config& cfg) { return (cfg.max_rules + 63) / 64 * 64; }

}  // namespace rl::daemon
