// SPDX-License-Identifier: GPL-2.0-only
// Connections in memory for unit tests: the admitted SYNs the test leaves, the counts rld sets.
#pragma once

#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "datapath/datapath.h"

namespace rl::testing {

class FakeConnections : public virtual Connections {
 public:
  Result<std::optional<rl_conn_syn>> take_admitted_syn(const rl_conn_tuple& t) override {
    auto it = syns.find(bytes(t));
    if (it == syns.end()) return std::optional<rl_conn_syn>();
    rl_conn_syn s = it->second;
    syns.erase(it);
    return std::optional<rl_conn_syn>(s);
  }
  Status set_open_connections(uint64_t hash, uint32_t count) override {
    if (count)
      open[hash] = count;
    else
      open.erase(hash);
    return {};
  }
  Result<uint32_t> open_connections(uint64_t hash) const override {
    auto it = open.find(hash);
    return it == open.end() ? 0u : it->second;
  }

  Status clear_open_connections() override {
    open.clear();
    return {};
  }

  // A SYN the data path admitted.
  void admit(const rl_conn_tuple& t, const rl_conn_syn& s) { syns[bytes(t)] = s; }

  std::map<std::vector<uint8_t>, rl_conn_syn> syns;  // by the tuple's bytes
  std::map<uint64_t, uint32_t> open;

 private:
  static std::vector<uint8_t> bytes(const rl_conn_tuple& t) {
    std::vector<uint8_t> b(sizeof(t));
    std::memcpy(b.data(), &t, sizeof(t));
    return b;
  }
};

}  // namespace rl::testing
