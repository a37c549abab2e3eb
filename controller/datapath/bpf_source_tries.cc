// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/bpf_source_tries.h"

#include <algorithm>
#include <cstring>

#include "rl_xdp.skel.h"

namespace rl {
namespace {

rl_src4_key key4(const Prefix& p) {
  rl_src4_key k{p.len, {}};
  std::memcpy(k.addr, p.addr.bytes.data(), sizeof(k.addr));
  return k;
}

rl_src6_key key6(const Prefix& p) {
  rl_src6_key k{p.len, {}};
  std::memcpy(k.addr, p.addr.bytes.data(), sizeof(k.addr));
  return k;
}

template <typename K>
Prefix prefix_of(const K& k, uint8_t family) {
  Prefix p;
  p.addr.family = family;
  std::memcpy(p.addr.bytes.data(), k.addr, sizeof(k.addr));
  p.len = static_cast<uint8_t>(k.prefixlen);
  return p;
}

template <typename K>
Status read_trie(const MapRef<K, rl_src_pair>& trie, uint8_t family,
                 std::vector<SourceTrieEntry>& out) {
  auto keys = trie.keys();
  if (!keys) return keys.error();
  for (const auto& k : *keys) {
    auto v = trie.find(k);
    if (!v) return v.error();
    if (*v) out.push_back({prefix_of(k, family), **v});
  }
  return {};
}

}  // namespace

BpfSourceTries::BpfSourceTries(const rl_xdp& skel)
    : v4_(skel.maps.rl_src_v4), v6_(skel.maps.rl_src_v6) {}

Status BpfSourceTries::read_back() {
  std::vector<SourceTrieEntry> all;
  if (Status s = read_trie(v4_, 4, all); !s) return s;
  if (Status s = read_trie(v6_, 6, all); !s) return s;
  std::sort(all.begin(), all.end(),
            [](const auto& x, const auto& y) { return x.prefix < y.prefix; });
  mirror_ = std::move(all);
  known_ = true;
  return {};
}

Status BpfSourceTries::write(const std::vector<SourceTrieEntry>& entries) const {
  for (const auto& e : entries) {
    Status s = e.prefix.addr.family == 4 ? v4_.update(key4(e.prefix), e.value)
                                         : v6_.update(key6(e.prefix), e.value);
    if (!s) return s.error().wrap(e.prefix.str());
  }
  return {};
}

Status BpfSourceTries::remove(const std::vector<Prefix>& prefixes) const {
  for (const auto& p : prefixes) {
    Status s = p.addr.family == 4 ? v4_.remove(key4(p)) : v6_.remove(key6(p));
    if (!s) return s.error().wrap(p.str());
  }
  return {};
}

Status BpfSourceTries::before_switch(const std::vector<compiler::SourceEntry>& next,
                                     uint32_t next_gen) {
  if (!known_)
    if (Status s = read_back(); !s) return s.error().wrap("read the source tries");
  pending_ = plan_source_trie(mirror_, next, next_gen);
  // Written or not, the tries no longer hold what the mirror says until step 3 is done.
  known_ = false;
  return write(pending_.before);
}

Status BpfSourceTries::after_switch(const std::vector<compiler::SourceEntry>& next) {
  SourceTriePlan plan = std::move(pending_);
  pending_ = {};
  if (Status s = write(plan.after); !s) return s;
  if (Status s = remove(plan.remove); !s) return s;
  mirror_ = settled_source_trie(next);
  known_ = true;
  return {};
}

}  // namespace rl
