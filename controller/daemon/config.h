// rld's configuration: a YAML file (--config, default /etc/rl/rld.yaml) whose every setting can
// also be given as a flag; flags win.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace rl::daemon {

struct Config {
  std::vector<std::string> interfaces;
  std::string xdp_mode = "auto";  // auto | native | generic
  std::string policy_dir = "/etc/rl/policies";
  std::string metrics_listen = "127.0.0.1:9464";  // empty: no metrics endpoint
  std::string control_socket = "/run/rl/rld.sock";
  std::string pin_root = "/sys/fs/bpf/rl";
  uint32_t key_capacity = 1048576;
  std::string log_level = "info";
  uint32_t reload_debounce_ms = 200;
  bool detach_on_exit = false;
};

// Reads the file into `cfg` (fields it does not mention keep their values). Unknown keys and
// wrong types are errors naming file:line:column.
Status load_config_file(const std::string& path, Config& cfg);

Status validate_config(const Config& cfg);

}  // namespace rl::daemon
