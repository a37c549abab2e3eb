// Classes of the fields indexed by their value in small tables: the TCP flags byte. A rule
// without a condition on a field is in every class of its table; a packet without the field
// takes the field's "none" class in rl_gen_config. A field no rule names is not written at all:
// its dims_used bit stays clear and the data path skips the lookup.
#include "compiler/passes.h"

namespace rl::compiler {
namespace {

// Every value of a one-byte field is its own interval: 256 small evaluations per rule.
std::set<unsigned> every_byte() {
  std::set<unsigned> b;
  for (unsigned v = 0; v <= 256; v++) b.insert(v);
  return b;
}

}  // namespace

Status field_classes(const std::vector<const policy::Rule*>& rules, ClassTable& table,
                     CompiledRuleSet& out) {
  rl_bitmap no_flags{};
  for (size_t pos = 0; pos < rules.size(); pos++) {
    if (rules[pos]->match.tcp_flags.mask)
      out.config.dims_used |= RL_DIM_TCP_FLAGS;
    else
      bitmap_set(no_flags, pos);
  }
  auto none = table.intern(no_flags);
  if (!none) return none.error();
  out.config.tcp_flags_none = *none;
  if (out.config.dims_used & RL_DIM_TCP_FLAGS) {
    auto s = fill_classes(every_byte(), 256, rules.size(), table,
                          out.byte_classes[RL_BYTE_TABLE_TCP_FLAGS], [&](size_t pos, unsigned v) {
                            const auto& f = rules[pos]->match.tcp_flags;
                            return (v & f.mask) == f.value;
                          });
    if (!s) return s;
  }
  return {};
}

}  // namespace rl::compiler
