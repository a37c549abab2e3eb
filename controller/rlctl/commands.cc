// SPDX-License-Identifier: GPL-2.0-only
#include "rlctl/commands.h"

#include "policy/diagnostic.h"
#include "policy/suggest.h"

namespace rlctl {
namespace {

const CLI::App* named(const CLI::App& parent, const std::string& word) {
  for (const CLI::App* s : subcommands(parent))
    if (s->check_name(word)) return s;
  return nullptr;
}

bool takes_positionals(const CLI::App& app) {
  for (const CLI::Option* o : app.get_options())
    if (!o->nonpositional()) return true;
  return false;
}

// The option `name` (-s, --socket) of `app`, or of an ancestor it falls through to.
const CLI::Option* find_option(const CLI::App& app, const std::string& name) {
  for (const CLI::App* a = &app; a != nullptr; a = a->get_parent()) {
    if (const CLI::Option* o = a->get_option_no_throw(name)) return o;
    if (!a->get_fallthrough()) break;
  }
  return nullptr;
}

std::string unknown_message(const CLI::App& at, const std::string& word) {
  std::vector<std::string> visible;
  for (const CLI::App* s : subcommands(at))
    if (!s->get_group().empty()) visible.push_back(s->get_name());
  // A word that begins one command only ("pol") names it; otherwise the closest typo.
  std::vector<std::string> starting;
  for (const auto& v : visible)
    if (!word.empty() && v.rfind(word, 0) == 0) starting.push_back(v);
  std::string guess =
      starting.size() == 1 ? starting[0] : rl::policy::detail::closest(word, visible);
  std::string msg =
      command_path(at) + ": unknown command '" + rl::policy::printable(word, 60) + "'";
  if (!guess.empty()) return msg + "; did you mean '" + guess + "'?";
  std::string list;
  for (const auto& v : visible) list += (list.empty() ? "" : ", ") + v;
  return msg + "; the commands are " + list;
}

}  // namespace

std::vector<const CLI::App*> subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

std::string command_path(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* a = app.get_parent(); a != nullptr; a = a->get_parent())
    path = a->get_name() + " " + path;
  return path;
}

Lookup find_command(const CLI::App& root, const std::vector<std::string>& words) {
  const CLI::App* cur = &root;
  for (const auto& w : words) {
    const CLI::App* next = named(*cur, w);
    if (next == nullptr) return {nullptr, unknown_message(*cur, w)};
    cur = next;
  }
  return {cur, ""};
}

std::optional<std::string> unknown_command(const CLI::App& root,
                                           const std::vector<std::string>& args) {
  const CLI::App* cur = &root;
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& a = args[i];
    if (a == "--") return std::nullopt;
    if (a.size() > 1 && a[0] == '-') {
      // An option; its value is the next word unless attached (--socket=PATH, -ojson).
      bool is_long = a[1] == '-';
      std::string name = is_long ? a.substr(0, a.find('=')) : a.substr(0, 2);
      bool attached = is_long ? a.find('=') != std::string::npos : a.size() > 2;
      const CLI::Option* o = find_option(*cur, name);
      if (o != nullptr && o->get_type_size() != 0 && !attached) i++;
      continue;
    }
    // Where a command takes arguments of its own, or has no subcommands, the word is CLI11's.
    if (subcommands(*cur).empty() || takes_positionals(*cur)) return std::nullopt;
    const CLI::App* next = named(*cur, a);
    if (next == nullptr) return unknown_message(*cur, a);
    cur = next;
  }
  return std::nullopt;
}

}  // namespace rlctl
