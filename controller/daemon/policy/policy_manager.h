// SPDX-License-Identifier: GPL-2.0-only
// The policy in force and its reloads. Pure policy logic over an injected Datapath: a reload
// loads and validates every file, compiles, and applies in one generation switch, or changes
// nothing and reports why.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "compiler/compiler.h"
#include "datapath/datapath.h"
#include "policy/loader.h"

namespace rl::daemon {

struct ReloadReport {
  bool ok = false;
  std::string trigger;              // startup, inotify, SIGHUP, rlctl
  std::vector<std::string> errors;  // "file:line:col: error: ..." when !ok
  bool no_files = false;            // the directory held no policy file (an empty rule set)
  uint32_t generation = 0;          // applies so far (increments on success)
  size_t rules = 0;
  std::chrono::system_clock::time_point at;
};

struct RuleView {
  std::string name;
  rl_rule compiled{};
  policy::Rule rule;  // only name and action when the rule was adopted from pinned maps
  // Its stacked limits as compiled, limit 1 first (compiled.more_limits of them); empty when the
  // rule was adopted from pinned maps.
  std::vector<rl_rule> more;
};

// A policy directory as loaded, not yet applied.
struct Candidate {
  uint64_t fingerprint = 0;  // of the directory's files, as read
  bool unchanged = false;    // the files applied last, byte for byte: nothing to do
  policy::LoadResult loaded;
  std::chrono::steady_clock::duration load_time{};  // reading and checking the files
};

// Loads `dir` within `limits`. Pure: reads files, touches no data path, so it runs on any
// thread. When the fingerprint of the directory and of `set_sources` (the set files the policy
// in force read, by their stamps) is `skip_if`, nothing is parsed (unchanged).
Candidate load_candidate(const std::string& dir, const policy::LoadLimits& limits,
                         std::optional<uint64_t> skip_if,
                         const std::vector<policy::SetSource>& set_sources = {});

// A source set of the policy in force, as rlctl status and the metrics show it.
struct SetView {
  std::string name;
  std::string source;  // "inline", or the file's or directory's path
  bool directory = false;
  size_t prefixes = 0;
  size_t files = 0;  // files read (a directory's, or 1)
  // When its prefixes last changed in force (the first reload that held it, at first).
  std::chrono::system_clock::time_point updated{};
  uint64_t content = 0;  // hash of its prefixes
};

// The name of limit l of a rule (0: its own), or "limit<l>" when the policy text is not known.
std::string limit_name(const RuleView& v, uint32_t l);

// What a policy needs outside the data path (the stack side of SYN cookies). prepare() runs
// before the data path switches to `next` and refuses it with an error; settle() runs after a
// switch, with the policy now in force.
class PolicyHooks {
 public:
  virtual ~PolicyHooks() = default;
  virtual Status prepare(const policy::Policy& next) = 0;
  virtual void settle(const policy::Policy& in_force) = 0;
};

class PolicyManager {
 public:
  PolicyManager(Datapath& dp, std::string policy_dir, compiler::CompileOptions options,
                compiler::RuleIds in_force);

  // Reload from the policy directory. Unless forced, a directory whose files are byte for byte
  // those of the policy in force is not applied again (editors and rlctl apply touch files
  // that did not change).
  ReloadReport reload(const std::string& trigger, bool force = true);
  // The two halves of reload() for a load done elsewhere: the fingerprint a candidate may skip
  // when not forced (none while the last reload failed), and the candidate's outcome.
  std::optional<uint64_t> applied_fingerprint() const;
  ReloadReport commit(const Candidate& c, const std::string& trigger);
  // A reload that failed before a candidate was loaded (its time limit): counted and shown as
  // failed; the policy in force stays.
  ReloadReport reject(const std::string& trigger, std::vector<std::string> errors);
  // Apply an already loaded policy (rlctl policy apply validates and writes files first).
  ReloadReport apply(const policy::Policy& p, const std::string& trigger);

  // The rule set a restarted rld found enforcing in the pinned maps: in force, and shown, until
  // a valid policy replaces it.
  void adopt(std::vector<RuleView> in_force);

  // Whether a directory without policy files applies an empty rule set (rld's start when
  // nothing is in force: a fresh install) or is refused, the policy in force staying (the
  // default: removing every file never empties the rule set by accident).
  void set_empty_directory_applies(bool applies) { empty_directory_applies_ = applies; }

  // Not owned; must outlive the manager. Set before the first reload.
  // Hooks are prepared in the order added, and settled all.
  void add_hooks(PolicyHooks* hooks) { hooks_.push_back(hooks); }

  // The policy in force's named sets, by name.
  std::vector<SetView> sets() const;
  // The sources of its sets read from files, to fingerprint a candidate with (load_candidate).
  std::vector<policy::SetSource> set_sources() const;

  ReloadReport last() const;
  uint64_t reloads_ok() const;
  uint64_t reloads_failed() const;
  std::chrono::system_clock::time_point last_success() const;
  std::vector<RuleView> rules() const;
  // How many rules are in force, without copying them: every status request and scrape asks.
  size_t rule_count() const;
  policy::Policy policy() const;
  const std::string& policy_dir() const { return dir_; }

 private:
  ReloadReport record(ReloadReport r);

  Datapath& dp_;
  std::vector<PolicyHooks*> hooks_;
  bool empty_directory_applies_ = false;  // set and read on the loop thread only
  // The load time of the candidate being committed, for apply's log line (loop thread only).
  std::chrono::steady_clock::duration load_time_{};
  std::string dir_;
  compiler::CompileOptions options_;
  mutable Mutex mu_;
  compiler::RuleIds ids_ GUARDED_BY(mu_);
  policy::Policy policy_ GUARDED_BY(mu_);
  std::vector<RuleView> rules_ GUARDED_BY(mu_);
  std::vector<SetView> sets_ GUARDED_BY(mu_);
  ReloadReport last_ GUARDED_BY(mu_);
  uint64_t ok_ GUARDED_BY(mu_) = 0;
  uint64_t failed_ GUARDED_BY(mu_) = 0;
  uint32_t generation_ GUARDED_BY(mu_) = 0;
  // Of the directory's files when last applied from it.
  uint64_t applied_fingerprint_ GUARDED_BY(mu_) = 0;
  std::chrono::system_clock::time_point last_success_ GUARDED_BY(mu_){};
};

// What applying `next` over `current` would change, one line per difference
// ("+ rule web-syn", "- rule old", "~ rule dns: limit 100/s -> 200/s", ...).
std::vector<std::string> diff_policies(const policy::Policy& current, const policy::Policy& next);

}  // namespace rl::daemon
