// SPDX-License-Identifier: GPL-2.0-only
// rlctl policy validate | list | show | diff | apply | reload.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "policy/diagnostic.h"
#include "policy/loader.h"
#include "rlctl/commands/command.h"
#include "rlctl/commands/render.h"
#include "rlctl/table.h"

namespace rlctl {

void render_policy_list(const proto::PolicyListResponse& d, std::ostream& out) {
  Table t({"#", "RULE", "PRIORITY", "ACTION", "MATCH", "LIMIT"});
  for (const auto& r : d.rules)
    t.row({num(r.position), r.name, num(r.priority), r.action, r.match, r.limit});
  t.print(out);
}

void render_policy_show(const proto::PolicyShowResponse& d, std::ostream& out) {
  out << "name: " << d.name << "\nwhere: " << d.where << "\nmatch: " << d.match
      << "\nlimit: " << d.limit << "\naction: " << d.action << "\n";
  out << "priority: " << d.priority << "\nblock: " << num(d.block_seconds) << " s\n";
  // The counters by name, as the protocol names them.
  if (!d.counters) return;
  const Json counters = *d.counters;
  for (auto& [k, v] : counters.items()) out << k << ": " << v << "\n";
}

void render_policy_diff(const proto::PolicyDiffResponse& d, std::ostream& out) {
  if (d.changes.empty()) out << "no changes\n";
  for (const auto& c : d.changes) out << c << "\n";
}

void render_policy_apply(const proto::ReloadResponse& d, std::ostream& out) {
  for (const auto& c : d.changes.value_or(std::vector<std::string>{})) out << c << "\n";
  render_policy_reload(d, out);
}

void render_policy_reload(const proto::ReloadResponse& d, std::ostream& out) {
  out << "applied: generation " << d.generation << ", " << d.rules << " rules\n";
}

namespace {

namespace fs = std::filesystem;

// Policy files for rld, read as the loader reads them (a hostile path cannot hang rlctl), and
// only files rld's policy directory would load: *.yaml or *.yml.
proto::PolicyFilesRequest read_files(const std::vector<std::string>& paths) {
  proto::PolicyFilesRequest req;
  for (const auto& p : paths) {
    auto ext = fs::path(p).extension();
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
    req.files.push_back({p, *text});
  }
  return req;
}

// What `rlctl policy validate` loads: a directory alone is loaded exactly as rld loads its
// policy directory; otherwise each directory stands for its *.yaml/*.yml files (sorted, not
// hidden), merged with the files named, so cross-file checks (duplicate rule names) see them all.
// Offline, rld.yaml's max_rules is not known: the rules are checked against the most any data path
// holds, and rld checks its own bound when it applies them.
rl::policy::LoadResult load_for_validation(const std::vector<std::string>& args) {
  rl::policy::LoadLimits limits;
  limits.max_rules = RL_MAX_RULES_CAP;
  std::error_code ec;
  if (args.size() == 1 && fs::is_directory(args[0], ec))
    return rl::policy::load_directory(args[0], limits);
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
  return rl::policy::load_files(paths, limits);
}

void do_validate(const Globals& g, const std::vector<std::string>& files) {
  auto r = load_for_validation(files);
  if (g.output == "json") {
    proto::ValidateReport report{r.ok(), {}, r.policy.rules.size()};
    for (const auto& e : r.errors) report.errors.push_back(e.str());
    std::cout << rl::control::to_text(report, 2) << "\n";
  } else {
    for (const auto& e : r.errors) std::cerr << e.str() << "\n";
    if (r.ok())
      std::cout << "valid: " << r.policy.rules.size() << " rules, " << r.policy.sets.size()
                << " sets\n";
  }
  std::exit(r.ok() ? 0 : 1);
}

void do_diff(const Globals& g, const std::vector<std::string>& files) {
  call_and_render<proto::PolicyDiff>(g, read_files(files), render_policy_diff);
}

void do_apply(const Globals& g, const std::vector<std::string>& files) {
  call_and_render<proto::PolicyApply>(g, read_files(files), render_policy_apply);
}

// A subcommand that takes policy files (or directories) and runs `run` on them.
void add_files_command(CLI::App& policy, const char* name, const char* help, const char* what,
                       const Globals& g,
                       void (*run)(const Globals&, const std::vector<std::string>&)) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto* sub = policy.add_subcommand(name, help);
  sub->add_option("files", *files, what)->required();
  sub->callback([&g, files, run] { run(g, *files); });
}

}  // namespace

void bind_policy(CLI::App& cmd, Context& ctx) {
  const Globals& g = ctx.globals;
  cmd.require_subcommand(1);
  add_files_command(cmd, "validate",
                    "check policy files, or a directory as rld loads it (exit 0 valid, 1 "
                    "invalid); no rld needed",
                    "policy files or directories", g, do_validate);
  cmd.add_subcommand("list", "rules in force, in evaluation order")->callback([&g] {
    call_and_render<proto::PolicyList>(g, {}, render_policy_list);
  });
  auto show_req = std::make_shared<proto::PolicyShowRequest>();
  auto* show = cmd.add_subcommand("show", "one rule in force, with its counters");
  show->add_option("name", show_req->name, "rule name")->required();
  show->callback(
      [&g, show_req] { call_and_render<proto::PolicyShow>(g, *show_req, render_policy_show); });
  add_files_command(cmd, "diff", "what applying these files would change", "policy files", g,
                    do_diff);
  add_files_command(cmd, "apply", "validate, install into rld's policy directory and apply",
                    "policy files", g, do_apply);
  cmd.add_subcommand("reload", "reload the policy directory now")->callback([&g] {
    call_and_render<proto::PolicyReload>(g, {}, render_policy_reload);
  });
}

}  // namespace rlctl
