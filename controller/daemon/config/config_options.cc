// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/config/config_options.h"

#include <algorithm>
#include <charconv>
#include <iterator>

#include "rl_abi.h"

namespace rl::daemon {
namespace {

using O = ConfigOption;

// What rld protects and where it keeps its state.
std::vector<ConfigOption> datapath_options() {
  const std::string slot_bytes = std::to_string(sizeof(struct rl_slot));
  return {
      {"", "interfaces", "-i,--interface", &Config::interfaces,
       "interface to protect (the flag is repeatable; the file takes a list)", "", 0, 0},
      {"",
       "xdp_mode",
       "--xdp-mode",
       &Config::xdp_mode,
       "auto: native if the driver supports it, else generic",
       "",
       0,
       0,
       {"auto", "native", "generic"}},
      {"", "interface_wait_seconds", "--interface-wait-seconds", &Config::interface_wait_seconds,
       "at start, how long to wait for a configured interface that does not exist yet (a VLAN, "
       "a bond, a late NIC) before failing (0: fail at once)",
       "s", 0, 3600},
      {"",
       "policy_dir",
       "--policy-dir",
       &Config::policy_dir,
       "directory of *.yaml policies, merged; reloaded on change and on SIGHUP",
       "",
       0,
       0,
       {},
       O::kNonEmpty},
      {"", "metrics_listen", "--metrics-listen", &Config::metrics_listen,
       "address:port of the Prometheus endpoint ('' disables it)", "", 0, 0},
      {"",
       "control_socket",
       "--control-socket",
       &Config::control_socket,
       "Unix socket for rlctl (mode 0600)",
       "",
       0,
       0,
       {},
       O::kAbsolutePath},
      {"",
       "pin_root",
       "--pin-root",
       &Config::pin_root,
       "bpffs directory for pinned maps and links: the limiter survives rld restarts",
       "",
       0,
       0,
       {},
       O::kAbsolutePath},
      {"", "key_capacity", "--key-capacity", &Config::key_capacity,
       "tracked keys, " + slot_bytes + " bytes each", "keys", 64, 1 << 28},
      {"", "source_prefixes", "--source-prefixes", &Config::source_prefixes,
       "source prefixes a policy may hold per family, sets read from files included; the "
       "kernel's memory grows with those a policy holds (about 100 to 200 bytes each)",
       "prefixes", 1024, RL_MAX_PREFIXES / 2},
      {"", "max_rules", "--max-rules", &Config::max_rules,
       "rules a policy may hold, rounded up to a multiple of 64; the kernel's memory for rule "
       "bitmaps grows with it (16,384 classes of a bit per rule, per generation)",
       "rules", 64, RL_MAX_RULES_CAP},
      {"", "key_table_full", "--key-table-full", &Config::key_table_full,
       "use the whole key table from the start instead of growing it as keys arrive: no new "
       "source meets a full set while it grows, but a few keys cost more cache misses",
       "", 0, 0},
      {"", "offender_capacity", "--offender-capacity", &Config::offender_capacity,
       "offenders kept for rlctl top, about 64 bytes each (the least recent go)", "offenders", 1,
       1 << 24},
      {"", "traffic_sample_shift", "--traffic-sample-shift", &Config::traffic_sample_shift,
       "sample 1 in 2^k packets of matched rules for rlctl top --by traffic (0: off; 10: 1 in "
       "1,024)",
       "", 0, RL_TRAFFIC_SAMPLE_SHIFT_MAX},
  };
}

// How rld runs: logging, reloads, exit, and its threads' priorities.
std::vector<ConfigOption> runtime_options() {
  return {
      {"",
       "log_level",
       "--log-level",
       &Config::log_level,
       "least severe level logged",
       "",
       0,
       0,
       {"debug", "info", "warn", "error"}},
      {"", "reload_debounce_ms", "--reload-debounce-ms", &Config::reload_debounce_ms,
       "quiet time after a policy file change before reloading", "ms", 0, 60000},
      {"", "reload_timeout_ms", "--reload-timeout-ms", &Config::reload_timeout_ms,
       "time a policy load may take; a slower one is rejected and the policy in force stays", "ms",
       10, 600000},
      {"", "detach_on_exit", "--detach-on-exit", &Config::detach_on_exit,
       "detach from the interfaces on SIGTERM (default: keep enforcing; rld --cleanup removes "
       "everything)",
       "", 0, 0},
      {"",
       "netfilter_sysctl_dir",
       "--netfilter-sysctl-dir",
       &Config::netfilter_sysctl_dir,
       "directory holding the nf_conntrack_tcp_loose sysctl that syn_cookies rules set (a "
       "container with a read-only /proc/sys: the node's /proc/sys/net/netfilter mounted "
       "read-write elsewhere)",
       "",
       0,
       0,
       {},
       O::kAbsolutePath},
      {"", "loop_realtime_priority", "--loop-realtime-priority", &Config::loop_realtime_priority,
       "SCHED_FIFO priority of the thread answering rlctl and signals, ahead of a flood's "
       "ksoftirqd and NAPI threads (needs CAP_SYS_NICE; 0: loop_nice instead)",
       "", 0, 99},
      {"", "loop_nice", "--loop-nice", &Config::loop_nice,
       "nice value of that thread when loop_realtime_priority is 0 (below 0 needs CAP_SYS_NICE)",
       "", -20, 19},
      {"", "metrics_realtime_priority", "--metrics-realtime-priority",
       &Config::metrics_realtime_priority,
       "SCHED_FIFO priority of the metrics endpoint's threads, so scrapes are answered during a "
       "flood (needs CAP_SYS_NICE; 0: not real-time)",
       "", 0, 99},
  };
}

std::vector<ConfigOption> cluster_options() {
  return {
      {"cluster", "redis_host", "--redis-host", &Config::redis_host,
       "Redis address for cluster-wide limits ('' and no redis_socket: cluster limits off)", "", 0,
       0},
      {"cluster", "redis_port", "--redis-port", &Config::redis_port, "Redis port", "", 1, 65535},
      {"cluster", "redis_socket", "--redis-socket", &Config::redis_socket,
       "Redis Unix socket (instead of host and port)", "", 0, 0},
      {"cluster", "redis_sentinels", "--redis-sentinel", &Config::redis_sentinels,
       "Redis Sentinel addresses (host:port), asked for the master of redis_master_name "
       "(instead of host, port and socket)",
       "", 0, 0},
      {"cluster", "redis_cluster_nodes", "--redis-cluster-node", &Config::redis_cluster_nodes,
       "Redis Cluster nodes (host:port), some or all, from which the slots are learnt "
       "(instead of host, port, socket and sentinels)",
       "", 0, 0},
      {"cluster", "redis_master_name", "--redis-master-name", &Config::redis_master_name,
       "the master's name in Sentinel (with redis_sentinels)", "", 0, 0},
      {"cluster", "redis_sentinel_user", "--redis-sentinel-user", &Config::redis_sentinel_user,
       "the sentinels' ACL user, if they have one", "", 0, 0},
      {"cluster",
       "redis_sentinel_password",
       "--redis-sentinel-password",
       &Config::redis_sentinel_password,
       "the sentinels' own password (AUTH), not the master's",
       "",
       0,
       0,
       {},
       O::kAny,
       true},
      {"cluster", "redis_user", "--redis-user", &Config::redis_user,
       "Redis ACL user (AUTH user password; needs redis_password); '': the default user", "", 0, 0},
      {"cluster",
       "redis_password",
       "--redis-password",
       &Config::redis_password,
       "Redis password (AUTH); a flag's value is visible to every local user, prefer the file",
       "",
       0,
       0,
       {},
       O::kAny,
       true},
      {"cluster", "redis_db", "--redis-db", &Config::redis_db, "Redis database number", "", 0,
       1 << 20},
      {"cluster", "redis_tls", "--redis-tls", &Config::redis_tls,
       "TLS to Redis: servers, sentinels and cluster nodes alike, each server's certificate "
       "verified",
       "", 0, 0},
      {"cluster", "redis_tls_ca_file", "--redis-tls-ca-file", &Config::redis_tls_ca_file,
       "PEM file of the CAs that sign the Redis servers' certificates ('': the system's CAs)", "",
       0, 0},
      {"cluster", "redis_tls_cert_file", "--redis-tls-cert-file", &Config::redis_tls_cert_file,
       "PEM client certificate, for servers that require one (tls-auth-clients)", "", 0, 0},
      {"cluster", "redis_tls_key_file", "--redis-tls-key-file", &Config::redis_tls_key_file,
       "PEM private key of redis_tls_cert_file; keep it mode 0600", "", 0, 0},
      {"cluster", "redis_tls_server_name", "--redis-tls-server-name",
       &Config::redis_tls_server_name,
       "name every server's certificate must carry, also sent as SNI ('': the address connected "
       "to, which the certificate must then list)",
       "", 0, 0},
      {"cluster", "connect_timeout_ms", "--redis-connect-timeout-ms",
       &Config::redis_connect_timeout_ms, "time allowed to connect to Redis", "ms", 1, 60000},
      {"cluster", "command_timeout_ms", "--redis-command-timeout-ms",
       &Config::redis_command_timeout_ms,
       "time allowed for one Redis command; must cover the largest sync inside Redis", "ms", 1,
       600000},
      {"cluster",
       "key_prefix",
       "--redis-key-prefix",
       &Config::redis_key_prefix,
       "prefix of rl's keys in Redis",
       "",
       0,
       0,
       {},
       O::kNonEmpty},
      {"cluster", "node_name", "--node-name", &Config::node_name,
       "this node's name in the cluster ('': the host name)", "", 0, 0},
      {"cluster", "sync_interval_ms", "--sync-interval-ms", &Config::sync_interval_ms,
       "cluster sync interval", "ms", 10, 60000},
      {"cluster", "nodes", "--cluster-nodes", &Config::cluster_nodes,
       "expected fleet size, for each node's share of a cluster limit (0: the nodes seen in "
       "Redis)",
       "nodes", 0, 65535},
  };
}

// Every option, in the order of rld --help and the docs.
std::vector<ConfigOption> make_table() {
  std::vector<ConfigOption> all = datapath_options();
  for (auto part : {runtime_options(), cluster_options()})
    all.insert(all.end(), std::make_move_iterator(part.begin()),
               std::make_move_iterator(part.end()));
  return all;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string range_text(const ConfigOption& o) {
  return std::to_string(o.min) + "-" + std::to_string(o.max);
}

Error out_of_range(const ConfigOption& o, const std::string& value) {
  return Error{ERANGE, value + " is out of range: " + range_text(o) +
                           (o.unit.empty() ? "" : " " + std::string(o.unit))};
}

template <class... F>
struct Visit : F... {
  using F::operator()...;
};
template <class... F>
Visit(F...) -> Visit<F...>;

}  // namespace

const std::vector<ConfigOption>& config_options() {
  static const std::vector<ConfigOption> table = make_table();
  return table;
}

std::vector<std::string> config_sections() {
  std::vector<std::string> out;
  for (const auto& o : config_options())
    if (!o.section.empty() && std::find(out.begin(), out.end(), o.section) == out.end())
      out.emplace_back(o.section);
  return out;
}

std::string ConfigOption::long_flag() const {
  auto at = flag.find("--");
  return std::string(at == std::string_view::npos ? flag : flag.substr(at));
}

Status check_option(const ConfigOption& o, const Config& cfg) {
  auto number = [&](int64_t v) -> Status {
    if (v < o.min || v > o.max) return out_of_range(o, std::to_string(v));
    return {};
  };
  return std::visit(
      Visit{
          [&](std::string Config::*f) -> Status {
            const std::string& v = cfg.*f;
            if (!o.choices.empty() &&
                std::find(o.choices.begin(), o.choices.end(), v) == o.choices.end())
              return Error{EINVAL, "'" + v + "' is not one of " + join(o.choices, ", ")};
            if (o.check == O::kNonEmpty && v.empty()) return Error{EINVAL, "must not be empty"};
            if (o.check == O::kAbsolutePath && (v.empty() || v[0] != '/'))
              return Error{EINVAL, "must be an absolute path"};
            return {};
          },
          [&](std::vector<std::string> Config::*f) -> Status {
            for (const auto& s : cfg.*f)
              if (s.empty()) return Error{EINVAL, "an empty name in the list"};
            return {};
          },
          [&](uint32_t Config::*f) { return number(cfg.*f); },
          [&](int Config::*f) { return number(cfg.*f); },
          [&](bool Config::*) { return Status{}; },
      },
      o.field);
}

Status set_option(const ConfigOption& o, const std::string& text, Config& cfg) {
  auto integer = [&](auto Config::*f) -> Status {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc::result_out_of_range)
      return Error{ERANGE, text + " is out of range: " + range_text(o)};
    if (ec != std::errc() || end != text.data() + text.size() || text.empty())
      return Error{EINVAL, "expected a whole number, got '" + text + "'"};
    if (v < o.min || v > o.max) return out_of_range(o, text);
    cfg.*f = static_cast<std::remove_reference_t<decltype(cfg.*f)>>(v);
    return {};
  };
  Status s = std::visit(Visit{
                            [&](std::string Config::*f) -> Status {
                              cfg.*f = text;
                              return {};
                            },
                            [&](std::vector<std::string> Config::*f) -> Status {
                              cfg.*f = {text};
                              return {};
                            },
                            [&](uint32_t Config::*f) { return integer(f); },
                            [&](int Config::*f) { return integer(f); },
                            [&](bool Config::*f) -> Status {
                              if (text == "true" || text == "yes" || text == "on") {
                                cfg.*f = true;
                              } else if (text == "false" || text == "no" || text == "off") {
                                cfg.*f = false;
                              } else {
                                return Error{EINVAL, "expected true or false, got '" + text + "'"};
                              }
                              return {};
                            },
                        },
                        o.field);
  if (!s) return s;
  return check_option(o, cfg);
}

Status set_option_list(const ConfigOption& o, const std::vector<std::string>& items, Config& cfg) {
  auto* f = std::get_if<std::vector<std::string> Config::*>(&o.field);
  if (!f) return Error{EINVAL, "takes one value, not a list"};
  cfg.** f = items;
  return check_option(o, cfg);
}

std::string option_text(const ConfigOption& o, const Config& cfg) {
  return std::visit(
      Visit{
          [&](std::string Config::*f) { return cfg.*f; },
          [&](std::vector<std::string> Config::*f) { return "[" + join(cfg.*f, ", ") + "]"; },
          [&](uint32_t Config::*f) { return std::to_string(cfg.*f); },
          [&](int Config::*f) { return std::to_string(cfg.*f); },
          [&](bool Config::*f) { return std::string(cfg.*f ? "true" : "false"); },
      },
      o.field);
}

std::string option_facts(const ConfigOption& o) {
  std::string facts;
  auto add = [&](const std::string& s) { facts += (facts.empty() ? "" : "; ") + s; };
  if (!o.choices.empty()) add(join(o.choices, ", "));
  if (o.min != o.max) add((o.unit.empty() ? "" : std::string(o.unit) + ", ") + range_text(o));
  std::string def = option_text(o, Config{});
  if (!o.secret && def != "[]") add("default " + (def.empty() ? "''" : def));
  add("rld.yaml: " + o.path());
  return "[" + facts + "]";
}

}  // namespace rl::daemon
