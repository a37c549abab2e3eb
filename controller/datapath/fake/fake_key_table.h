// SPDX-License-Identifier: GPL-2.0-only
// KeyTable in memory for unit tests: keys compared byte for byte (the data path compares set and
// tag), hashed with the data path's hash and a fixed seed.
#pragma once

#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "datapath/datapath.h"
#include "rl_hash.h"

namespace rl::testing {

// A key's bytes, the fakes' map key.
inline std::vector<uint8_t> key_bytes(const rl_key& k) {
  std::vector<uint8_t> b(sizeof k);
  std::memcpy(b.data(), &k, sizeof k);
  return b;
}

class FakeKeyTable : public virtual KeyTable {
 public:
  size_t reset_key(const rl_key& k) override {
    resets.push_back(k);
    return keys.erase(key_bytes(k));
  }
  std::optional<rl_slot> read_key(const rl_key& k) const override {
    auto it = keys.find(key_bytes(k));
    if (it == keys.end()) return std::nullopt;
    return it->second;
  }
  uint64_t key_hash(const rl_key& k) const override { return rl_key_hash(&k, seed); }
  uint64_t offender_drops(uint64_t hash) const override {
    auto it = drops.find(hash);
    return it == drops.end() ? 0 : it->second;
  }

  void put_key(const rl_key& k, const rl_slot& s) { keys[key_bytes(k)] = s; }
  static std::vector<uint8_t> bytes(const rl_key& k) { return key_bytes(k); }

  std::map<std::vector<uint8_t>, rl_slot> keys;
  std::vector<rl_key> resets;
  std::map<uint64_t, uint64_t> drops;  // by key hash
  uint64_t seed = 0x5eed;
};

}  // namespace rl::testing
