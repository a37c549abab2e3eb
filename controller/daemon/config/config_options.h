// SPDX-License-Identifier: GPL-2.0-only
// rld's settings, each declared once: its YAML key, flag, type (the Config member it fills),
// help, unit and bounds. The table drives the configuration file's parser, rld's flags and
// --help, `rld --check-config`'s listing, and the test that keeps rld.yaml.example and the docs
// listing exactly these settings. A default is the Config member's initializer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/result.h"
#include "daemon/config/config.h"

namespace rl::daemon {

struct ConfigOption {
  std::string_view section;  // "" (top level) or "cluster"
  std::string_view key;      // the YAML key within its section
  std::string_view flag;     // CLI11 names, e.g. "-i,--interface"
  std::variant<std::string Config::*, std::vector<std::string> Config::*, uint32_t Config::*,
               int Config::*, bool Config::*>
      field;
  std::string help;
  std::string_view unit;                  // shown in --help: "ms", "keys", ...
  int64_t min = 0, max = 0;               // numbers: the accepted range
  std::vector<std::string> choices = {};  // strings: the accepted values, if limited
  enum Check { kAny, kNonEmpty, kAbsolutePath } check = kAny;
  bool secret = false;  // never printed (rld --check-config shows "(set)")

  // "cluster.redis_host" or "xdp_mode": how errors and listings name the setting.
  std::string path() const {
    return section.empty() ? std::string(key) : std::string(section) + "." + std::string(key);
  }
  // The long flag alone, e.g. "--interface".
  std::string long_flag() const;
};

const std::vector<ConfigOption>& config_options();

// The sections that group settings in the file ("cluster").
std::vector<std::string> config_sections();

// Parses `text` (a flag's value) into the option's field of `cfg` and checks it; the error
// says what is accepted, without a location (callers add file:line:col or the flag).
Status set_option(const ConfigOption& o, const std::string& text, Config& cfg);
Status set_option_list(const ConfigOption& o, const std::vector<std::string>& items, Config& cfg);

// The option's value in `cfg` checked against its bounds and choices.
Status check_option(const ConfigOption& o, const Config& cfg);

// The value as rld.yaml would spell it: "auto", "[eth0, eth1]", "1048576", "" (empty).
std::string option_text(const ConfigOption& o, const Config& cfg);

// "[ms, 10-60000; default 100; rld.yaml: cluster.sync_interval_ms]": the facts --help adds.
std::string option_facts(const ConfigOption& o);

}  // namespace rl::daemon
