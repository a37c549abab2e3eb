// SPDX-License-Identifier: GPL-2.0-only
// Redis Cluster's key space: which of the 16,384 slots a key hashes to, which master serves a
// slot (the map CLUSTER SLOTS gives), and the hash tags rl spreads a rule's keys over so that a
// rule's counts are shared out among the shards rather than held by one of them.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/error.h"

struct redisReply;

namespace rl::cluster {

inline constexpr uint16_t kSlots = 16384;

// Redis' CRC16 (XMODEM: polynomial 0x1021, initial 0).
uint16_t crc16(std::string_view data);

// The slot of a key: the CRC16 of its hash tag (the text between the first '{' and the next
// '}', when not empty), else of the whole key, modulo 16,384.
uint16_t key_slot(std::string_view key);

// How many hashes each cluster rule's keys are spread over on a Redis Cluster. Fixed rather than
// set, because every node of a fleet must file a key under the same hash: a node with another
// spread would count it apart from the rest. It divides evenly by 2, 3, 4, 5, 6, 10, 12, 15 and
// 20, so a cluster whose slots are split into that many even ranges (as `redis-cli --cluster
// create` splits them) gets the same number of spread hashes on every master.
inline constexpr uint32_t kClusterSpread = 60;

// Which of `spread` hashes a key's counts live in: FNV-1a of the key text, modulo spread. Part
// of the fleet's key scheme, like the spread itself.
uint32_t spread_bucket(std::string_view key_text, uint32_t spread);

// The hash tag of spread bucket b: the first of "0", "1", "2", ... whose slot is the middle of
// the b-th of `spread` even slot ranges, so the spread's hashes sit evenly over the slot space.
// Computed once per spread; every node finds the same tags.
const std::vector<std::string>& spread_tags(uint32_t spread);

// The masters that serve the slots, as CLUSTER SLOTS told it.
struct SlotMap {
  struct Node {
    std::string host;
    int port = 0;
    std::string id;
    std::string addr() const { return host + ":" + std::to_string(port); }
  };
  std::vector<Node> masters;
  std::array<int16_t, kSlots> owner{};  // index into masters, -1 for a slot no master serves

  SlotMap() { owner.fill(-1); }
  // Slots no master serves (the cluster is down for their keys).
  size_t unserved() const;
  // How many slots masters[i] serves.
  size_t slots_of(size_t i) const;
  bool operator==(const SlotMap& o) const { return masters_equal(o) && owner == o.owner; }

 private:
  bool masters_equal(const SlotMap& o) const;
};

// A CLUSTER SLOTS reply as a map. `asked_host` fills in a node listed without an address
// (Redis names itself so when it does not know its own).
StoreResult<SlotMap> parse_cluster_slots(const redisReply& r, const std::string& asked_host);

// A MOVED or ASK error reply: where the slot is now.
struct Redirect {
  bool ask = false;
  uint16_t slot = 0;
  std::string host;  // may be empty: the replying node's own host
  int port = 0;
};
std::optional<Redirect> parse_redirect(std::string_view reply);

}  // namespace rl::cluster
