// SPDX-License-Identifier: GPL-2.0-only
#include "policy/shadow.h"

#include <algorithm>

namespace rl::policy::detail {
namespace {

// Sorted, without prefixes covered by another one: two prefix lists written differently
// but covering the same addresses compare equal (mostly; adjacent halves are not joined).
std::vector<Prefix> canonical_prefixes(std::vector<Prefix> all) {
  // Sorting by (address, length) puts a covering prefix right before what it covers, and the
  // kept prefixes are disjoint, so only the last kept one can cover the next.
  // A set read from a file comes sorted: a million prefixes need no sort.
  if (!std::is_sorted(all.begin(), all.end())) std::sort(all.begin(), all.end());
  std::vector<Prefix> out;
  for (const auto& p : all)
    if (out.empty() || !out.back().contains(p)) out.push_back(p);
  return out;
}

std::vector<Prefix> canonical_sources(const Match& m,
                                      const std::map<std::string, const SourceSet*>& sets) {
  std::vector<Prefix> all;
  for (const auto& name : m.sources) {
    auto it = sets.find(name);
    if (it != sets.end())
      all.insert(all.end(), it->second->prefixes.begin(), it->second->prefixes.end());
  }
  return canonical_prefixes(std::move(all));
}

std::vector<PortRange> canonical_ports(std::vector<PortRange> ports) {
  std::sort(ports.begin(), ports.end(),
            [](const PortRange& a, const PortRange& b) { return a.first < b.first; });
  std::vector<PortRange> out;
  for (const auto& r : ports) {
    if (!out.empty() && r.first <= static_cast<uint32_t>(out.back().last) + 1)
      out.back().last = std::max(out.back().last, r.last);
    else
      out.push_back(r);
  }
  return out;
}

// "<label> 1-1 8000-8100": the values the ranges cover, however they were written.
std::string ranges_key(const char* label, const std::vector<PortRange>& ranges) {
  std::string key = label;
  for (const auto& r : canonical_ports(ranges))
    key += " " + std::to_string(r.first) + "-" + std::to_string(r.last);
  return key;
}

// Numbers the distinct source lists of the rules: equal numbers exactly for rules whose sets
// cover the same prefixes. A set read from a file holds a million of them, so each list of set
// names is made canonical once, and the match keys carry its number rather than its prefixes.
class SourceLists {
 public:
  explicit SourceLists(const std::map<std::string, const SourceSet*>& sets) : sets_(sets) {}

  size_t id(const Match& m) {
    std::vector<std::string> names = m.sources;
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    if (auto it = by_names_.find(names); it != by_names_.end()) return it->second;
    auto [it, inserted] = by_prefixes_.emplace(canonical_sources(m, sets_), by_prefixes_.size());
    by_names_.emplace(std::move(names), it->second);
    return it->second;
  }

 private:
  const std::map<std::string, const SourceSet*>& sets_;
  std::map<std::vector<std::string>, size_t> by_names_;
  std::map<std::vector<Prefix>, size_t> by_prefixes_;
};

// A string equal for two matches exactly when they select the same packets (as written).
std::string match_key(const Match& m, SourceLists& sources) {
  // No set at all is any source; sets that are empty (a file's, for a while) are no source.
  std::string key = m.sources.empty() ? "src any" : "src " + std::to_string(sources.id(m));
  key += "|dst";
  for (const auto& p : canonical_prefixes(m.destinations)) key += " " + p.str();
  key += "|proto " + (m.protocol ? std::to_string(*m.protocol) : std::string("any"));
  key += ranges_key("|ports", m.ports);
  key += ranges_key("|sports", m.source_ports);
  key += ranges_key("|ttl", m.ttl);
  key += ranges_key("|length", m.length);
  // `tcp_flags: syn` selects the packets of {set: [syn], unset: [ack]} (one file holds only one
  // of the two forms per rule).
  TcpFlags flags = m.tcp_syn ? TcpFlags{0x12, 0x02} : m.tcp_flags;
  key += "|flags " + std::to_string(flags.mask) + "/" + std::to_string(flags.value);
  std::vector<uint8_t> types = m.icmp_types;
  std::sort(types.begin(), types.end());
  types.erase(std::unique(types.begin(), types.end()), types.end());
  key += "|icmp";
  for (uint8_t t : types) key += " " + std::to_string(t);
  key += ranges_key("|codes", m.icmp_codes);
  key += "|fragments " + std::to_string(m.fragments);
  return key;
}

}  // namespace

void check_shadowed(const std::vector<const RuleDraft*>& in_order,
                    const std::map<std::string, const SourceSet*>& sets,
                    std::vector<Diagnostic>& errors) {
  std::map<std::string, const Rule*> first_with;
  SourceLists sources(sets);
  for (const RuleDraft* d : in_order) {
    if (!d->valid) continue;
    auto [it, inserted] = first_with.emplace(match_key(d->rule.match, sources), &d->rule);
    if (inserted) continue;
    const Rule& earlier = *it->second;
    errors.push_back({d->rule.where, "rule '" + d->rule.name + "' can never match: rule '" +
                                         earlier.name + "' at " + earlier.where.str() +
                                         " matches the same packets first"});
  }
}

}  // namespace rl::policy::detail
