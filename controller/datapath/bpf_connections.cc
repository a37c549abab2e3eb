// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/bpf_connections.h"

#include "rl_xdp.skel.h"

namespace rl {

BpfConnections::BpfConnections(const rl_xdp& skel)
    : syns_(skel.maps.rl_conn_syns), open_(skel.maps.rl_conn_open) {}

Result<std::optional<rl_conn_syn>> BpfConnections::take_admitted_syn(const rl_conn_tuple& t) {
  auto syn = syns_.find(t);
  if (!syn) return syn.error();
  if (*syn)
    if (Status s = syns_.remove(t); !s) return s.error();
  return *syn;
}

Status BpfConnections::set_open_connections(uint64_t hash, uint32_t count) {
  return count ? open_.update(hash, count) : open_.remove(hash);
}

Result<uint32_t> BpfConnections::open_connections(uint64_t hash) const {
  auto n = open_.find(hash);
  if (!n) return n.error();
  return n->value_or(0);
}

Status BpfConnections::clear_open_connections() {
  auto keys = open_.keys();
  if (!keys) return keys.error();
  for (const auto& k : *keys)
    if (Status s = open_.remove(k); !s) return s;
  return {};
}

}  // namespace rl
