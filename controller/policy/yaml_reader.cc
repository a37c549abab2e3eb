// SPDX-License-Identifier: GPL-2.0-only
#include "policy/yaml_reader.h"

#include <charconv>
#include <map>

namespace rl::policy::detail {

SourceLocation Reader::at(const YAML::Mark& mark) const {
  if (mark.is_null() || mark.line < 0) return SourceLocation{file_, 0, 0};
  return SourceLocation{file_, mark.line + 1, mark.column + 1};
}

SourceLocation Reader::at(const YAML::Node& node) const {
  return node.IsDefined() ? at(node.Mark()) : SourceLocation{file_, 0, 0};
}

Fields::Fields(Reader& r, const YAML::Node& map, const Schema& schema) {
  std::map<std::string, SourceLocation> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    // Copies: the iterator hands out a temporary pair.
    YAML::Node key = it->first;
    YAML::Node value = it->second;
    SourceLocation key_at = r.at(key);
    if (!key.IsScalar()) {
      r.error(key_at, "keys must be plain words, not lists or mappings");
      continue;
    }
    const std::string& name = key.Scalar();
    bool known = false;
    for (const auto& k : schema.keys) known = known || k == name;
    if (!known) {
      if (name == "<<") {
        r.error(key_at, "YAML merge keys (<<) are not supported; write the keys out");
        continue;
      }
      // A known key one level off is likelier than a typo: 'rate' in a rule is not 'name'.
      std::string hint;
      for (const auto& [keys, where] : schema.elsewhere) {
        for (const auto& k : keys)
          if (hint.empty() && k == name) hint = " (" + where + ")";
      }
      if (hint.empty()) hint = did_you_mean(name, schema.keys);
      r.error(key_at, "unknown key '" + printable(name, 40) + "' " + schema.context + hint);
      continue;
    }
    if (auto [first, inserted] = seen.emplace(name, key_at); !inserted) {
      r.error(key_at, "duplicate key '" + name + "' (first given at line " +
                          std::to_string(first->second.line) + ")");
      continue;
    }
    Field f{name, value, key_at, key_at};
    if (!f.is_null()) f.at = r.at(f.value);
    fields_.push_back(std::move(f));
  }
}

const Field* Fields::get(std::string_view name) const {
  for (const auto& f : fields_)
    if (f.name == name) return &f;
  return nullptr;
}

std::optional<std::string> scalar(Reader& r, const YAML::Node& node, const SourceLocation& at,
                                  const std::string& type_error) {
  if (!node.IsDefined() || !node.IsScalar()) {
    r.error(at, type_error);
    return std::nullopt;
  }
  return node.Scalar();
}

std::optional<std::string> scalar(Reader& r, const Field& f, const std::string& type_error) {
  return scalar(r, f.value, f.at, type_error);
}

std::optional<int64_t> parse_int(std::string_view text) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> integer(Reader& r, const Field& f, const std::string& name, int64_t lo,
                               int64_t hi) {
  auto text = scalar(r, f, name + " must be an integer");
  if (!text) return std::nullopt;
  auto v = parse_int(*text);
  if (!v) {
    r.error(f.at, name + " must be an integer, got '" + *text + "'");
    return std::nullopt;
  }
  if (*v < lo || *v > hi) {
    r.error(f.at, name + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                      ", got " + std::to_string(*v));
    return std::nullopt;
  }
  return v;
}

std::optional<bool> boolean(Reader& r, const Field& f, const std::string& name) {
  auto text = scalar(r, f, name + " must be true or false");
  if (!text) return std::nullopt;
  if (*text == "true" || *text == "True" || *text == "TRUE") return true;
  if (*text == "false" || *text == "False" || *text == "FALSE") return false;
  r.error(f.at, name + " must be true or false, got '" + *text + "'");
  return std::nullopt;
}

bool expect_map(Reader& r, const Field& f, const std::string& name) {
  if (f.value.IsMap()) return true;
  r.error(f.at, name + " must be a mapping");
  return false;
}

bool expect_list(Reader& r, const Field& f, const std::string& type_error) {
  if (f.value.IsSequence()) return true;
  r.error(f.at, type_error);
  return false;
}

}  // namespace rl::policy::detail
