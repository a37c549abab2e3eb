// SPDX-License-Identifier: GPL-2.0-only
// The Daemon's policy loads: each runs on the LoadWorker within load_limits() and
// reload_timeout_ms, and is applied (or answered) back on the event loop. Directory reloads
// requested while one waits to start are merged into it: however many inotify events, SIGHUPs
// and rlctl reloads arrive during a slow load, one more load follows it.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>

#include "common/log.h"
#include "daemon/daemon.h"

namespace rl::daemon {
namespace {

namespace fs = std::filesystem;
using control::Json;

Json reload_reply(const ReloadReport& r,
                  std::optional<std::vector<std::string>> changes = std::nullopt) {
  return r.ok ? control::ok(control::ReloadResponse{r.generation, r.rules, std::move(changes)})
              : control::fail("policy rejected; the policy in force stays", r.errors);
}

std::string timeout_error(const std::string& dir, uint32_t ms) {
  return dir + ": error: loading the policy took longer than " + std::to_string(ms) +
         " ms (reload_timeout_ms): refused; the policy in force stays";
}

// Answers once: a request has one reply, whichever path gives it.
void answer(ControlServer::Responder& reply, const Json& resp) {
  if (reply) reply(resp);
  reply = nullptr;
}

}  // namespace

struct Daemon::ReloadRequest {
  std::string trigger;
  bool force = false;
  std::vector<std::function<void(const ReloadReport&)>> then;
  // Set on the loop thread when the job starts, read by the worker.
  policy::LoadLimits limits;
  std::optional<uint64_t> skip_if;
  std::vector<policy::SetSource> set_sources;
  // Written by the worker; read on the loop thread only after the worker was joined.
  Candidate result;
};

policy::LoadLimits Daemon::load_limits() const {
  policy::LoadLimits limits;
  limits.deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg_.reload_timeout_ms);
  limits.set_cache = set_cache_.get();
  limits.max_rules = rule_capacity(cfg_);
  return limits;
}

void Daemon::request_reload(const std::string& trigger, bool force,
                            std::function<void(const ReloadReport&)> then) {
  if (queued_reload_) {
    queued_reload_->force = queued_reload_->force || force;
    if (then) queued_reload_->then.push_back(std::move(then));
    return;
  }
  auto req = std::make_shared<ReloadRequest>();
  req->trigger = trigger;
  req->force = force;
  if (then) req->then.push_back(std::move(then));
  queued_reload_ = req;
  std::string dir = cfg_.policy_dir;
  loads_->submit({[this, req] {
                    if (queued_reload_ == req) queued_reload_.reset();
                    req->limits = load_limits();
                    req->skip_if = req->force ? std::nullopt : policies_->applied_fingerprint();
                    req->set_sources = policies_->set_sources();
                  },
                  [req, dir] {
                    req->result = load_candidate(dir, req->limits, req->skip_if, req->set_sources);
                  },
                  [this, req](bool timed_out) {
                    ReloadReport r =
                        timed_out ? policies_->reject(
                                        req->trigger,
                                        {timeout_error(cfg_.policy_dir, cfg_.reload_timeout_ms)})
                                  : policies_->commit(req->result, req->trigger);
                    if (r.ok) watch_set_files();
                    for (auto& f : req->then) f(r);
                  },
                  std::chrono::milliseconds(cfg_.reload_timeout_ms)});
}

bool Daemon::defer_policy_request(const Json& req, ControlServer::Responder reply) {
  std::string cmd = control::command_of(req);
  if (control::version_of(req) != control::kProtocolVersion ||
      (cmd != control::PolicyReload::kName && cmd != control::PolicyDiff::kName &&
       cmd != control::PolicyApply::kName))
    return false;
  auto reply_to = std::make_shared<ControlServer::Responder>(std::move(reply));
  if (cmd == control::PolicyReload::kName) {
    request_reload("rlctl", true,
                   [reply_to](const ReloadReport& r) { answer(*reply_to, reload_reply(r)); });
    return true;
  }
  // The request's files, by the name they will have in the policy directory.
  struct Files {
    std::map<std::string, std::string> texts;  // path in the directory -> content
    std::map<std::string, std::string> shown;  // path in the directory -> as the operator gave
    std::vector<std::string> paths;
    policy::LoadLimits limits;
    policy::LoadResult loaded;
  };
  auto files = std::make_shared<Files>();
  try {
    auto given_files = control::args_of(req).get<control::PolicyFilesRequest>();
    for (auto& f : given_files.files) {
      const std::string& given = f.path;
      std::string name = fs::path(given).filename();
      if (name.empty() || name[0] == '.') {
        answer(*reply_to, control::fail("bad policy file name '" + name + "'"));
        return true;
      }
      std::string path = (fs::path(cfg_.policy_dir) / name).string();
      files->texts[path] = std::move(f.content);
      files->shown[path] = given;
    }
  } catch (const Json::exception& e) {
    answer(*reply_to, control::fail(std::string("bad arguments: ") + e.what()));
    return true;
  }
  bool apply = cmd == control::PolicyApply::kName;
  std::string dir = cfg_.policy_dir;
  loads_->submit({[this, files] { files->limits = load_limits(); },
                  [files, dir] {
                    // The directory's files as the loader reads them, the request's put in by name.
                    std::string why;
                    auto paths = policy::policy_files(dir, &why);
                    for (const auto& [path, text] : files->texts)
                      if (std::find(paths.begin(), paths.end(), path) == paths.end())
                        paths.push_back(path);
                    std::sort(paths.begin(), paths.end());
                    files->loaded = policy::load_files(paths, files->limits, files->texts);
                    if (!why.empty()) files->loaded.errors.push_back({{dir, 0, 0}, why});
                  },
                  [this, files, reply_to, apply](bool timed_out) {
                    if (timed_out) {
                      answer(
                          *reply_to,
                          control::fail("policy rejected; nothing changed",
                                        {timeout_error(cfg_.policy_dir, cfg_.reload_timeout_ms)}));
                      return;
                    }
                    Json errors = Json::array();
                    for (auto d : files->loaded.errors) {
                      if (auto it = files->shown.find(d.where.file); it != files->shown.end())
                        d.where.file = it->second;
                      errors.push_back(d.str());
                    }
                    if (!files->loaded.ok()) {
                      answer(*reply_to, control::fail("policy rejected; nothing changed", errors));
                      return;
                    }
                    auto changes = diff_policies(policies_->policy(), files->loaded.policy);
                    if (!apply) {
                      answer(*reply_to, control::ok(control::PolicyDiffResponse{changes}));
                      return;
                    }
                    // Written into the directory (rename: readers never see half a file), then
                    // loaded from it, so the inotify events of these writes find nothing new.
                    for (const auto& [path, text] : files->texts) {
                      std::string part = path + ".part";
                      std::ofstream out(part);
                      out << text;
                      out.close();
                      std::error_code ec;
                      if (out) fs::rename(part, path, ec);
                      if (!out || ec) {
                        answer(*reply_to, control::fail("write " + path + " failed"));
                        return;
                      }
                    }
                    request_reload("rlctl", true, [reply_to, changes](const ReloadReport& r) {
                      answer(*reply_to, reload_reply(r, changes));
                    });
                  },
                  std::chrono::milliseconds(cfg_.reload_timeout_ms)});
  return true;
}

}  // namespace rl::daemon
