// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/config/config.h"

#include <yaml-cpp/yaml.h>

#include "daemon/config/config_options.h"
#include "policy/suggest.h"

namespace rl::daemon {
namespace {

std::string where(const std::string& file, const YAML::Mark& m) {
  return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

Error at(const std::string& file, const YAML::Node& n, const std::string& what) {
  return Error{EINVAL, where(file, n.Mark()) + ": error: " + what};
}

std::string kind(const YAML::Node& n) {
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "a value";
}

// What a string option's misspelt value was probably meant to be.
std::string value_hint(const ConfigOption& o, const std::string& text) {
  return o.choices.empty() ? "" : policy::detail::did_you_mean(text, o.choices);
}

Status set_from_yaml(const std::string& file, const ConfigOption& o, const YAML::Node& v,
                     Config& cfg) {
  std::string name = o.path();
  bool is_list = std::holds_alternative<std::vector<std::string> Config::*>(o.field);
  if (is_list) {
    if (!v.IsSequence()) return at(file, v, name + ": expected a list, e.g. [eth0]");
    std::vector<std::string> items;
    for (const auto& i : v) {
      if (!i.IsScalar()) return at(file, i, name + ": expected a name, got " + kind(i));
      items.push_back(i.Scalar());
    }
    if (auto s = set_option_list(o, items, cfg); !s)
      return at(file, v, name + ": " + s.error().message);
    return {};
  }
  if (!v.IsScalar() && !v.IsNull())
    return at(file, v, name + ": expected a single value, got " + kind(v));
  bool is_string = std::holds_alternative<std::string Config::*>(o.field);
  if (v.IsNull() && !is_string) return at(file, v, name + ": a value is missing");
  std::string text = v.IsNull() ? "" : v.Scalar();
  if (auto s = set_option(o, text, cfg); !s)
    return at(file, v, name + ": " + s.error().message + value_hint(o, text));
  return {};
}

Status load_section(const std::string& file, const YAML::Node& map, const std::string& section,
                    Config& cfg) {
  std::vector<std::string> known;
  if (section.empty())
    for (const auto& s : config_sections()) known.push_back(s);
  for (const auto& o : config_options())
    if (o.section == section) known.emplace_back(o.key);
  const auto sections = config_sections();
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) return at(file, kv.first, "a setting's name must be a word");
    std::string key = kv.first.Scalar();
    if (section.empty() && std::find(sections.begin(), sections.end(), key) != sections.end()) {
      if (!kv.second.IsMap()) return at(file, kv.second, key + ": expected a mapping of settings");
      if (auto s = load_section(file, kv.second, key, cfg); !s) return s;
      continue;
    }
    const ConfigOption* opt = nullptr;
    for (const auto& o : config_options())
      if (o.section == section && o.key == key) opt = &o;
    if (!opt) {
      std::string in = section.empty() ? "" : " in " + section;
      std::string hint = policy::detail::did_you_mean(key, known);
      // A setting outside its section is a common slip: say where it goes.
      for (const auto& o : config_options())
        if (hint.empty() && o.key == key && o.section != section)
          hint = o.section.empty() ? " (it belongs at the top level)"
                                   : " (it belongs in the " + std::string(o.section) + ": section)";
      return at(file, kv.first, "unknown key '" + key + "'" + in + hint);
    }
    if (auto s = set_from_yaml(file, *opt, kv.second, cfg); !s) return s;
  }
  return {};
}

}  // namespace

Status load_config_file(const std::string& path, Config& cfg) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return Error{ENOENT, path + ": error: cannot read configuration file"};
  } catch (const YAML::ParserException& e) {
    return Error{EINVAL, where(path, e.mark) + ": error: " + e.msg};
  }
  if (root.IsNull()) return {};
  if (!root.IsMap()) return at(path, root, "configuration must be a mapping of settings");
  Config out = cfg;  // bad input changes nothing
  if (auto s = load_section(path, root, "", out); !s) return s;
  if (auto s = validate_config(out); !s)
    return Error{s.error().err, path + ": error: " + s.error().message};
  cfg = std::move(out);
  return {};
}

Status validate_config(const Config& cfg) {
  for (const auto& o : config_options())
    if (auto s = check_option(o, cfg); !s)
      return Error{s.error().err, o.path() + " (" + o.long_flag() + "): " + s.error().message};
  return {};
}

}  // namespace rl::daemon
