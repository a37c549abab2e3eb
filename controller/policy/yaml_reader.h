// SPDX-License-Identifier: GPL-2.0-only
// Reading YAML nodes against the policy schema: locations, unknown keys, typed scalars. Every
// accessor reports its own error and returns nothing, so callers just skip what failed and
// keep going to find the next problem.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "policy/diagnostic.h"
#include "policy/suggest.h"

namespace rl::policy::detail {

// Locations and diagnostics for one file.
class Reader {
 public:
  Reader(std::string file, std::vector<Diagnostic>& out) : file_(std::move(file)), out_(out) {}

  const std::string& file() const { return file_; }
  SourceLocation at(const YAML::Node& node) const;  // 1-based; yaml-cpp marks are 0-based
  SourceLocation at(const YAML::Mark& mark) const;
  // At most kMaxErrors are kept per file, each made printable (diagnostic.h); the rest are
  // only counted (errors_not_shown), so a file that is not a policy cannot balloon memory or logs.
  static constexpr size_t kMaxErrors = 20;
  void error(const SourceLocation& where, const std::string& message) {
    if (++errors_ > kMaxErrors) return;
    out_.push_back(Diagnostic{where, printable(message)});
  }
  // Grows with every error; comparing two readings tells whether a step failed.
  size_t error_count() const { return errors_; }
  size_t errors_not_shown() const { return errors_ > kMaxErrors ? errors_ - kMaxErrors : 0; }

 private:
  std::string file_;
  std::vector<Diagnostic>& out_;
  size_t errors_ = 0;
};

// One `key: value` of a mapping.
struct Field {
  std::string name;
  YAML::Node value;
  SourceLocation key_at;
  // The value's location, or the key's when the value is null: yaml-cpp places an implicit
  // null at the next token, often on another line.
  SourceLocation at;
  bool is_null() const { return !value.IsDefined() || value.IsNull(); }
};

// The keys one kind of mapping may hold.
struct Schema {
  std::string context;  // completes "unknown key 'x' ...": "in limit", "at the top level"
  std::vector<std::string> keys;
  // Known keys of other mappings, with where they belong: a key written one level off is a
  // more likely mistake than a typo.
  std::vector<std::pair<std::vector<std::string>, std::string>> elsewhere;
};

// The fields of one mapping. Unknown and repeated keys are reported on construction (yaml-cpp
// keeps duplicates, and silently using one of them would hide the other).
class Fields {
 public:
  Fields(Reader& r, const YAML::Node& map, const Schema& schema);
  const Field* get(std::string_view name) const;

 private:
  std::vector<Field> fields_;
};

// The field's scalar text; anything else (list, mapping, null) reports `type_error`.
std::optional<std::string> scalar(Reader& r, const Field& f, const std::string& type_error);
std::optional<std::string> scalar(Reader& r, const YAML::Node& node, const SourceLocation& at,
                                  const std::string& type_error);

// Strict decimal integer: no hex, octal, fractions or trailing text.
std::optional<int64_t> parse_int(std::string_view text);

// "<name> must be an integer" / "<name> must be between lo and hi".
std::optional<int64_t> integer(Reader& r, const Field& f, const std::string& name, int64_t lo,
                               int64_t hi);
std::optional<bool> boolean(Reader& r, const Field& f, const std::string& name);
// Reports "<name> must be a mapping" unless it is one.
bool expect_map(Reader& r, const Field& f, const std::string& name);
// Reports `type_error` unless the field is a list.
bool expect_list(Reader& r, const Field& f, const std::string& type_error);

// One of a fixed set of words, e.g. algorithm: token_bucket.
template <typename T>
std::optional<T> choice(Reader& r, const Field& f, const std::string& name,
                        const std::vector<std::pair<std::string, T>>& options) {
  std::vector<std::string> words;
  std::string list;
  for (const auto& [word, value] : options) {
    words.push_back(word);
    list += (list.empty() ? "" : ", ") + word;
  }
  auto text = scalar(r, f, name + " must be one of " + list);
  if (!text) return std::nullopt;
  for (const auto& [word, value] : options)
    if (*text == word) return value;
  r.error(f.at,
          name + " must be one of " + list + "; got '" + *text + "'" + did_you_mean(*text, words));
  return std::nullopt;
}

}  // namespace rl::policy::detail
