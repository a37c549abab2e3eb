// SPDX-License-Identifier: GPL-2.0-only
// rlctl: the operator's command line for rld.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/cli_exit.h"
#include "control/client.h"
#include "policy/describe.h"
#include "policy/loader.h"
#include "policy/rate.h"
#include "rlctl/commands.h"
#include "rlctl/completion.h"
#include "rlctl/man_page.h"
#include "rlctl/table.h"

namespace {

using rl::control::Json;

struct Globals {
  std::string socket = "/run/rl/rld.sock";
  std::string output = "table";
};

// Calls rld and prints errors; returns the response's data, or exits.
Json call_or_exit(const Globals& g, const std::string& cmd, Json args = Json::object()) {
  auto r = rl::control::call(g.socket, rl::control::request(cmd, std::move(args)));
  if (!r) {
    std::cerr << "rlctl: " << r.error().message << "\n";
    std::exit(rl::kExitUnreachable);
  }
  if (!r->value("ok", false)) {
    if (g.output == "json") {
      std::cout << r->dump(2) << "\n";
    } else {
      std::cerr << "rlctl: " << r->value("error", "request failed") << "\n";
      for (const auto& e : r->value("errors", Json::array()))
        std::cerr << e.get<std::string>() << "\n";
    }
    std::exit(rl::kExitFailure);
  }
  return (*r)["data"];
}

bool json_out(const Globals& g, const Json& data) {
  if (g.output != "json") return false;
  std::cout << rl::control::to_text(data, 2) << "\n";
  return true;
}

std::string num(const Json& v) {
  if (v.is_null()) return "-";
  if (v.is_number_float()) {
    std::ostringstream s;
    s.setf(std::ios::fixed);
    s.precision(1);
    s << v.get<double>();
    return s.str();
  }
  return rl::control::to_text(v);
}

// Policy files for rld, read as the loader reads them (a hostile path cannot hang rlctl), and only
// files rld's policy directory would load: *.yaml or *.yml.
Json read_files(const std::vector<std::string>& paths) {
  Json files = Json::array();
  for (const auto& p : paths) {
    auto ext = std::filesystem::path(p).extension();
    if (ext != ".yaml" && ext != ".yml") {
      std::cerr << "rlctl: " << p << ": a policy file's name ends in .yaml or .yml\n";
      std::exit(1);
    }
    std::string why;
    auto text = rl::policy::read_policy_file(p, &why);
    if (!text) {
      std::cerr << "rlctl: " << rl::policy::printable(p) << ": error: " << why << "\n";
      std::exit(1);
    }
    files.push_back({{"path", p}, {"content", *text}});
  }
  return files;
}

// What `rlctl policy validate` loads: a directory alone is loaded exactly as rld loads its policy
// directory; otherwise each directory stands for its *.yaml/*.yml files (sorted, not hidden),
// merged with the files named, so cross-file checks (duplicate rule names) see them all.
rl::policy::LoadResult load_for_validation(const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (args.size() == 1 && fs::is_directory(args[0], ec)) return rl::policy::load_directory(args[0]);
  std::vector<std::string> paths;
  for (const auto& a : args) {
    if (!fs::is_directory(a, ec)) {
      paths.push_back(a);
      continue;
    }
    std::vector<std::string> in_dir;
    for (const auto& e : fs::directory_iterator(a, ec)) {
      std::string name = e.path().filename();
      auto ext = e.path().extension();
      if (!name.empty() && name[0] != '.' && (ext == ".yaml" || ext == ".yml"))
        in_dir.push_back(e.path());
    }
    std::sort(in_dir.begin(), in_dir.end());
    paths.insert(paths.end(), in_dir.begin(), in_dir.end());
  }
  return rl::policy::load_files(paths);
}

// Whole seconds, a fraction rounded up. Under a second is refused: 0 seconds is how an entry
// that never expires is sent, so "--ttl 500ms" must not become one.
uint64_t parse_ttl(const std::string& ttl) {
  if (ttl.empty()) return 0;
  auto d = rl::policy::parse_duration_ns(ttl);
  if (!d) {
    std::cerr << "rlctl: --ttl: " << d.error().message << "\n";
    std::exit(rl::kExitUsage);
  }
  constexpr uint64_t kSec = 1'000'000'000ULL;
  if (*d < kSec) {
    std::cerr << "rlctl: --ttl " << ttl
              << " is under a second; runtime entries last whole seconds (leave --ttl out for "
                 "one that does not expire)\n";
    std::exit(rl::kExitUsage);
  }
  return *d / kSec + (*d % kSec != 0);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "rlctl: steer rld, the kernel-level (XDP) rate limiter.\n\n"
      "Examples:\n"
      "  rlctl status                      interfaces, policy generation, key table fill\n"
      "  rlctl policy validate web.yaml    check a policy without applying it (no rld needed)\n"
      "  rlctl policy diff web.yaml        what applying it would change\n"
      "  rlctl policy apply web.yaml       validate, install into the policy directory, apply\n"
      "  rlctl deny add 198.51.100.0/24 --ttl 10m\n"
      "                                    drop a network's packets for 10 minutes\n"
      "  rlctl top -n 20                   current offenders by dropped packets\n"
      "  rlctl top --by traffic            the keys sending the most, estimated from samples\n"
      "  rlctl key show 198.51.100.7       one source's tokens, block and drops in each rule\n"
      "  rlctl stats -o json               per-rule counters and rates, for scripts\n\n"
      "Global options (-o, --socket) go before or after the subcommand.",
      "rlctl"};
  app.require_subcommand(1);
  // Subcommands take the global options too: `rlctl stats -o json`.
  app.fallthrough();
  app.footer(
      "Exit status: 0 ok (policy validate: valid); 1 failure (rld refused the request, an "
      "invalid policy, no such rule or interface); 2 usage error (unknown command or option, "
      "bad value); 3 rld's control socket did not answer.");
  const std::string version = std::string("rlctl ") + RL_VERSION;
  app.set_version_flag("--version", version);
  Globals g;
  app.add_option("-s,--socket", g.socket, "rld's control socket")->capture_default_str();
  app.add_option("-o,--output", g.output, "table or json")->check(CLI::IsMember({"table", "json"}));

  // status
  app.add_subcommand("status",
                     "interfaces, XDP mode, policy generation, last reload, key table, uptime")
      ->callback([&] {
        Json d = call_or_exit(g, "status");
        if (json_out(g, d)) return;
        std::cout << "rld " << d["version"].get<std::string>() << ", up " << d["uptime_seconds"]
                  << " s" << (d["adopted"].get<bool>() ? " (adopted a running data path)" : "")
                  << "\n";
        for (const auto& i : d["interfaces"])
          std::cout << "interface " << i["name"].get<std::string>() << ": "
                    << i["mode"].get<std::string>() << "\n";
        if (d["interfaces"].empty()) std::cout << "no interface attached\n";
        if (!d.value("pins_outlive_rld", true))
          std::cout << "WARNING: " << d.value("pin_warning", std::string()) << "\n";
        for (const auto& why : d.value("not_ready", Json::array()))
          std::cout << "NOT READY: " << why.get<std::string>() << "\n";
        const auto& lr = d["last_reload"];
        std::cout << "policy: generation " << d["generation"] << ", " << d["rules"]
                  << " rules from " << d["policy_dir"].get<std::string>() << "\n";
        std::cout << "last reload: " << (lr["ok"].get<bool>() ? "ok" : "FAILED") << " ("
                  << lr["trigger"].get<std::string>() << ")\n";
        for (const auto& e : lr["errors"]) std::cout << "  " << e.get<std::string>() << "\n";
        const auto& k = d["keys"];
        double fill = k["capacity"].get<double>() > 0
                          ? 100.0 * k["tracked"].get<double>() / k["capacity"].get<double>()
                          : 0;
        std::cout << "keys: " << k["tracked"] << " tracked of " << k["capacity"] << " ("
                  << num(Json(fill)) << "%), " << k["blocked"] << " blocked; table in use "
                  << k.value("capacity_in_use", uint64_t{0}) << "\n";
      });

  // attach / detach
  std::string iface, mode = "auto";
  auto* attach = app.add_subcommand("attach", "attach the limiter to an interface");
  attach->add_option("interface", iface, "interface name")->required();
  attach->add_option("--mode", mode, "auto, native or generic")->capture_default_str();
  attach->callback([&] {
    Json d = call_or_exit(g, "attach", {{"interface", iface}, {"mode", mode}});
    if (json_out(g, d)) return;
    std::cout << "attached to " << iface << " (" << d["mode"].get<std::string>() << ")\n";
    if (!d["warning"].get<std::string>().empty())
      std::cout << "warning: " << d["warning"].get<std::string>() << "\n";
  });
  auto* detach = app.add_subcommand("detach", "detach the limiter from an interface");
  detach->add_option("interface", iface, "interface name")->required();
  detach->callback([&] {
    Json d = call_or_exit(g, "detach", {{"interface", iface}});
    if (!json_out(g, d)) std::cout << "detached from " << iface << "\n";
  });

  // policy
  auto* policy = app.add_subcommand("policy", "validate, inspect and apply policies");
  policy->require_subcommand(1);
  std::vector<std::string> files;
  std::string rule_name;
  auto* validate = policy->add_subcommand(
      "validate",
      "check policy files, or a directory as rld loads it (exit 0 valid, 1 invalid); no rld "
      "needed");
  validate->add_option("files", files, "policy files or directories")->required();
  validate->callback([&] {
    auto r = load_for_validation(files);
    if (g.output == "json") {
      Json errs = Json::array();
      for (const auto& e : r.errors) errs.push_back(e.str());
      std::cout << rl::control::to_text(
                       Json{{"valid", r.ok()}, {"errors", errs}, {"rules", r.policy.rules.size()}},
                       2)
                << "\n";
    } else {
      for (const auto& e : r.errors) std::cerr << e.str() << "\n";
      if (r.ok())
        std::cout << "valid: " << r.policy.rules.size() << " rules, " << r.policy.sets.size()
                  << " sets\n";
    }
    std::exit(r.ok() ? 0 : 1);
  });
  policy->add_subcommand("list", "rules in force, in evaluation order")->callback([&] {
    Json d = call_or_exit(g, "policy.list");
    if (json_out(g, d)) return;
    rlctl::Table t({"#", "RULE", "PRIORITY", "ACTION", "MATCH", "LIMIT"});
    for (const auto& r : d["rules"])
      t.row(
          {num(r["position"]), r["name"], num(r["priority"]), r["action"], r["match"], r["limit"]});
    t.print(std::cout);
  });
  auto* show = policy->add_subcommand("show", "one rule in force, with its counters");
  show->add_option("name", rule_name, "rule name")->required();
  show->callback([&] {
    Json d = call_or_exit(g, "policy.show", {{"name", rule_name}});
    if (json_out(g, d)) return;
    for (const char* k : {"name", "where", "match", "limit", "action"})
      std::cout << k << ": " << d[k].get<std::string>() << "\n";
    std::cout << "priority: " << d["priority"] << "\nblock: " << num(d["block_seconds"]) << " s\n";
    if (!d["counters"].is_null())
      for (auto& [k, v] : d["counters"].items()) std::cout << k << ": " << v << "\n";
  });
  auto* diff = policy->add_subcommand("diff", "what applying these files would change");
  diff->add_option("files", files, "policy files")->required();
  diff->callback([&] {
    Json d = call_or_exit(g, "policy.diff", {{"files", read_files(files)}});
    if (json_out(g, d)) return;
    if (d["changes"].empty()) std::cout << "no changes\n";
    for (const auto& c : d["changes"]) std::cout << c.get<std::string>() << "\n";
  });
  auto* apply =
      policy->add_subcommand("apply", "validate, install into rld's policy directory and apply");
  apply->add_option("files", files, "policy files")->required();
  apply->callback([&] {
    Json d = call_or_exit(g, "policy.apply", {{"files", read_files(files)}});
    if (json_out(g, d)) return;
    for (const auto& c : d["changes"]) std::cout << c.get<std::string>() << "\n";
    std::cout << "applied: generation " << d["generation"] << ", " << d["rules"] << " rules\n";
  });
  policy->add_subcommand("reload", "reload the policy directory now")->callback([&] {
    Json d = call_or_exit(g, "policy.reload");
    if (!json_out(g, d))
      std::cout << "applied: generation " << d["generation"] << ", " << d["rules"] << " rules\n";
  });

  // allow / deny
  std::string cidr, ttl;
  for (const char* list : {"allow", "deny"}) {
    std::string l = list;
    auto* sc = app.add_subcommand(
        list, std::string("runtime ") + list +
                  " entries, on top of the policy lists; they expire on their own");
    sc->require_subcommand(1);
    auto* add =
        sc->add_subcommand("add", std::string("add a CIDR to the runtime ") + list + " list");
    add->add_option("cidr", cidr, "address or CIDR")->required();
    add->add_option("--ttl", ttl, "lifetime, e.g. 10m, 2h (default: until removed)");
    add->callback([&, l] {
      Json d = call_or_exit(g, "acl.add",
                            {{"list", l}, {"cidr", cidr}, {"ttl_seconds", parse_ttl(ttl)}});
      if (!json_out(g, d)) std::cout << l << " " << d["cidr"].get<std::string>() << "\n";
    });
    auto* del =
        sc->add_subcommand("del", std::string("remove a CIDR from the runtime ") + list + " list");
    del->add_option("cidr", cidr, "address or CIDR")->required();
    del->callback([&, l] {
      Json d = call_or_exit(g, "acl.del", {{"list", l}, {"cidr", cidr}});
      if (!json_out(g, d)) std::cout << "removed " << d["cidr"].get<std::string>() << "\n";
    });
    sc->add_subcommand("list", "list the runtime entries")->callback([&, l] {
      Json d = call_or_exit(g, "acl.list");
      Json mine = Json::array();
      for (const auto& e : d["entries"])
        if (e["list"] == l) mine.push_back(e);
      if (json_out(g, Json{{"entries", mine}})) return;
      rlctl::Table t({"CIDR", "EXPIRES IN (s)"});
      for (const auto& e : mine) t.row({e["cidr"], num(e["expires_in_seconds"])});
      t.print(std::cout);
    });
  }

  // unblock / top / stats
  std::string address;
  auto* unblock =
      app.add_subcommand("unblock", "forget an address's limiter state and block in every rule");
  unblock->add_option("address", address, "IPv4 or IPv6 address")->required();
  unblock->callback([&] {
    Json d = call_or_exit(g, "unblock", {{"address", address}});
    if (!json_out(g, d))
      std::cout << "reset " << d["keys_reset"] << " keys of " << d["address"].get<std::string>()
                << "\n";
  });
  std::string top_rule, top_by = "drops";
  int top_n = 10;
  auto* top = app.add_subcommand(
      "top",
      "current offenders with their over-limit packet counts, or (--by traffic) the keys that "
      "send the most");
  top->add_option("--rule", top_rule, "only this rule");
  top->add_option("-n", top_n, "how many")->capture_default_str();
  top->add_option("--by", top_by,
                  "drops: over-limit packets per key; traffic: estimated packets and bytes per "
                  "second per key over the last 10 to 20 s, from the packets rld's "
                  "traffic_sample_shift samples (refused while it is 0)")
      ->check(CLI::IsMember({"drops", "traffic"}))
      ->capture_default_str();
  top->callback([&] {
    Json d = call_or_exit(g, "top", {{"rule", top_rule}, {"n", top_n}, {"by", top_by}});
    if (json_out(g, d)) return;
    if (top_by == "traffic") {
      // rld states the sampling's bound (an older rld did not: its errors are in +-PPS).
      std::string bound = d.value("sampling_error", "the sampling's error");
      std::cout << "sampled 1 in " << d["sample_ratio"] << " packets over the last "
                << num(d["window_seconds"]) << " s: " << d["samples"] << " samples, "
                << d["samples_shed"] << " shed; error per key: +-(" << bound << " + up to "
                << d["table_error_samples"] << " from the table) samples, times "
                << d["sample_ratio"] << "\n";
      rlctl::Table t({"RULE", "KEY", "EST. PPS", "+-PPS", "EST. BYTES/S", "SHARE", "DROPPED"});
      auto pct = [](const Json& v) {
        std::ostringstream o;
        o.setf(std::ios::fixed);
        o.precision(1);
        o << v.get<double>() * 100 << "%";
        return o.str();
      };
      for (const auto& k : d["keys"])
        t.row({k["rule"], k["key"], num(k["pps"]), num(k["pps_error"]), num(k["bytes_per_second"]),
               pct(k["share"]), pct(k["dropped_share"])});
      t.print(std::cout);
      return;
    }
    rlctl::Table t({"RULE", "KEY", "DROPPED", "BLOCKED"});
    for (const auto& o : d["offenders"])
      t.row({o["rule"], o["key"], num(o["drops"]), o["blocked"].get<bool>() ? "yes" : "no"});
    t.print(std::cout);
  });

  // key show
  auto* key = app.add_subcommand("key", "one limiter key's state, read from the data path");
  key->require_subcommand(1);
  std::string key_arg, key_rule;
  auto* key_show = key->add_subcommand(
      "show",
      "a source's keys in each rule, one per limit (the source, its prefix...): tokens or "
      "window count, block, drops");
  key_show->add_option("key", key_arg, "ADDRESS, ADDRESS|PORT (per-port rules) or a CIDR")
      ->required();
  key_show->add_option("--rule", key_rule, "only this rule");
  key_show->callback([&] {
    Json d = call_or_exit(g, "key.show", {{"key", key_arg}, {"rule", key_rule}});
    if (json_out(g, d)) return;
    // One row per limit: a rule that stacks limits has a key in each (the source, its /24...).
    rlctl::Table t({"RULE", "LIMIT", "KEY", "STATE", "BLOCKED", "DROPS", "LAST DROP"});
    for (const auto& r : d["rules"]) {
      // An rld that predates `limits` sends the rule's one limit at the top level.
      Json limits = r.value("limits", Json::array({r}));
      for (const auto& l : limits) {
        std::string name = l.value("limit", "-");
        if (l.contains("note")) {
          t.row({r["rule"], name, "-", l["note"], "-", "-", "-"});
          continue;
        }
        std::string state = "not tracked (a fresh key)", blocked = "no";
        if (l["tracked"].get<bool>()) {
          const auto& s = l["state"];
          std::string unit = s["unit"].get<std::string>();
          if (s.contains("tokens"))
            state = num(s["tokens"]) + " of " + num(s["burst"]) + " " + unit + " left";
          else if (s.contains("count"))
            state = num(s["count"]) + " of " + num(s["limit"]) + " " + unit + " in this window";
          if (s["blocked"].get<bool>()) blocked = "yes, " + num(s["blocked_for_seconds"]) + " s";
        }
        std::string last = "-";
        if (!l["last_drop"].is_null()) {
          std::time_t at = l["last_drop"].get<std::time_t>();
          char buf[32];
          std::strftime(buf, sizeof(buf), "%F %T", std::localtime(&at));
          last = buf;
        }
        t.row({r["rule"], name, l["key"], state, blocked, num(l["drops"]), last});
      }
    }
    t.print(std::cout);
  });
  app.add_subcommand("stats", "per-rule counters and rates, and the data path's global counters")
      ->callback([&] {
        Json d = call_or_exit(g, "stats");
        if (json_out(g, d)) return;
        rlctl::Table t({"RULE", "ACTION", "MATCHED", "PASSED", "DROPPED", "MONITORED", "MATCHED/s",
                        "DROPPED/s"});
        for (const auto& r : d["rules"]) {
          const auto& c = r["counters"];
          Json rates = r.value("rates", Json::object());
          t.row({r["name"], r["action"], num(c["matched_packets"]), num(c["passed_packets"]),
                 num(c["dropped_packets"]), num(c["monitored_packets"]),
                 num(rates.value("matched_pps", Json(nullptr))),
                 num(rates.value("dropped_pps", Json(nullptr)))});
        }
        t.print(std::cout);
        // Rules with stacked limits: which limit refused what.
        rlctl::Table lt({"RULE", "LIMIT", "REFUSED", "REFUSED BYTES"});
        bool stacked = false;
        for (const auto& r : d["rules"])
          for (const auto& l : r.value("limits", Json::array())) {
            lt.row({r["name"], l["name"], num(l["refused_packets"]), num(l["refused_bytes"])});
            stacked = true;
          }
        if (stacked) {
          std::cout << "\n";
          lt.print(std::cout);
        }
        std::cout << "\n";
        rlctl::Table gt({"COUNTER", "PACKETS", "BYTES"});
        for (auto& [k, v] : d["global"].items()) gt.row({k, num(v["packets"]), num(v["bytes"])});
        gt.print(std::cout);
      });

  auto* cluster = app.add_subcommand("cluster", "cluster-wide limits through Redis");
  cluster->require_subcommand(1);
  cluster->add_subcommand("status", "Redis, peers seen recently, last sync, blocked keys")
      ->callback([&] {
        Json d = call_or_exit(g, "cluster.status");
        if (json_out(g, d)) return;
        std::cout << "node " << d["node"].get<std::string>() << ", Redis "
                  << (d["redis_up"].get<bool>() ? "up" : "DOWN") << ", last sync "
                  << (d["last_sync_ms_ago"].is_null() ? std::string("never")
                                                      : num(d["last_sync_ms_ago"]) + " ms ago")
                  << ", " << d["syncs"] << " syncs (" << d["early_syncs"] << " early), "
                  << d["pending_keys"] << " keys pending, last pass " << d["last_pass_ms"]
                  << " ms\n";
        rlctl::Table peers({"PEER", "LAST SEEN (server ms)"});
        for (const auto& p : d["peers"]) peers.row({p["node"], num(p["last_seen_ms"])});
        peers.print(std::cout);
        std::cout << "\n";
        rlctl::Table blocked({"RULE", "KEY", "BLOCKED FOR (ms)"});
        for (const auto& b : d["blocked"])
          blocked.row({b["rule"], b["key"], num(b["remaining_ms"])});
        blocked.print(std::cout);
      });

  auto* completion = app.add_subcommand("completion", "print shell completion (bash)");
  std::string shell = "bash";
  completion->add_option("shell", shell, "bash")->check(CLI::IsMember({"bash"}));
  completion->callback([&] { std::cout << rlctl::bash_completion(app); });

  auto* help =
      app.add_subcommand("help", "the help of rlctl or of a command: rlctl help policy validate");
  std::vector<std::string> help_words;
  help->add_option("command", help_words, "a command, e.g. policy validate");
  help->callback([&] {
    auto found = rlctl::find_command(app, help_words);
    if (found.command == nullptr) {
      std::cerr << found.error << "\n";
      std::exit(rl::kExitUsage);
    }
    // The formatter, as App::help() would show the help of the command parsed (this one).
    std::cout << found.command->get_formatter()->make_help(
        found.command, rlctl::command_path(*found.command), CLI::AppFormatMode::Normal);
  });
  app.add_subcommand("version", "print rlctl's version, as --version does")->callback([&] {
    std::cout << version << "\n";
  });
  // For the build: rlctl(8)'s list of commands (an empty group hides it from --help and
  // completion).
  app.add_subcommand("man-commands", "rlctl(8)'s COMMANDS section, as help2man include text")
      ->group("")
      ->callback([&] { std::cout << rlctl::man_commands(app); });

  // CLI11 would only say that a subcommand is required.
  if (auto unknown = rlctl::unknown_command(app, std::vector<std::string>(argv + 1, argv + argc))) {
    std::cerr << *unknown << "\n";
    return rl::kExitUsage;
  }
  if (auto rc = rl::parse_command_line(app, argc, argv)) return *rc;
  return rl::kExitOk;
}
