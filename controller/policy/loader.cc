// SPDX-License-Identifier: GPL-2.0-only
#include "policy/loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include "policy/file_read.h"
#include "policy/fragment.h"
#include "policy/merge.h"
#include "policy/set_files.h"
#include "policy/yaml_scan.h"

namespace rl::policy {
namespace {

// The largest policy file read. Policies are rules and prefixes, a few hundred KiB at most; the
// bound keeps a stray dump or a device from filling memory.
constexpr size_t kMaxPolicyBytes = 16 << 20;

}  // namespace

std::optional<std::string> read_policy_file(const std::string& path, std::string* why) {
  return read_bounded_file(path, kMaxPolicyBytes, "a policy file", why);
}

namespace {

// Files in load order, then line and column; checks that run later (merging) report into
// earlier files too, and readers expect to fix problems top to bottom.
void sort_errors(std::vector<Diagnostic>& errors, const std::vector<std::string>& files) {
  std::map<std::string, size_t> order;
  for (const auto& f : files) order.emplace(f, order.size());
  auto rank = [&](const Diagnostic& d) {
    auto it = order.find(d.where.file);
    return std::tuple(it == order.end() ? order.size() : it->second, d.where.line, d.where.column);
  };
  std::stable_sort(errors.begin(), errors.end(),
                   [&](const Diagnostic& a, const Diagnostic& b) { return rank(a) < rank(b); });
}

LoadResult finish(std::vector<detail::Fragment> fragments, std::vector<Diagnostic> errors,
                  const std::vector<std::string>& files, const LoadLimits& limits) {
  LoadResult result;
  result.policy = detail::merge(std::move(fragments), limits.max_rules, errors);
  sort_errors(errors, files);
  result.errors = std::move(errors);
  return result;
}

bool is_policy_file(const std::filesystem::path& p) {
  std::string name = p.filename().string();
  return !name.empty() && name[0] != '.' && (p.extension() == ".yaml" || p.extension() == ".yml");
}

}  // namespace

namespace {

// The files of the fragment's sets that name one. A set that cannot be read whole is broken:
// its errors are reported, and its uses are not reported again.
void read_set_files(const LoadLimits& limits, size_t& set_prefixes, detail::Fragment& frag,
                    std::vector<Diagnostic>& errors) {
  for (auto& set : frag.sets) {
    if (set.source.path.empty()) continue;
    if (!read_set_source(set, limits, set_prefixes, errors)) frag.broken_sets.push_back(set.name);
  }
}

// One file's text into a fragment, within what is left of the load's node budget: the YAML
// is scanned first (depth, nodes with aliases expanded, the deadline), so yaml-cpp only ever
// builds a tree within the bounds.
void read_text(const std::string& text, const std::string& file, const LoadLimits& limits,
               size_t& nodes_used, size_t& set_prefixes, std::vector<detail::Fragment>& fragments,
               std::vector<Diagnostic>& errors) {
  detail::ScanLimits scan_limits{limits.max_depth,
                                 limits.max_nodes - std::min(nodes_used, limits.max_nodes),
                                 limits.max_nodes, limits.deadline};
  auto scan = detail::scan_yaml(text, scan_limits);
  if (scan.problem) {
    const YAML::Mark& m = scan.problem->mark;
    SourceLocation at = m.is_null() || m.line < 0 ? SourceLocation{file, 0, 0}
                                                  : SourceLocation{file, m.line + 1, m.column + 1};
    errors.push_back({at, printable(scan.problem->message)});
    return;
  }
  nodes_used += scan.nodes;
  fragments.push_back(detail::read_fragment(text, file, errors));
  read_set_files(limits, set_prefixes, fragments.back(), errors);
}

std::string time_limit_error() {
  return "loading the policy took longer than its time limit; refused";
}

}  // namespace

LoadResult load_string(const std::string& text, const std::string& filename,
                       const LoadLimits& limits) {
  std::vector<Diagnostic> errors;
  std::vector<detail::Fragment> fragments;
  size_t nodes = 0, set_prefixes = 0;
  read_text(text, filename, limits, nodes, set_prefixes, fragments, errors);
  return finish(std::move(fragments), std::move(errors), {filename}, limits);
}

LoadResult load_files(const std::vector<std::string>& paths, const LoadLimits& limits,
                      const std::map<std::string, std::string>& texts) {
  std::vector<Diagnostic> errors;
  std::vector<detail::Fragment> fragments;
  size_t nodes = 0, set_prefixes = 0;
  if (limits.set_cache) limits.set_cache->begin();
  for (const auto& path : paths) {
    if (limits.expired()) {
      errors.push_back({SourceLocation{path, 0, 0}, time_limit_error()});
      break;
    }
    std::string why;
    auto given = texts.find(path);
    auto text = given != texts.end() ? std::optional(given->second) : read_policy_file(path, &why);
    if (!text) {
      errors.push_back({SourceLocation{path, 0, 0}, why});
      continue;
    }
    read_text(*text, path, limits, nodes, set_prefixes, fragments, errors);
  }
  if (!paths.empty() && limits.expired() &&
      (errors.empty() || errors.back().message != time_limit_error()))
    errors.push_back({SourceLocation{paths.back(), 0, 0}, time_limit_error()});
  if (limits.set_cache) limits.set_cache->end();
  return finish(std::move(fragments), std::move(errors), paths, limits);
}

std::vector<std::string> policy_files(const std::string& dir, std::string* why) {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    // Every other entry with a policy's name is read, and refused there if it is not a regular
    // file or links out of the directory (read_file): a hostile entry is an error, not skipped.
    // Subdirectories are not policies, whatever their name.
    std::error_code type_ec;
    if (is_policy_file(it->path()) && !fs::is_directory(it->path(), type_ec))
      paths.push_back(it->path().string());
  }
  if (ec) {
    *why = "cannot read policy directory: " + ec.message();
    return {};
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

LoadResult load_directory(const std::string& dir, const LoadLimits& limits) {
  std::string why;
  auto paths = policy_files(dir, &why);
  LoadResult result;
  if (!why.empty()) {
    result.errors.push_back({SourceLocation{dir, 0, 0}, why});
    return result;
  }
  if (paths.empty()) {
    result.errors.push_back({SourceLocation{dir, 0, 0}, "no policy files (*.yaml, *.yml)"});
    result.no_files = true;
    return result;
  }
  return load_files(paths, limits);
}

}  // namespace rl::policy
