// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/policy/policy_manager.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string_view>
#include <type_traits>
#include <utility>

#include "common/log.h"
#include "daemon/service/notify.h"
#include "policy/loader.h"
#include "policy/set_files.h"
#include "rl_layout.h"

namespace rl::daemon {

PolicyManager::PolicyManager(Datapath& dp, std::string policy_dir, compiler::CompileOptions options,
                             compiler::RuleIds in_force)
    : dp_(dp), dir_(std::move(policy_dir)), options_(options), ids_(std::move(in_force)) {}

ReloadReport PolicyManager::record(ReloadReport r) {
  MutexLock lock(mu_);
  r.at = std::chrono::system_clock::now();
  if (r.ok) {
    ok_++;
    last_success_ = r.at;
  } else {
    failed_++;
  }
  r.generation = generation_;
  last_ = r;
  return r;
}

namespace {

// FNV-1a over the names and contents of the directory's policy files, in name order.
uint64_t directory_fingerprint(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    auto ext = e.path().extension();
    if ((ext == ".yaml" || ext == ".yml") && e.path().filename().string()[0] != '.')
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&](const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;
  };
  for (const auto& f : files) {
    // Read as the loader reads: a FIFO or a device must not hang or flood the fingerprint.
    std::string why;
    auto text = policy::read_policy_file(f.string(), &why);
    mix(f.filename().string());
    mix(text ? *text : "\xff" + why);
  }
  return h;
}

// The directory's fingerprint mixed with the stamps of set files, in the policy's order.
uint64_t with_stamps(uint64_t h, const std::vector<std::vector<policy::SetFileStamp>>& stamps) {
  auto mix = [&](uint64_t v) {
    for (int i = 0; i < 8; i++) h = (h ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ULL;
  };
  for (const auto& files : stamps) {
    mix(files.size());
    for (const auto& f : files) {
      for (unsigned char ch : f.path) mix(ch);
      for (uint64_t v : {f.dev, f.ino, f.size, static_cast<uint64_t>(f.mtime_ns),
                         static_cast<uint64_t>(f.ctime_ns)})
        mix(v);
    }
  }
  return h;
}

// Prefixes are plain bytes (no padding: static_assert below), hashed as one string: a set's
// million prefixes in a few milliseconds.
uint64_t content_hash(const std::vector<Prefix>& prefixes) {
  static_assert(sizeof(Prefix) == 18 && std::is_trivially_copyable_v<Prefix>);
  return std::hash<std::string_view>{}(std::string_view(
      reinterpret_cast<const char*>(prefixes.data()), prefixes.size() * sizeof(Prefix)));
}

// The sets of `p` as shown, each keeping its time of update from `before` while its prefixes
// are the same.
std::vector<SetView> set_views(const policy::Policy& p, const std::vector<SetView>& before) {
  std::map<std::string, const SetView*> old;
  for (const auto& v : before) old[v.name] = &v;
  const auto now = std::chrono::system_clock::now();
  std::vector<SetView> out;
  for (const auto& s : p.sets) {
    if (s.name.find('#') != std::string::npos) continue;  // a rule's inline CIDRs
    SetView v{s.name,
              s.source.path.empty() ? "inline" : s.source.path,
              s.source.directory,
              s.prefixes.size(),
              s.source.directory ? s.source.files.size() - 1 : s.source.files.size(),
              now,
              content_hash(s.prefixes)};
    if (auto it = old.find(s.name); it != old.end() && it->second->content == v.content)
      v.updated = it->second->updated;
    out.push_back(std::move(v));
  }
  std::sort(out.begin(), out.end(),
            [](const SetView& a, const SetView& b) { return a.name < b.name; });
  return out;
}

}  // namespace

Candidate load_candidate(const std::string& dir, const policy::LoadLimits& limits,
                         std::optional<uint64_t> skip_if,
                         const std::vector<policy::SetSource>& set_sources) {
  Candidate c;
  const uint64_t files = directory_fingerprint(dir);
  if (skip_if) {
    std::vector<std::vector<policy::SetFileStamp>> now;
    now.reserve(set_sources.size());
    for (const auto& src : set_sources) now.push_back(policy::stamp_set_source(src));
    if (*skip_if == with_stamps(files, now)) {
      c.unchanged = true;
      c.fingerprint = *skip_if;
      return c;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  c.loaded = policy::load_directory(dir, limits);
  c.load_time = std::chrono::steady_clock::now() - start;
  std::vector<std::vector<policy::SetFileStamp>> read;
  for (const auto& set : c.loaded.policy.sets)
    if (!set.source.path.empty()) read.push_back(set.source.files);
  c.fingerprint = with_stamps(files, read);
  return c;
}

std::optional<uint64_t> PolicyManager::applied_fingerprint() const {
  MutexLock lock(mu_);
  if (!last_.ok) return std::nullopt;
  return applied_fingerprint_;
}

ReloadReport PolicyManager::reload(const std::string& trigger, bool force) {
  policy::LoadLimits limits;
  limits.max_rules = options_.max_rules;
  return commit(
      load_candidate(dir_, limits, force ? std::nullopt : applied_fingerprint(), set_sources()),
      trigger);
}

ReloadReport PolicyManager::reject(const std::string& trigger, std::vector<std::string> errors) {
  notify::Reloading reloading;  // systemctl reload waits for RELOADING=1 and READY=1
  ReloadReport r;
  r.trigger = trigger;
  r.errors = std::move(errors);
  bool in_force = false;
  {
    MutexLock lock(mu_);
    in_force = generation_ > 0 || !rules_.empty();
  }
  log::error(in_force ? "policy rejected; the policy in force stays" : "policy rejected",
             {{"trigger", trigger},
              {"dir", dir_},
              {"errors", std::to_string(r.errors.size())},
              {"first", r.errors.empty() ? "" : r.errors.front()}});
  return record(r);
}

ReloadReport PolicyManager::commit(const Candidate& c, const std::string& trigger) {
  if (c.unchanged) return last();
  bool empty = c.loaded.no_files && empty_directory_applies_;
  if (empty) {
    log::warn("no policy files: rld enforces no rule until one appears",
              {{"dir", dir_}, {"trigger", trigger}});
  } else if (!c.loaded.ok()) {
    std::vector<std::string> errors;
    for (const auto& d : c.loaded.errors) errors.push_back(d.str());
    auto r = reject(trigger, std::move(errors));
    if (c.loaded.no_files) {
      MutexLock lock(mu_);
      r.no_files = last_.no_files = true;
    }
    return r;
  }
  notify::Reloading reloading;
  load_time_ = c.load_time;
  auto out = apply(empty ? policy::Policy{} : c.loaded.policy, trigger);
  out.no_files = c.loaded.no_files;
  if (out.ok) {
    MutexLock lock(mu_);
    applied_fingerprint_ = c.fingerprint;
    last_.no_files = out.no_files;
  }
  return out;
}

ReloadReport PolicyManager::apply(const policy::Policy& p, const std::string& trigger) {
  ReloadReport r;
  r.trigger = trigger;
  compiler::RuleIds ids;
  {
    MutexLock lock(mu_);
    ids = ids_;
  }
  using Clock = std::chrono::steady_clock;
  const auto compile_start = Clock::now();
  auto compiled = compiler::compile(p, ids, options_);
  const auto compile_time = Clock::now() - compile_start;
  if (!compiled) {
    r.errors.push_back(compiled.error().message);
    log::error("policy rejected by the compiler; the policy in force stays",
               {{"trigger", trigger}, {"error", compiled.error().message}});
    return record(r);
  }
  for (size_t i = 0; i < hooks_.size(); i++) {
    if (auto s = hooks_[i]->prepare(p); !s) {
      for (size_t j = 0; j < i; j++) hooks_[j]->settle(policy());
      r.errors.push_back(s.error().str());
      log::error("policy needs what could not be set up; the policy in force stays",
                 {{"trigger", trigger}, {"error", s.error().str()}});
      return record(r);
    }
  }
  const auto write_start = Clock::now();
  if (auto s = dp_.apply(*compiled); !s) {
    for (auto* h : hooks_) h->settle(policy());
    r.errors.push_back(s.error().str());
    log::error("policy could not be written to the data path; the policy in force stays",
               {{"trigger", trigger}, {"error", s.error().str()}});
    return record(r);
  }
  const auto write_time = Clock::now() - write_start;
  std::vector<RuleView> views;
  std::map<std::string, const policy::Rule*> by_name;
  for (const auto& rule : p.rules) by_name[rule.name] = &rule;
  for (size_t i = 0; i < compiled->rules.size(); i++) {
    auto more = compiled->more_limits.begin() +
                static_cast<std::ptrdiff_t>(rl_stacked_index(static_cast<uint32_t>(i), 0));
    views.push_back({compiled->names[i],
                     compiled->rules[i],
                     *by_name.at(compiled->names[i]),
                     {more, more + compiled->rules[i].more_limits}});
  }
  {
    MutexLock lock(mu_);
    ids_ = compiled->ids;
    policy_ = p;
    rules_ = std::move(views);
    sets_ = set_views(p, sets_);
    generation_++;
  }
  for (auto* h : hooks_) h->settle(p);
  r.ok = true;
  r.rules = compiled->rules.size();
  auto out = record(r);
  auto ms = [](Clock::duration d) {
    return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
  };
  log::info("policy applied", {{"trigger", trigger},
                               {"generation", std::to_string(out.generation)},
                               {"rules", std::to_string(out.rules)},
                               {"data_path_generation", std::to_string(dp_.active_generation())},
                               {"load_ms", ms(std::exchange(load_time_, {}))},
                               {"compile_ms", ms(compile_time)},
                               {"write_ms", ms(write_time)}});
  return out;
}

void PolicyManager::adopt(std::vector<RuleView> in_force) {
  MutexLock lock(mu_);
  rules_ = std::move(in_force);
}

std::string limit_name(const RuleView& v, uint32_t l) {
  if (l == 0 && !v.rule.limit_name.empty()) return v.rule.limit_name;
  if (l > 0 && l <= v.rule.more.size()) return v.rule.more[l - 1].name;
  return "limit" + std::to_string(l);
}

ReloadReport PolicyManager::last() const {
  MutexLock lock(mu_);
  return last_;
}
uint64_t PolicyManager::reloads_ok() const {
  MutexLock lock(mu_);
  return ok_;
}
uint64_t PolicyManager::reloads_failed() const {
  MutexLock lock(mu_);
  return failed_;
}
std::chrono::system_clock::time_point PolicyManager::last_success() const {
  MutexLock lock(mu_);
  return last_success_;
}
std::vector<RuleView> PolicyManager::rules() const {
  MutexLock lock(mu_);
  return rules_;
}

size_t PolicyManager::rule_count() const {
  MutexLock lock(mu_);
  return rules_.size();
}
std::vector<SetView> PolicyManager::sets() const {
  MutexLock lock(mu_);
  return sets_;
}

std::vector<policy::SetSource> PolicyManager::set_sources() const {
  MutexLock lock(mu_);
  std::vector<policy::SetSource> out;
  for (const auto& s : policy_.sets)
    if (!s.source.path.empty()) out.push_back(s.source);
  return out;
}

policy::Policy PolicyManager::policy() const {
  MutexLock lock(mu_);
  return policy_;
}

}  // namespace rl::daemon
