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
    // Kind j: bit 0 set for a new TCP connection, j >> 1 the packet's rl_frag.
    for (unsigned j = 0; j < RL_CLASS_KINDS; j++) {
      bool new_conn = j & 1;
      unsigned frag = j >> 1;
      if ((!m.tcp_syn || new_conn) && (!m.fragments || (m.fragments & (1u << frag))))
        bitmap_set(classes[RL_CLASS_OF_KIND(j)], pos);
    }
    if (m.tcp_syn) out.config.dims_used |= RL_DIM_NEW_CONN;
    if (m.fragments) out.config.dims_used |= RL_DIM_FRAGMENT;
    if (m.ports.empty() && m.icmp_types.empty()) bitmap_set(classes[RL_CLASS_NO_PORT], pos);
  }
}

}  // namespace rl::compiler
