#include "policy/loader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include "policy/fragment.h"
#include "policy/merge.h"

namespace rl::policy {
namespace {

std::optional<std::string> read_file(const std::string& path, std::string* why) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    *why = "is a directory, not a policy file";
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *why = std::string("cannot read: ") + std::strerror(errno);
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    *why = std::string("cannot read: ") + std::strerror(errno);
    return std::nullopt;
  }
  return text.str();
}

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
                  const std::vector<std::string>& files) {
  LoadResult result;
  result.policy = detail::merge(std::move(fragments), errors);
  sort_errors(errors, files);
  result.errors = std::move(errors);
  return result;
}

bool is_policy_file(const std::filesystem::path& p) {
  std::string name = p.filename().string();
  return !name.empty() && name[0] != '.' && (p.extension() == ".yaml" || p.extension() == ".yml");
}

}  // namespace

LoadResult load_string(const std::string& text, const std::string& filename) {
  std::vector<Diagnostic> errors;
  std::vector<detail::Fragment> fragments;
  fragments.push_back(detail::read_fragment(text, filename, errors));
  return finish(std::move(fragments), std::move(errors), {filename});
}

LoadResult load_files(const std::vector<std::string>& paths) {
  std::vector<Diagnostic> errors;
  std::vector<detail::Fragment> fragments;
  for (const auto& path : paths) {
    std::string why;
    auto text = read_file(path, &why);
    if (!text) {
      errors.push_back({SourceLocation{path, 0, 0}, why});
      continue;
    }
    fragments.push_back(detail::read_fragment(*text, path, errors));
  }
  return finish(std::move(fragments), std::move(errors), paths);
}

LoadResult load_directory(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    // is_regular_file follows symlinks: ConfigMap volumes link each file into a hidden dir.
    std::error_code type_ec;
    if (is_policy_file(it->path()) && fs::is_regular_file(it->path(), type_ec))
      paths.push_back(it->path().string());
  }
  LoadResult result;
  if (ec) {
    result.errors.push_back(
        {SourceLocation{dir, 0, 0}, "cannot read policy directory: " + ec.message()});
    return result;
  }
  if (paths.empty()) {
    result.errors.push_back({SourceLocation{dir, 0, 0}, "no policy files (*.yaml, *.yml)"});
    return result;
  }
  std::sort(paths.begin(), paths.end());
  return load_files(paths);
}

}  // namespace rl::policy
