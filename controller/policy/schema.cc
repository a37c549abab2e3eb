// SPDX-License-Identifier: GPL-2.0-only
// Reading one policy file: the top level, source sets, allow and deny. Rules are read by
// rule_schema.cc; cross-file checks happen in merge.cc.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "policy/fragment.h"

namespace rl::policy::detail {
namespace {

constexpr size_t kMaxSetName = 55;

const Schema kTopSchema{"at the top level",
                        {"version", "malformed", "sets", "allow", "deny", "rules"},
                        {{{"name", "priority", "match", "limit", "key", "prefix", "action", "block",
                           "report", "cluster"},
                          "rules go in a list under rules:"}}};

bool valid_set_name(const std::string& name) {
  if (name.empty() || name.size() > kMaxSetName) return false;
  if (!std::isalpha(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

const Schema kSetSourceSchema{"in a set read from files", {"file", "dir"}, {}};

// A set's {file: PATH} or {dir: PATH}; a relative path is taken from the policy file's
// directory. The files are read once the whole policy file is (read_set_files).
bool read_set_origin(Reader& r, const YAML::Node& value, SourceSet& set) {
  Fields fields(r, value, kSetSourceSchema);
  const Field* file = fields.get("file");
  const Field* dir = fields.get("dir");
  if (!file == !dir) {
    r.error(r.at(value), "set '" + set.name + "' reads either file: or dir:, one of them");
    return false;
  }
  const Field& f = file ? *file : *dir;
  auto path = scalar(r, f, f.name + " must be a path");
  if (!path) return false;
  if (path->empty()) {
    r.error(f.at, f.name + " must not be empty");
    return false;
  }
  std::filesystem::path p(*path);
  if (p.is_relative()) p = std::filesystem::path(r.file()).parent_path() / p;
  set.source.path = p.lexically_normal().string();
  set.source.directory = dir != nullptr;
  return true;
}

void read_sets(Reader& r, const Field& f, Fragment& frag) {
  if (f.is_null()) return;  // everything under it commented out
  if (!f.value.IsMap()) {
    r.error(f.at, "sets must be a mapping of set names to lists of CIDRs or {file: PATH}");
    return;
  }
  for (auto it = f.value.begin(); it != f.value.end(); ++it) {
    YAML::Node key = it->first;  // copies: the iterator hands out a temporary pair
    YAML::Node value = it->second;
    SourceLocation name_at = r.at(key);
    auto name = scalar(r, key, name_at, "set names must be plain words");
    if (!name) continue;
    if (!valid_set_name(*name)) {
      r.error(name_at, "invalid set name '" + *name +
                           "': start with a letter, then letters, digits, '_', '.' or '-' (at "
                           "most 55 characters)");
      continue;
    }
    SourceSet set{*name, {}, name_at, {}};
    std::map<Prefix, SourceLocation> seen;  // found in log time: sets hold 100k entries
    SourceLocation value_at = value.IsNull() ? name_at : r.at(value);
    size_t errors_before = r.error_count();
    if (value.IsMap()) {
      if (read_set_origin(r, value, set))
        frag.sets.push_back(std::move(set));
      else
        frag.broken_sets.push_back(*name);
      continue;
    }
    if (!value.IsSequence())
      r.error(value_at, "set '" + *name +
                            "' must be a list of CIDRs, or {file: PATH} or "
                            "{dir: PATH}");
    for (const auto& item : value.IsSequence() ? value : YAML::Node(YAML::NodeType::Sequence)) {
      SourceLocation at = r.at(item);
      auto text = scalar(r, item, at, "set entries must be CIDRs");
      if (!text) continue;
      if (!looks_like_address(*text)) {
        r.error(at, "sets hold CIDRs only; '" + *text + "' is not an address");
        continue;
      }
      auto prefix = Prefix::parse(*text);
      if (!prefix) {
        r.error(at, prefix.error().message);
        continue;
      }
      // A repeated entry is most likely a mistake in a generated list (a wrong range, a merge
      // gone twice), and silently keeping one would hide it.
      if (auto [first, inserted] = seen.emplace(*prefix, at); !inserted) {
        r.error(at, "duplicate entry '" + prefix->str() + "' in set '" + *name +
                        "' (first given at line " + std::to_string(first->second.line) + ")");
        continue;
      }
      set.prefixes.push_back(*prefix);
    }
    if (r.error_count() != errors_before) frag.broken_sets.push_back(*name);
    frag.sets.push_back(std::move(set));
  }
}

void read_list(Reader& r, const Field& f, std::vector<ListEntry>& out) {
  if (f.is_null()) return;
  if (!expect_list(r, f, f.name + " must be a list of CIDRs or set names")) return;
  for (const auto& item : f.value) {
    SourceLocation at = r.at(item);
    auto entry = read_cidr_or_set(r, item, at, f.name + " entries must be CIDRs or set names");
    if (entry) out.push_back(ListEntry{entry->prefix, entry->set, at});
  }
}

void read_rules(Reader& r, const Field& f, Fragment& frag) {
  if (f.is_null()) return;
  if (!expect_list(r, f, "rules must be a list of rules")) return;
  for (const auto& item : f.value) {
    if (auto rule = read_rule(r, item)) frag.rules.push_back(std::move(*rule));
  }
}

}  // namespace

bool looks_like_address(std::string_view text) {
  return !text.empty() &&
         (std::isdigit(static_cast<unsigned char>(text[0])) ||
          text.find(':') != std::string_view::npos || text.find('/') != std::string_view::npos);
}

std::optional<CidrOrSet> read_cidr_or_set(Reader& r, const YAML::Node& node,
                                          const SourceLocation& at, const std::string& type_error) {
  auto text = scalar(r, node, at, type_error);
  if (!text) return std::nullopt;
  if (!looks_like_address(*text)) return CidrOrSet{std::nullopt, *text};
  auto prefix = Prefix::parse(*text);
  if (!prefix) {
    r.error(at, prefix.error().message);
    return std::nullopt;
  }
  return CidrOrSet{*prefix, ""};
}

std::vector<const Schema*> policy_schemas() {
  std::vector<const Schema*> all = {&kTopSchema, &kSetSourceSchema};
  for (const Schema* s : rule_schemas()) all.push_back(s);
  for (const Schema* s : match_schemas()) all.push_back(s);
  return all;
}

Fragment read_fragment(const std::string& text, const std::string& file,
                       std::vector<Diagnostic>& errors) {
  Reader r(file, errors);
  Fragment frag;
  frag.file = file;
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    // The parser stops at its first error, so a syntax error is the only one reported.
    r.error(r.at(e.mark), "invalid YAML: " + e.msg);
    return frag;
  }
  if (docs.empty() || docs[0].IsNull()) return frag;  // empty, or only comments
  if (docs.size() > 1) {
    r.error(r.at(docs[1]),
            "a policy file holds one YAML document; put further documents in their own files");
    return frag;
  }
  const YAML::Node& root = docs[0];
  if (!root.IsMap()) {
    r.error(r.at(root),
            "the top level must be a mapping with keys like sets:, allow:, deny: and rules:");
    return frag;
  }
  // A file that is not a policy at all (a log, a password file behind a link) gets one error,
  // not one per line of it.
  size_t keys = 0, known = 0;
  std::string first;
  for (auto it = root.begin(); it != root.end(); ++it) {
    std::string name = it->first.IsScalar() ? it->first.Scalar() : "";
    if (keys++ == 0) first = name;
    for (const auto& k : kTopSchema.keys) known += k == name;
  }
  if (keys > 1 && known == 0) {
    r.error(r.at(root), "not an rl policy: none of its " + std::to_string(keys) +
                            " top-level keys is sets:, allow:, deny:, rules:, malformed: or "
                            "version: (the first is '" +
                            printable(first, 40) + "')");
    return frag;
  }
  Fields fields(r, root, kTopSchema);
  if (const Field* version = fields.get("version")) {
    auto v = integer(r, *version, "version", INT64_MIN, INT64_MAX);
    if (v && *v != 1)
      r.error(version->at, "unsupported version " + std::to_string(*v) + " (only 1 exists)");
  }
  if (const Field* malformed = fields.get("malformed")) {
    frag.malformed = choice<Verdict>(r, *malformed, "malformed",
                                     {{"pass", Verdict::kPass}, {"drop", Verdict::kDrop}});
    frag.malformed_at = malformed->at;
  }
  if (const Field* sets = fields.get("sets")) read_sets(r, *sets, frag);
  if (const Field* allow = fields.get("allow")) read_list(r, *allow, frag.allow);
  if (const Field* deny = fields.get("deny")) read_list(r, *deny, frag.deny);
  if (const Field* rules = fields.get("rules")) read_rules(r, *rules, frag);
  // Right after the last error shown, which is where the reader stops reading.
  if (size_t more = r.errors_not_shown()) {
    SourceLocation at = errors.empty() ? SourceLocation{file, 0, 0} : errors.back().where;
    errors.push_back({at, std::to_string(more) + " more errors not shown; fix the first ones "
                                                 "and check again"});
  }
  return frag;
}

}  // namespace rl::policy::detail
