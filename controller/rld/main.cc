// SPDX-License-Identifier: GPL-2.0-only
// rld: attaches the rate limiter to interfaces and keeps it in sync with the policy directory.
//
//   rld --config /etc/rl/rld.yaml
//   rld --interface eth0 --policy-dir /etc/rl/policies
//   rld --check-config       check the configuration and every policy file, touch nothing
//   rld --cleanup            stop a running rld, detach from every interface, remove all state
#include <CLI/CLI.hpp>
#include <deque>
#include <iostream>

#include "common/cli_exit.h"
#include "common/log.h"
#include "daemon/cleanup.h"
#include "daemon/config/check_config.h"
#include "daemon/config/config.h"
#include "daemon/config/config_options.h"
#include "daemon/daemon.h"

namespace {

using rl::daemon::Config;
using rl::daemon::ConfigOption;

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// One flag per setting of the option table; what the operator typed, applied over the file.
struct SettingFlags {
  std::deque<std::string> text;
  std::deque<std::vector<std::string>> lists;
  std::deque<bool> bools;
  std::vector<std::pair<const ConfigOption*, CLI::Option*>> added;

  void add_to(CLI::App& app) {
    for (const auto& o : rl::daemon::config_options()) {
      std::string desc = o.help + " " + rl::daemon::option_facts(o);
      std::string flag(o.flag);
      CLI::Option* opt;
      if (std::holds_alternative<bool Config::*>(o.field))
        opt = app.add_flag(flag, bools.emplace_back(), desc);
      else if (std::holds_alternative<std::vector<std::string> Config::*>(o.field))
        opt = app.add_option(flag, lists.emplace_back(), desc);
      else
        opt = app.add_option(flag, text.emplace_back(), desc);
      if (o.min != o.max) opt->type_name(o.unit.empty() ? "N" : upper(o.unit));
      opt->group(o.section.empty() ? "Settings" : "Settings (" + std::string(o.section) + ":)");
      added.emplace_back(&o, opt);
    }
  }

  // Flags win over the file; a bad value is a usage error naming the flag.
  rl::Status apply(Config& cfg) const {
    size_t t = 0, l = 0, b = 0;
    for (const auto& [o, opt] : added) {
      bool is_bool = std::holds_alternative<bool Config::*>(o->field);
      bool is_list = std::holds_alternative<std::vector<std::string> Config::*>(o->field);
      size_t i = is_bool ? b++ : is_list ? l++ : t++;
      if (!opt->count()) continue;
      rl::Status s = is_list   ? rl::daemon::set_option_list(*o, lists[i], cfg)
                     : is_bool ? rl::daemon::set_option(*o, bools[i] ? "true" : "false", cfg)
                               : rl::daemon::set_option(*o, text[i], cfg);
      if (!s) return rl::Error{s.error().err, o->long_flag() + ": " + s.error().message};
    }
    return {};
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "rld: kernel-level (XDP) rate limiter daemon.\n\n"
      "Attaches the limiter to interfaces, applies every *.yaml policy in the policy\n"
      "directory (reloading on change and on SIGHUP), exports Prometheus metrics and\n"
      "answers rlctl on a Unix socket. The limiter stays attached and enforcing when rld\n"
      "stops or crashes; a restarted rld adopts it with its state. Every setting of the\n"
      "configuration file is also a flag; flags win.",
      "rld"};
  app.set_version_flag("--version", std::string("rld ") + RL_VERSION);
  app.footer(
      "Exit status: 0 ok (--check-config: valid); 1 failure (the kernel refused, --cleanup left "
      "rl attached; --check-config: a bad configuration file or policy); 2 usage error (unknown "
      "flag, bad flag value); 6 the configuration file or the policy stopped the start (not "
      "configured: systemd does not restart rld on it).");
  std::string config_path = "/etc/rl/rld.yaml";
  bool cleanup_only = false, check_only = false, check_connect = false;
  app.add_option("-c,--config", config_path, "configuration file (YAML); flags override it")
      ->capture_default_str();
  app.add_flag("--check-config", check_only,
               "check the configuration and every policy file, print what rld would run, and "
               "exit (0 valid, 1 not); touches no kernel state");
  app.add_flag("--connect", check_connect,
               "with --check-config: also try the configured Redis (sentinels, cluster nodes) "
               "with its credentials and TLS, and name each server that fails")
      ->needs("--check-config");
  app.add_flag("--cleanup", cleanup_only,
               "stop a running rld, detach everything rld attached, remove its pins and its "
               "SYNPROXY table (restoring the sysctl it changed), and exit; works with a broken or "
               "missing configuration file (then on the default or --pin-root pin root)");
  SettingFlags flags;
  flags.add_to(app);
  if (auto rc = rl::parse_command_line(app, argc, argv)) return *rc;

  Config cfg;
  bool explicit_config = app.get_option("--config")->count() > 0;
  if (cleanup_only) {
    // A removal must not depend on the configuration: a broken or missing file leaves the
    // defaults (--pin-root names another pin root), and the values are not validated.
    auto c = rl::daemon::cleanup_config(config_path, explicit_config);
    if (!c.note.empty()) rl::log::warn("configuration not used", {{"reason", c.note}});
    if (auto s = flags.apply(c.cfg); !s) {
      std::cerr << "rld: " << s.error().message << "\n";
      return rl::kExitUsage;
    }
    return rl::daemon::cleanup(c.cfg);
  }
  if (explicit_config || ::access(config_path.c_str(), R_OK) == 0) {
    if (auto s = rl::daemon::load_config_file(config_path, cfg); !s) {
      std::cerr << s.error().message << "\n";
      return check_only ? rl::kExitFailure : rl::kExitNotConfigured;
    }
  }
  if (auto s = flags.apply(cfg); !s) {
    std::cerr << "rld: " << s.error().message << "\n";
    return rl::kExitUsage;
  }
  if (auto s = rl::daemon::validate_config(cfg); !s) {
    std::cerr << "rld: " << s.error().message << "\n";
    return check_only ? rl::kExitFailure : rl::kExitNotConfigured;
  }
  rl::log::Level level;
  rl::log::parse_level(cfg.log_level, &level);  // the option table admits only valid levels
  rl::log::set_level(level);

  if (check_only) {
    auto c = rl::daemon::check_config(cfg, check_connect);
    std::cout << c.summary;
    for (const auto& w : c.warnings) std::cerr << "warning: " << w << "\n";
    for (const auto& e : c.errors) std::cerr << e << "\n";
    std::cout << (c.ok() ? "configuration and policy are valid\n"
                         : "configuration or policy is NOT valid\n");
    return c.ok() ? rl::kExitOk : rl::kExitFailure;
  }

  auto d = rl::daemon::Daemon::start(cfg);
  if (!d) {
    bool settings = d.error().err == rl::daemon::kNotConfiguredErrno;
    rl::log::error("rld failed to start",
                   {{"error", settings ? d.error().message : d.error().str()}});
    return settings ? rl::kExitNotConfigured : rl::kExitFailure;
  }
  return (*d)->run();
}
