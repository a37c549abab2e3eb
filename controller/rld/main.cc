// SPDX-License-Identifier: GPL-2.0-only
// rld: attaches the rate limiter to interfaces and keeps it in sync with the policy directory.
//
//   rld --config /etc/rl/rld.yaml
//   rld --interface eth0 --policy-dir /etc/rl/policies
//   rld --check-config       check the configuration and every policy file, touch nothing
//   rld --cleanup            detach from every interface and remove all pinned state
#include <CLI/CLI.hpp>
#include <deque>
#include <iostream>

#include "common/cli_exit.h"
#include "common/log.h"
#include "daemon/check_config.h"
#include "daemon/config.h"
#include "daemon/config_options.h"
#include "daemon/daemon.h"
#include "daemon/synproxy.h"
#include "datapath/pin_lock.h"
#include "datapath/pin_scope.h"
#include "datapath/pins.h"
#include "datapath/xdp_link.h"

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

// Detaches what the pins hold and removes them; fails if rl's program is still attached to an
// interface afterwards (held by a link these pins do not know, e.g. an rld whose pins live in
// another mount namespace's bpffs).
int cleanup(const Config& cfg) {
  // Not from under a running rld: it would keep writing maps that no longer have pins.
  auto lock = rl::lock_pin_root(cfg.pin_root);
  if (!lock && lock.error().err != ENOENT) {
    rl::log::error("cleanup refused", {{"error", lock.error().str()}});
    return rl::kExitFailure;
  }
  int rc = rl::kExitOk;
  for (const auto& ifname : rl::pinned_links(cfg.pin_root))
    if (auto s = rl::detach_xdp(ifname, cfg.pin_root); !s) {
      rl::log::error("detach failed", {{"interface", ifname}, {"error", s.error().str()}});
      rc = rl::kExitFailure;
    } else {
      rl::log::info("detached", {{"interface", ifname}});
    }
  if (auto s = rl::daemon::SynProxy::remove(); !s)
    rl::log::error("cleanup failed", {{"error", s.error().str()}});
  if (auto s = rl::remove_pins(cfg.pin_root); !s) {
    rl::log::error("cleanup failed", {{"error", s.error().str()}});
    return rl::kExitFailure;
  }
  rl::log::info("removed pinned state", {{"pin_root", cfg.pin_root}});
  for (const auto& ifname : rl::interfaces_running_rl()) {
    std::string why = "it is held by a link outside " + cfg.pin_root +
                      ": an rld still running, or one whose pins are in another mount "
                      "namespace's bpffs (ip netns exec); stop that rld, or run rld --cleanup "
                      "in its mount namespace";
    auto scope = rl::pin_scope(cfg.pin_root);
    if (scope && scope->private_pins()) why += "; " + scope->warning(cfg.pin_root);
    rl::log::error("rl is still attached", {{"interface", ifname}, {"reason", why}});
    rc = rl::kExitFailure;
  }
  return rc;
}

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
      "Exit status: 0 ok (--check-config: valid); 1 failure (a bad configuration file or policy, "
      "the kernel refused, --cleanup left rl attached); 2 usage error (unknown flag, bad flag "
      "value).");
  std::string config_path = "/etc/rl/rld.yaml";
  bool cleanup_only = false, check_only = false;
  app.add_option("-c,--config", config_path, "configuration file (YAML); flags override it")
      ->capture_default_str();
  app.add_flag("--check-config", check_only,
               "check the configuration and every policy file, print what rld would run, and "
               "exit (0 valid, 1 not); touches no kernel state");
  app.add_flag("--cleanup", cleanup_only,
               "detach everything rld attached, remove its pins, and exit");
  SettingFlags flags;
  flags.add_to(app);
  if (auto rc = rl::parse_command_line(app, argc, argv)) return *rc;

  Config cfg;
  bool explicit_config = app.get_option("--config")->count() > 0;
  if (explicit_config || ::access(config_path.c_str(), R_OK) == 0) {
    if (auto s = rl::daemon::load_config_file(config_path, cfg); !s) {
      std::cerr << s.error().message << "\n";
      return rl::kExitFailure;
    }
  }
  if (auto s = flags.apply(cfg); !s) {
    std::cerr << "rld: " << s.error().message << "\n";
    return rl::kExitUsage;
  }
  if (auto s = rl::daemon::validate_config(cfg); !s) {
    std::cerr << "rld: " << s.error().message << "\n";
    return rl::kExitFailure;
  }
  rl::log::Level level;
  rl::log::parse_level(cfg.log_level, &level);  // the option table admits only valid levels
  rl::log::set_level(level);

  if (check_only) {
    auto c = rl::daemon::check_config(cfg);
    std::cout << c.summary;
    for (const auto& e : c.errors) std::cerr << e << "\n";
    std::cout << (c.ok() ? "configuration and policy are valid\n"
                         : "configuration or policy is NOT valid\n");
    return c.ok() ? rl::kExitOk : rl::kExitFailure;
  }
  if (cleanup_only) return cleanup(cfg);

  auto d = rl::daemon::Daemon::start(cfg);
  if (!d) {
    rl::log::error("rld failed to start", {{"error", d.error().str()}});
    return rl::kExitFailure;
  }
  return (*d)->run();
}
