// SPDX-License-Identifier: GPL-2.0-only
#include "rlctl/man_page.h"

#include <cctype>
#include <sstream>

#include "rlctl/commands.h"

namespace rlctl {
namespace {

// "TEXT:{drops,traffic}" (an IsMember check) -> {"TEXT", "drops, traffic"}.
std::pair<std::string, std::string> type_and_choices(const CLI::Option& o) {
  std::string t = o.get_type_name();
  std::string type = t.substr(0, t.find(':'));
  auto open = t.find('{'), close = t.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open) return {type, ""};
  std::string choices;
  for (char c : t.substr(open + 1, close - open - 1))
    choices += c == ',' ? std::string(", ") : std::string(1, c);
  return {type, choices};
}

bool is_multi(const CLI::Option& o) { return o.get_items_expected_max() > 1; }

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string synopsis(const CLI::App& cmd) {
  std::string out = "\\fB" + roff_escape(command_path(cmd)) + "\\fR";
  for (const CLI::Option* o : cmd.get_options()) {
    if (o->nonpositional()) continue;
    std::string arg = "\\fI" + roff_escape(upper(o->get_name(true))) + "\\fR";
    if (is_multi(*o)) arg += "...";
    out += " " + (o->get_required() ? arg : "[" + arg + "]");
  }
  return out;
}

void options(const CLI::App& cmd, std::ostringstream& out) {
  for (const CLI::Option* o : cmd.get_options()) {
    if (!o->nonpositional() || o->get_lnames() == std::vector<std::string>{"help"}) continue;
    std::string names;
    for (const auto& n : o->get_snames())
      names += (names.empty() ? "" : ", ") + ("\\fB" + roff_escape("-" + n) + "\\fR");
    for (const auto& n : o->get_lnames())
      names += (names.empty() ? "" : ", ") + ("\\fB" + roff_escape("--" + n) + "\\fR");
    auto [type, choices] = type_and_choices(*o);
    if (o->get_type_size() != 0) names += " \\fI" + roff_escape(type) + "\\fR";
    std::string text = o->get_description();
    if (!choices.empty()) text += "; one of " + choices;
    if (!o->get_default_str().empty()) text += " (default: " + o->get_default_str() + ")";
    out << ".TP\n" << names << "\n" << roff_escape(text) << "\n";
  }
}

void walk(const CLI::App& cmd, std::ostringstream& out) {
  for (const CLI::App* sub : subcommands(cmd)) {
    if (sub->get_group().empty()) continue;  // hidden
    if (!subcommands(*sub).empty()) {
      walk(*sub, out);
      continue;
    }
    out << ".TP\n" << synopsis(*sub) << "\n" << roff_escape(sub->get_description()) << "\n";
    std::ostringstream opts;
    options(*sub, opts);
    if (!opts.str().empty()) out << ".RS\n" << opts.str() << ".RE\n";
  }
}

}  // namespace

std::string roff_escape(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); i++) {
    char c = text[i];
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      // An option's dashes: "--ttl", "-n", "(-o json)"; not a hyphen inside a word.
      char prev = i == 0 ? ' ' : text[i - 1];
      char next = i + 1 < text.size() ? text[i + 1] : ' ';
      bool starts_option = (std::isspace(static_cast<unsigned char>(prev)) || prev == '(' ||
                            prev == '-' || prev == '"' || prev == '\'') &&
                           (next == '-' || std::isalpha(static_cast<unsigned char>(next)));
      out += starts_option ? "\\-" : "-";
    } else {
      out += c;
    }
  }
  std::string lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && (line[0] == '.' || line[0] == '\'' || line[0] == '[')) line = "\\&" + line;
    lines += (lines.empty() ? "" : "\n") + line;
  }
  return lines;
}

std::string man_commands(const CLI::App& root) {
  std::ostringstream out;
  out << "[COMMANDS]\n"
      << "Every command also takes the global options (\\fB\\-o\\fR, \\fB\\-s\\fR), before or "
         "after it.\n";
  walk(root, out);
  return out.str();
}

}  // namespace rlctl
