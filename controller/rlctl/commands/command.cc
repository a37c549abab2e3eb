// SPDX-License-Identifier: GPL-2.0-only
#include "rlctl/commands/command.h"

#include <ctime>
#include <iostream>
#include <sstream>

#include "common/cli_exit.h"
#include "control/client.h"
#include "policy/rate.h"
#include "rlctl/commands/render.h"

namespace rlctl {

const std::vector<Command>& command_table() {
  static const std::vector<Command> kCommands = {
      {"status",
       "interfaces, XDP mode, policy generation, last reload, key table, uptime; exits 4 while "
       "rld is not ready",
       bind_status},
      {"attach", "attach the limiter to an interface", bind_attach},
      {"detach", "detach the limiter from an interface", bind_detach},
      {"policy", "validate, inspect and apply policies", bind_policy},
      {"allow", "runtime allow entries, on top of the policy lists; they expire on their own",
       bind_allow},
      {"deny", "runtime deny entries, on top of the policy lists; they expire on their own",
       bind_deny},
      {"override",
       "another rate for the sources of a prefix within a rule, outside the policy; kept across "
       "restarts",
       bind_override},
      {"unblock", "forget an address's limiter state and block in every rule", bind_unblock},
      {"top",
       "current offenders with their over-limit packet counts, or (--by traffic) the keys that "
       "send the most",
       bind_top},
      {"key", "one limiter key's state, read from the data path", bind_key},
      {"stats", "per-rule counters and rates, and the data path's global counters", bind_stats},
      {"cluster", "cluster-wide limits through Redis", bind_cluster},
      {"completion", "print shell completion (bash)", bind_completion},
      {"help", "the help of rlctl or of a command: rlctl help policy validate", bind_help},
      {"version", "print rlctl's version, as --version does", bind_version},
      // For the build: rlctl(8)'s list of commands (hidden from --help and completion).
      {"man-commands", "rlctl(8)'s COMMANDS section, as help2man include text", bind_man_commands},
  };
  return kCommands;
}

// Whole seconds, a fraction rounded up. Under a second is refused: 0 seconds is how an entry
// that never expires is sent, so "--ttl 500ms" must not become one.
uint64_t parse_ttl_seconds(const std::string& ttl) {
  if (ttl.empty()) return 0;
  auto d = rl::policy::parse_duration_ns(ttl);
  if (!d) {
    std::cerr << "rlctl: --ttl: " << d.error().message << "\n";
    std::exit(rl::kExitUsage);
  }
  constexpr uint64_t kSec = 1'000'000'000ULL;
  if (*d < kSec) {
    std::cerr << "rlctl: --ttl " << ttl
              << " is under a second; runtime entries and overrides last whole seconds "
                 "(leave --ttl out for one that does not expire)\n";
    std::exit(rl::kExitUsage);
  }
  return *d / kSec + (*d % kSec != 0);
}

Json call_or_exit(const Globals& g, const std::string& cmd, const Json& args) {
  auto r = rl::control::call(g.socket, rl::control::request(cmd, args));
  if (!r) {
    std::cerr << "rlctl: " << r.error().message << "\n";
    std::exit(rl::kExitUnreachable);
  }
  auto reply = rl::control::read_reply(*r);
  if (!reply.ok) {
    if (g.output == "json") {
      std::cout << r->dump(2) << "\n";
    } else {
      std::cerr << "rlctl: " << reply.error << "\n";
      for (const auto& e : reply.errors) std::cerr << e << "\n";
    }
    std::exit(rl::kExitFailure);
  }
  return reply.data;
}

bool json_out(const Globals& g, const Json& data) {
  if (g.output != "json") return false;
  std::cout << rl::control::to_text(data, 2) << "\n";
  return true;
}

std::string local_time(int64_t unix_seconds) {
  std::time_t at = unix_seconds;
  char buf[32];
  std::strftime(buf, sizeof(buf), "%F %T", std::localtime(&at));
  return buf;
}

std::string num(double v) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  s << v;
  return s.str();
}

}  // namespace rlctl
