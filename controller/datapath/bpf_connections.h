// SPDX-License-Identifier: GPL-2.0-only
// Connection limits' maps: the SYNs the data path admitted (rl_conn_syns) and the open
// connections per key (rl_conn_open), which rld writes from conntrack's events.
#pragma once

#include <cstdint>
#include <optional>

#include "datapath/datapath.h"
#include "datapath/map.h"

struct rl_xdp;

namespace rl {

class BpfConnections final : public Connections {
 public:
  explicit BpfConnections(const rl_xdp& skel);

  Result<std::optional<rl_conn_syn>> take_admitted_syn(const rl_conn_tuple& t) override;
  Status set_open_connections(uint64_t hash, uint32_t count) override;
  Result<uint32_t> open_connections(uint64_t hash) const override;
  Status clear_open_connections() override;

 private:
  MapRef<rl_conn_tuple, rl_conn_syn> syns_;
  MapRef<uint64_t, uint32_t> open_;
};

}  // namespace rl
