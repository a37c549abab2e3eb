// SPDX-License-Identifier: GPL-2.0-only
// One policy file after reading, before merging: what the file says plus the locations
// needed to report problems that only show up across files (undefined or duplicate names).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/diagnostic.h"
#include "policy/model.h"
#include "policy/yaml_reader.h"

namespace rl::policy::detail {

// A source set named somewhere, resolved once every file is read.
struct SetRef {
  std::string name;
  SourceLocation where;
};

// An allow or deny entry: a CIDR, or a set name when `prefix` is empty.
struct ListEntry {
  std::optional<Prefix> prefix;
  std::string set;
  SourceLocation where;
};

struct RuleDraft {
  Rule rule;  // match.sources holds only the named sets until the rule is finished
  SourceLocation name_at;
  std::vector<SetRef> set_refs;
  std::vector<Prefix> inline_prefixes;  // CIDRs written directly in match.sources
  SourceLocation sources_at;
  // No error was found in the rule. Only such rules take part in the "same match as an
  // earlier rule" check: a rule with a misplaced or broken condition would report noise.
  bool valid = true;
};

struct Fragment {
  std::string file;
  std::vector<SourceSet> sets;
  // Sets with errors in their definition: uses of them are not reported again as undefined
  // or empty.
  std::vector<std::string> broken_sets;
  std::vector<ListEntry> allow;
  std::vector<ListEntry> deny;
  std::vector<RuleDraft> rules;
  std::optional<Verdict> malformed;
  SourceLocation malformed_at;
};

// Reads one file's text; problems go to `errors`, and whatever could be read is returned.
Fragment read_fragment(const std::string& text, const std::string& file,
                       std::vector<Diagnostic>& errors);

// Parts of read_fragment, one file each.
std::optional<RuleDraft> read_rule(Reader& r, const YAML::Node& node);
void read_match(Reader& r, const Field& match, RuleDraft& draft);

// Set names must not be mistaken for addresses: they start with a letter.
bool looks_like_address(std::string_view text);

// An entry of allow, deny or match.sources: a CIDR, or a set name when `prefix` is empty.
struct CidrOrSet {
  std::optional<Prefix> prefix;
  std::string set;
};
// Reports entries that are not strings, and CIDRs that do not parse.
std::optional<CidrOrSet> read_cidr_or_set(Reader& r, const YAML::Node& node,
                                          const SourceLocation& at, const std::string& type_error);
// Every mapping a policy file may hold, with the keys it accepts (schema.cc; the rule's in
// rule_schema.cc, the match's in match_schema.cc). rl-policy(5) is tested against them.
std::vector<const Schema*> policy_schemas();
std::vector<const Schema*> rule_schemas();
std::vector<const Schema*> match_schemas();
// The keys `match:` accepts; the rule schema points them out when written one level up.
const std::vector<std::string>& match_field_names();
// The match keys that read the transport header, which a later fragment lacks.
const std::vector<std::string>& transport_field_names();

// The name of the set holding a rule's inline CIDRs; '#' keeps it apart from user names.
inline std::string inline_set_name(const std::string& rule) { return rule + "#inline"; }

}  // namespace rl::policy::detail
