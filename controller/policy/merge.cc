// SPDX-License-Identifier: GPL-2.0-only
#include "policy/merge.h"

#include <algorithm>
#include <map>
#include <set>

#include "policy/shadow.h"
#include "policy/suggest.h"

namespace rl::policy::detail {
namespace {

const char* verdict_word(Verdict v) { return v == Verdict::kDrop ? "drop" : "pass"; }

void merge_malformed(const std::vector<Fragment>& fragments, Policy& p,
                     std::vector<Diagnostic>& errors) {
  const Fragment* first = nullptr;
  for (const auto& f : fragments) {
    if (!f.malformed) continue;
    if (!first) {
      first = &f;
      p.malformed = *f.malformed;
    } else if (*f.malformed != *first->malformed) {
      errors.push_back(
          {f.malformed_at, std::string("malformed: ") + verdict_word(*f.malformed) +
                               " conflicts with malformed: " + verdict_word(*first->malformed) +
                               " at " + first->malformed_at.str() + "; files must agree"});
    }
  }
}

// Where each allow or deny prefix came from, for messages.
struct Placed {
  Prefix prefix;
  SourceLocation where;
  std::string via_set;
};

std::string origin(const Placed& p) {
  return p.where.str() + (p.via_set.empty() ? "" : " through set '" + p.via_set + "'");
}

class Merger {
 public:
  Merger(std::vector<Diagnostic>& errors, size_t max_rules)
      : errors_(errors), max_rules_(max_rules) {}

  Policy run(std::vector<Fragment>& fragments) {
    merge_malformed(fragments, p_, errors_);
    for (auto& f : fragments) {
      for (auto& s : f.sets) add_user_set(std::move(s));
      broken_sets_.insert(f.broken_sets.begin(), f.broken_sets.end());
    }
    for (auto& f : fragments)
      for (auto& d : f.rules) add_rule(d);
    for (RuleDraft* d : drafts_) resolve_sources(*d);
    p_.allow = expand(fragments, &Fragment::allow);
    p_.deny = expand(fragments, &Fragment::deny);
    check_allow_deny();
    order_rules();
    return std::move(p_);
  }

 private:
  void error(const SourceLocation& where, std::string message) {
    errors_.push_back({where, std::move(message)});
  }

  void add_user_set(SourceSet s) {
    if (const SourceSet* first = user_set(s.name)) {
      error(s.where, "source set '" + s.name + "' is already defined at " + first->where.str());
      return;
    }
    user_sets_.emplace(s.name, p_.sets.size());
    user_set_names_.push_back(s.name);
    p_.sets.push_back(std::move(s));
  }

  void add_rule(RuleDraft& d) {
    if (++rule_count_ == max_rules_ + 1)
      error(d.rule.where, "too many rules: a policy holds at most " + std::to_string(max_rules_) +
                              " (rld.yaml max_rules)");
    if (d.rule.name.empty()) return;  // already reported; nothing to refer to it by
    if (auto it = rule_names_.find(d.rule.name); it != rule_names_.end()) {
      error(d.name_at, "duplicate rule name '" + d.rule.name + "' (first defined at " +
                           it->second.str() + ")");
      return;
    }
    rule_names_.emplace(d.rule.name, d.name_at);
    if (!d.inline_prefixes.empty()) {
      std::string name = inline_set_name(d.rule.name);
      p_.sets.push_back(SourceSet{name, d.inline_prefixes, d.sources_at});
    }
    drafts_.push_back(&d);
  }

  void resolve_sources(RuleDraft& d) {
    std::vector<std::string> names;
    for (const auto& ref : d.set_refs) {
      names.push_back(ref.name);
      const SourceSet* set = user_set(ref.name);
      if (broken_sets_.count(ref.name)) {
        d.valid = false;
      } else if (!set) {
        error(ref.where,
              "undefined source set '" + ref.name + "'" + did_you_mean(ref.name, user_set_names_));
        d.valid = false;
      } else if (set->prefixes.empty() && set->source.path.empty()) {
        // A file's set may be empty for a while (a feed with nothing to list): the rule then
        // matches nothing until it is not.
        error(ref.where, "source set '" + ref.name + "' is empty, so rule '" + d.rule.name +
                             "' can never match");
        d.valid = false;
      }
    }
    if (!d.inline_prefixes.empty()) names.push_back(inline_set_name(d.rule.name));
    d.rule.match.sources = std::move(names);
  }

  std::vector<Prefix> expand(const std::vector<Fragment>& fragments,
                             std::vector<ListEntry> Fragment::*list) {
    bool is_allow = list == &Fragment::allow;
    std::map<Prefix, Placed>& placed = is_allow ? allowed_ : denied_;
    std::vector<Prefix> out;
    auto add = [&](const Prefix& prefix, const SourceLocation& where, const std::string& via) {
      if (placed.emplace(prefix, Placed{prefix, where, via}).second) out.push_back(prefix);
    };
    for (const auto& f : fragments) {
      for (const auto& e : f.*list) {
        if (e.prefix) {
          add(*e.prefix, e.where, "");
          continue;
        }
        const SourceSet* s = user_set(e.set);
        if (broken_sets_.count(e.set)) continue;
        if (!s) {
          error(e.where,
                "undefined source set '" + e.set + "'" + did_you_mean(e.set, user_set_names_));
          continue;
        }
        for (const auto& prefix : s->prefixes) add(prefix, e.where, e.set);
      }
    }
    return out;
  }

  // Exactly the same prefix only: a narrower deny inside a wider allow (or the reverse) is a
  // legitimate exception, an identical one is a contradiction.
  void check_allow_deny() {
    for (const auto& [prefix, deny] : denied_) {
      auto it = allowed_.find(prefix);
      if (it == allowed_.end()) continue;
      error(deny.where,
            prefix.str() + " is in both allow and deny (allowed at " + origin(it->second) + ")" +
                (deny.via_set.empty() ? "" : ", denied through set '" + deny.via_set + "'"));
    }
  }

  void order_rules() {
    std::stable_sort(drafts_.begin(), drafts_.end(), [](const RuleDraft* a, const RuleDraft* b) {
      return a->rule.priority < b->rule.priority;
    });
    std::map<std::string, const SourceSet*> sets;
    for (const auto& s : p_.sets) sets.emplace(s.name, &s);
    check_shadowed(std::vector<const RuleDraft*>(drafts_.begin(), drafts_.end()), sets, errors_);
    for (RuleDraft* d : drafts_) p_.rules.push_back(std::move(d->rule));
  }

  // Only sets defined under sets: can be named; a rule's inline set is its own.
  const SourceSet* user_set(const std::string& name) const {
    auto it = user_sets_.find(name);
    return it == user_sets_.end() ? nullptr : &p_.sets[it->second];
  }

  std::vector<Diagnostic>& errors_;
  Policy p_;
  std::map<std::string, size_t> user_sets_;  // index into p_.sets, which grows
  std::vector<std::string> user_set_names_;
  std::set<std::string> broken_sets_;
  std::map<std::string, SourceLocation> rule_names_;
  std::vector<RuleDraft*> drafts_;
  size_t max_rules_;
  size_t rule_count_ = 0;
  std::map<Prefix, Placed> allowed_;
  std::map<Prefix, Placed> denied_;
};

}  // namespace

Policy merge(std::vector<Fragment> fragments, size_t max_rules, std::vector<Diagnostic>& errors) {
  return Merger(errors, std::min(max_rules, kMaxRules)).run(fragments);
}

}  // namespace rl::policy::detail
