// SPDX-License-Identifier: GPL-2.0-only
// Classes of the fields indexed by their value in tables of their own: the TCP flags byte and
// the TTL (256 entries each, rl_byte_classes) and the L3 length (65536, a table of
// rl_port_classes). A rule without a condition on a field is in every class of its table and in
// the field's "none" class, which packets without the field take. A field no rule names is not
// written at all: its dims_used bit stays clear, and the data path skips the lookup and takes
// "none".
#include <functional>

#include "compiler/passes.h"

namespace rl::compiler {
namespace {

struct IndexedField {
  uint8_t dim;                   // RL_DIM_*
  uint16_t* none;                // where the class of "no condition" goes in rl_gen_config
  std::vector<uint16_t>* table;  // where the classes go
  unsigned size;                 // values of the field
  std::function<bool(const policy::Match&)> has_condition;
  std::function<bool(const policy::Match&, unsigned)> admits;  // with a condition
  // Adds the values where a rule's condition may change, so the table is filled per interval.
  std::function<void(const policy::Match&, std::set<unsigned>&)> bounds;
};

Status field(const std::vector<const policy::Rule*>& rules, const IndexedField& f,
             ClassTable& table, CompiledRuleSet& out) {
  RuleBitmap none{};
  bool used = false;
  for (size_t pos = 0; pos < rules.size(); pos++) {
    if (f.has_condition(rules[pos]->match))
      used = true;
    else
      bitmap_set(none, pos);
  }
  auto id = table.intern(none);
  if (!id) return id.error();
  *f.none = *id;
  if (!used) return {};
  out.config.dims_used |= f.dim;
  return fill_classes(
      f.size, rules.size(), table, *f.table,
      [&](size_t pos, unsigned v) {
        const auto& m = rules[pos]->match;
        return !f.has_condition(m) || f.admits(m, v);
      },
      [&](size_t pos, std::set<unsigned>& changes) {
        const auto& m = rules[pos]->match;
        if (f.has_condition(m)) f.bounds(m, changes);
      });
}

}  // namespace

Status field_classes(const std::vector<const policy::Rule*>& rules, ClassTable& table,
                     CompiledRuleSet& out) {
  const IndexedField fields[] = {
      // Any mask: every value of the byte is its own interval, a small evaluation each per rule.
      {RL_DIM_TCP_FLAGS, &out.config.tcp_flags_none, &out.byte_classes[RL_BYTE_TABLE_TCP_FLAGS],
       RL_BYTE_VALUES, [](const policy::Match& m) { return m.tcp_flags.mask != 0; },
       [](const policy::Match& m, unsigned v) {
         return (v & m.tcp_flags.mask) == m.tcp_flags.value;
       },
       [](const policy::Match&, std::set<unsigned>& b) {
         for (unsigned v = 0; v < RL_BYTE_VALUES; v++) b.insert(v);
       }},
      {RL_DIM_TTL, &out.config.ttl_none, &out.byte_classes[RL_BYTE_TABLE_TTL], RL_BYTE_VALUES,
       [](const policy::Match& m) { return !m.ttl.empty(); },
       [](const policy::Match& m, unsigned v) { return in_ranges(m.ttl, v); },
       [](const policy::Match& m, std::set<unsigned>& b) { add_bounds(b, m.ttl); }},
      {RL_DIM_LENGTH, &out.config.len_none, &out.port_classes[RL_LEN_TABLE], RL_PORT_VALUES,
       [](const policy::Match& m) { return !m.length.empty(); },
       [](const policy::Match& m, unsigned v) { return in_ranges(m.length, v); },
       [](const policy::Match& m, std::set<unsigned>& b) { add_bounds(b, m.length); }},
  };
  for (const auto& f : fields)
    if (auto s = field(rules, f, table, out); !s) return s;
  return {};
}

}  // namespace rl::compiler
