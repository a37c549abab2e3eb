// Classes of the fields indexed by their value in small tables: the TCP flags byte and the TTL.
// A rule without a condition on a field is in every class of its table and in the field's
// "none" class, which packets without the field take. A field no rule names is not written at
// all: its dims_used bit stays clear, and the data path skips the lookup and takes "none".
#include <functional>

#include "compiler/passes.h"

namespace rl::compiler {
namespace {

// One field of one byte: its table and config slots, and the rules' conditions on it.
struct ByteField {
  unsigned table;  // RL_BYTE_TABLE_*
  uint8_t dim;     // RL_DIM_*
  uint16_t* none;  // where the class of "no condition" goes in rl_gen_config
  std::function<bool(const policy::Match&)> has_condition;
  std::function<bool(const policy::Match&, unsigned)> admits;  // with a condition
};

Status byte_field(const std::vector<const policy::Rule*>& rules, const ByteField& f,
                  ClassTable& table, CompiledRuleSet& out) {
  rl_bitmap none{};
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
  // Every value of the byte is its own interval: 256 small evaluations per rule.
  std::set<unsigned> every_value;
  for (unsigned v = 0; v <= 256; v++) every_value.insert(v);
  return fill_classes(every_value, 256, rules.size(), table, out.byte_classes[f.table],
                      [&](size_t pos, unsigned v) {
                        const auto& m = rules[pos]->match;
                        return !f.has_condition(m) || f.admits(m, v);
                      });
}

}  // namespace

Status field_classes(const std::vector<const policy::Rule*>& rules, ClassTable& table,
                     CompiledRuleSet& out) {
  const ByteField fields[] = {
      {RL_BYTE_TABLE_TCP_FLAGS, RL_DIM_TCP_FLAGS, &out.config.tcp_flags_none,
       [](const policy::Match& m) { return m.tcp_flags.mask != 0; },
       [](const policy::Match& m, unsigned v) {
         return (v & m.tcp_flags.mask) == m.tcp_flags.value;
       }},
      {RL_BYTE_TABLE_TTL, RL_DIM_TTL, &out.config.ttl_none,
       [](const policy::Match& m) { return !m.ttl.empty(); },
       [](const policy::Match& m, unsigned v) { return in_ranges(m.ttl, v); }},
  };
  for (const auto& f : fields)
    if (auto s = byte_field(rules, f, table, out); !s) return s;
  return {};
}

}  // namespace rl::compiler
