// SPDX-License-Identifier: GPL-2.0-only
#include "rlctl/completion.h"

#include <functional>
#include <sstream>

namespace rlctl {
namespace {

// "TEXT:{table,json}" (an IsMember check) -> "table json".
std::string choices(const CLI::Option& o) {
  std::string t = o.get_type_name();
  auto open = t.find('{'), close = t.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open) return "";
  std::string out = t.substr(open + 1, close - open - 1);
  for (auto& c : out)
    if (c == ',') c = ' ';
  return out;
}

// What a positional argument names decides what completes it.
const char* positional_kind(const std::string& name) {
  if (name == "files") return "policy-files";
  if (name == "interface") return "interfaces";
  return "";
}

std::string bash_word(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string bash_completion(const CLI::App& app) {
  std::ostringstream subs, opts, valued, choice, positional;
  // A positional argument named "command" (rlctl help) completes to the commands.
  std::string commands;
  for (const CLI::App* s :
       app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); }))
    commands += (commands.empty() ? "" : " ") + s->get_name();
  // A subcommand of an app with fallthrough also takes its ancestors' options (rlctl's -o,
  // --socket): they are offered after the subcommand as well.
  std::function<void(const CLI::App&, const std::string&, const std::vector<const CLI::Option*>&)>
      walk = [&](const CLI::App& a, const std::string& path,
                 const std::vector<const CLI::Option*>& inherited) {
        std::string sub_words, opt_words;
        std::vector<const CLI::Option*> own;
        for (const CLI::Option* o : a.get_options()) {
          if (!o->nonpositional()) {
            positional << "  [" << bash_word(path) << "]=" << positional_kind(o->get_name(true))
                       << "\n";
            std::string c = o->get_name(true) == "command" ? commands : choices(*o);
            if (!c.empty()) choice << "  [" << bash_word(path) << "]=" << bash_word(c) << "\n";
            continue;
          }
          own.push_back(o);
        }
        std::vector<const CLI::Option*> offered = own;
        for (const CLI::Option* o : inherited)
          if (!a.get_option_no_throw(o->get_name())) offered.push_back(o);
        for (const CLI::Option* o : offered) {
          std::vector<std::string> names;
          for (const auto& n : o->get_snames()) names.push_back("-" + n);
          for (const auto& n : o->get_lnames()) names.push_back("--" + n);
          for (const auto& n : names) {
            opt_words += (opt_words.empty() ? "" : " ") + n;
            if (o->get_type_size() == 0) continue;  // a flag
            valued << "  [" << bash_word(path + " " + n) << "]=1\n";
            if (std::string c = choices(*o); !c.empty())
              choice << "  [" << bash_word(path + " " + n) << "]=" << bash_word(c) << "\n";
          }
        }
        std::vector<const CLI::Option*> passed_on;
        if (a.get_fallthrough()) passed_on = offered;
        for (const CLI::App* s : a.get_subcommands([](const CLI::App* s) {
               return !s->get_group().empty();  // an empty group hides a subcommand
             })) {
          sub_words += (sub_words.empty() ? "" : " ") + s->get_name();
          walk(*s, path + " " + s->get_name(), passed_on);
        }
        subs << "  [" << bash_word(path) << "]=" << bash_word(sub_words) << "\n";
        opts << "  [" << bash_word(path) << "]=" << bash_word(opt_words) << "\n";
      };
  const std::string& name = app.get_name();
  walk(app, name, {});

  std::ostringstream out;
  out << "# bash completion for " << name << ", written by `" << name
      << " completion bash` from its command definitions.\n"
      << "# Source it, or install it as /usr/share/bash-completion/completions/" << name << ".\n"
      << "_" << name << "() {\n"
      << "  local -A subs=(\n"
      << subs.str() << "  )\n"
      << "  local -A opts=(\n"
      << opts.str() << "  )\n"
      << "  local -A valued=(\n"
      << valued.str() << "  )\n"
      << "  local -A choices=(\n"
      << choice.str() << "  )\n"
      << "  local -A positional=(\n"
      << positional.str() << "  )\n"
      << R"BASH(  local cur="${COMP_WORDS[COMP_CWORD]}" path=)BASH" << name << R"BASH( i w
  # The command path so far: subcommand names extend it, an option's value is skipped.
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="${COMP_WORDS[i]}"
    if [[ " ${subs[$path]} " == *" $w "* ]]; then
      path="$path $w"
    elif [[ -n "${valued[$path $w]}" ]]; then
      ((i++))
    fi
  done
  local prev="${COMP_WORDS[COMP_CWORD-1]}"
  if [[ COMP_CWORD -gt 1 && -n "${valued[$path $prev]}" ]]; then
    COMPREPLY=($(compgen -W "${choices[$path $prev]}" -- "$cur"))
    return
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "${opts[$path]}" -- "$cur"))
    return
  fi
  # Subcommands, and the choices of a positional argument (an IsMember check).
  COMPREPLY=($(compgen -W "${subs[$path]} ${choices[$path]}" -- "$cur"))
  case "${positional[$path]}" in
    policy-files) COMPREPLY+=($(compgen -f -X '!*.y*ml' -- "$cur") $(compgen -d -- "$cur")) ;;
    interfaces) COMPREPLY+=($(compgen -W "$(ls /sys/class/net 2>/dev/null)" -- "$cur")) ;;
  esac
}
)BASH"
      << "complete -F _" << name << " " << name << "\n";
  return out.str();
}

}  // namespace rlctl
