// SPDX-License-Identifier: GPL-2.0-only
// rlctl policy diff: what applying a policy would change, by name.
#include <map>
#include <set>

#include "daemon/policy/policy_manager.h"
#include "policy/describe.h"

namespace rl::daemon {
namespace {

template <typename T, typename Key, typename Show>
void diff_named(const std::vector<T>& a, const std::vector<T>& b, Key key, Show show,
                const std::string& what, std::vector<std::string>& out) {
  std::map<std::string, const T*> old_by, new_by;
  for (const auto& x : a) old_by[key(x)] = &x;
  for (const auto& x : b) new_by[key(x)] = &x;
  for (const auto& [name, x] : old_by)
    if (!new_by.count(name)) out.push_back("- " + what + " " + name + ": " + show(*x));
  for (const auto& [name, x] : new_by) {
    auto it = old_by.find(name);
    if (it == old_by.end())
      out.push_back("+ " + what + " " + name + ": " + show(*x));
    else if (show(*it->second) != show(*x))
      out.push_back("~ " + what + " " + name + ": " + show(*it->second) + " -> " + show(*x));
  }
}

std::string prefixes(const std::vector<Prefix>& ps) {
  std::string s;
  for (const auto& p : ps) s += (s.empty() ? "" : ",") + p.str();
  return s;
}

}  // namespace

std::vector<std::string> diff_policies(const policy::Policy& current, const policy::Policy& next) {
  std::vector<std::string> out;
  if (current.malformed != next.malformed)
    out.push_back(std::string("~ malformed: ") +
                  (next.malformed == policy::Verdict::kDrop ? "drop" : "pass"));
  diff_named(
      current.sets, next.sets, [](const auto& s) { return s.name; },
      [](const auto& s) { return prefixes(s.prefixes); }, "set", out);
  auto rule_line = [](const policy::Rule& r) {
    return "priority " + std::to_string(r.priority) + "; " + policy::describe_rule(r);
  };
  diff_named(
      current.rules, next.rules, [](const auto& r) { return r.name; }, rule_line, "rule", out);
  for (auto [list, a, b] : {std::tuple{"allow", &current.allow, &next.allow},
                            std::tuple{"deny", &current.deny, &next.deny}}) {
    std::set<Prefix> sa(a->begin(), a->end()), sb(b->begin(), b->end());
    for (const auto& p : sa)
      if (!sb.count(p)) out.push_back(std::string("- ") + list + " " + p.str());
    for (const auto& p : sb)
      if (!sa.count(p)) out.push_back(std::string("+ ") + list + " " + p.str());
  }
  return out;
}

}  // namespace rl::daemon
