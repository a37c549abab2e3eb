#include "daemon/config.h"

#include <yaml-cpp/yaml.h>

#include "datapath/xdp_link.h"

namespace rl::daemon {
namespace {

std::string where(const std::string& file, const YAML::Node& n) {
  const auto& m = n.Mark();
  return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

}  // namespace

Status load_config_file(const std::string& path, Config& cfg) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return Error{ENOENT, path + ": error: cannot read configuration file"};
  } catch (const YAML::ParserException& e) {
    return Error{EINVAL, path + ":" + std::to_string(e.mark.line + 1) + ":" +
                             std::to_string(e.mark.column + 1) + ": error: " + e.msg};
  }
  if (root.IsNull()) return {};
  if (!root.IsMap())
    return Error{EINVAL, where(path, root) + ": error: configuration must be a mapping"};
  for (const auto& kv : root) {
    std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    auto bad = [&](const std::string& what) {
      return Error{EINVAL, where(path, v) + ": error: " + key + " " + what};
    };
    try {
      if (key == "interfaces") {
        if (!v.IsSequence()) return bad("must be a list of interface names");
        cfg.interfaces.clear();
        for (const auto& i : v) cfg.interfaces.push_back(i.as<std::string>());
      } else if (key == "xdp_mode") {
        cfg.xdp_mode = v.as<std::string>();
      } else if (key == "policy_dir") {
        cfg.policy_dir = v.as<std::string>();
      } else if (key == "metrics_listen") {
        cfg.metrics_listen = v.IsNull() ? "" : v.as<std::string>();
      } else if (key == "control_socket") {
        cfg.control_socket = v.as<std::string>();
      } else if (key == "pin_root") {
        cfg.pin_root = v.as<std::string>();
      } else if (key == "key_capacity") {
        cfg.key_capacity = v.as<uint32_t>();
      } else if (key == "offender_capacity") {
        cfg.offender_capacity = v.as<uint32_t>();
      } else if (key == "log_level") {
        cfg.log_level = v.as<std::string>();
      } else if (key == "reload_debounce_ms") {
        cfg.reload_debounce_ms = v.as<uint32_t>();
      } else if (key == "detach_on_exit") {
        cfg.detach_on_exit = v.as<bool>();
      } else if (key == "cluster") {
        if (!v.IsMap()) return bad("must be a mapping");
        for (const auto& ckv : v) {
          std::string ck = ckv.first.as<std::string>();
          const YAML::Node& cv = ckv.second;
          if (ck == "redis_host")
            cfg.redis_host = cv.as<std::string>();
          else if (ck == "redis_port")
            cfg.redis_port = cv.as<int>();
          else if (ck == "redis_socket")
            cfg.redis_socket = cv.as<std::string>();
          else if (ck == "redis_password")
            cfg.redis_password = cv.as<std::string>();
          else if (ck == "redis_db")
            cfg.redis_db = cv.as<int>();
          else if (ck == "connect_timeout_ms")
            cfg.redis_connect_timeout_ms = cv.as<uint32_t>();
          else if (ck == "command_timeout_ms")
            cfg.redis_command_timeout_ms = cv.as<uint32_t>();
          else if (ck == "key_prefix")
            cfg.redis_key_prefix = cv.as<std::string>();
          else if (ck == "node_name")
            cfg.node_name = cv.as<std::string>();
          else if (ck == "sync_interval_ms")
            cfg.sync_interval_ms = cv.as<uint32_t>();
          else if (ck == "nodes")
            cfg.cluster_nodes = cv.as<uint32_t>();
          else
            return Error{EINVAL,
                         where(path, ckv.first) + ": error: unknown key '" + ck + "' in cluster"};
        }
      } else {
        return Error{EINVAL, where(path, kv.first) + ": error: unknown key '" + key + "'"};
      }
    } catch (const YAML::Exception&) {
      return bad("has the wrong type");
    }
  }
  return validate_config(cfg);
}

Status validate_config(const Config& cfg) {
  if (!parse_xdp_mode(cfg.xdp_mode)) return parse_xdp_mode(cfg.xdp_mode).error();
  if (cfg.key_capacity < 64 || cfg.key_capacity > (1u << 28))
    return Error{EINVAL, "key_capacity must be between 64 and 268435456"};
  if (cfg.offender_capacity < 1 || cfg.offender_capacity > (1u << 24))
    return Error{EINVAL, "offender_capacity must be between 1 and 16777216"};
  if (cfg.pin_root.empty() || cfg.pin_root[0] != '/')
    return Error{EINVAL, "pin_root must be an absolute path"};
  if (cfg.policy_dir.empty()) return Error{EINVAL, "policy_dir must be set"};
  if (cfg.sync_interval_ms < 10 || cfg.sync_interval_ms > 60000)
    return Error{EINVAL, "sync_interval_ms must be between 10 and 60000"};
  if (cfg.redis_port <= 0 || cfg.redis_port > 65535)
    return Error{EINVAL, "redis_port must be 1-65535"};
  return {};
}

}  // namespace rl::daemon
