// SPDX-License-Identifier: GPL-2.0-only
// Loading policy files: YAML in, a validated Policy or every problem found out.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "policy/diagnostic.h"
#include "policy/load_limits.h"
#include "policy/model.h"

namespace rl::policy {

struct LoadResult {
  // Only meaningful when ok(). Rules are in evaluation order: by priority, ties in file
  // order. Defaults are filled in (token_bucket burst = rate amount).
  Policy policy;
  // Every error found, ordered by file (in load order), then line and column.
  std::vector<Diagnostic> errors;
  // The directory was read and holds no policy file: its one error says so. rld starts without
  // rules from such a directory (a fresh install), and keeps the rules in force when a reload
  // finds it.
  bool no_files = false;
  bool ok() const { return errors.empty(); }
};

// `filename` is used for locations only. A text or load past `limits` (nesting, YAML nodes with
// aliases expanded, the deadline) gets one error where the bound was crossed.
LoadResult load_string(const std::string& text, const std::string& filename,
                       const LoadLimits& limits = {});
// A policy file's text, read the way the loader reads it: only regular files (a symbolic link
// only to one inside its own directory), never blocking, at most 16 MiB. nullopt and *why when
// refused or unreadable.
std::optional<std::string> read_policy_file(const std::string& path, std::string* why);

// Parses each file and merges them into one policy, in the given order. A path in `texts` is
// not read: its text is given (rlctl policy diff and apply, before the files are written).
LoadResult load_files(const std::vector<std::string>& paths, const LoadLimits& limits = {},
                      const std::map<std::string, std::string>& texts = {});
// The policy files load_directory reads, sorted by name; *why when the directory cannot be read.
std::vector<std::string> policy_files(const std::string& dir, std::string* why);
// Every *.yaml / *.yml in `dir` (not recursive), sorted by name. Hidden files are skipped so
// that editor and Kubernetes ConfigMap bookkeeping entries are not read as policy. A
// directory without policy files is an error: it is more likely a wrong path than an intent
// to limit nothing.
LoadResult load_directory(const std::string& dir, const LoadLimits& limits = {});

}  // namespace rl::policy
