// SPDX-License-Identifier: GPL-2.0-only
#include "compiler/passes.h"

namespace rl::compiler {

void fixed_classes(const std::vector<const policy::Rule*>& rules, CompiledRuleSet& out) {
  auto& classes = out.classes;
  for (size_t pos = 0; pos < rules.size(); pos++) {
    const policy::Match& m = rules[pos]->match;
    for (unsigned proto = 0; proto < 256; proto++)
      if (!m.protocol || *m.protocol == proto)
        bitmap_set(classes[RL_CLASS_PROTO_BASE + proto], pos);
    if (!m.tcp_syn)
      bitmap_set(classes[RL_CLASS_NOT_SYN], pos);
    else
      out.config.dims_used |= RL_DIM_NEW_CONN;
    if (m.ports.empty() && m.icmp_types.empty()) bitmap_set(classes[RL_CLASS_NO_PORT], pos);
  }
}

}  // namespace rl::compiler
