// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/bpf_source_tries.h"

#include <algorithm>
#include <cstring>

#include "datapath/runtime_maps.h"
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

// A few thousand entries a syscall (BPF_MAP_LOOKUP_BATCH): a restarted rld reads millions.
template <typename K>
Status read_trie(const MapRef<K, rl_src_pair>& trie, uint8_t family,
                 std::vector<SourceTrieEntry>& out) {
  return lookup_batches<K, rl_src_pair>(trie.fd(), trie.name(), 1,
                                        [&](const K& k, const rl_src_pair* v) {
                                          out.push_back({runtime::prefix_of(k, family), *v});
                                        });
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

namespace {

// Entries go in batches (BPF_MAP_UPDATE_BATCH, BPF_MAP_DELETE_BATCH), a syscall per batch
// rather than per entry: a set file's first load writes millions.
constexpr size_t kBatch = 65536;

template <typename K, typename Key>
Status write_family(const MapRef<K, rl_src_pair>& trie, uint8_t family,
                    const std::vector<SourceTrieEntry>& entries, Key&& key) {
  std::vector<K> keys;
  std::vector<rl_src_pair> values;
  auto flush = [&]() -> Status {
    Status s = trie.update(keys, values);
    keys.clear();
    values.clear();
    return s;
  };
  for (const auto& e : entries) {
    if (e.prefix.addr.family != family) continue;
    keys.push_back(key(e.prefix));
    values.push_back(e.value);
    if (keys.size() == kBatch)
      if (Status s = flush(); !s) return s;
  }
  return flush();
}

template <typename K, typename Key>
Status remove_family(const MapRef<K, rl_src_pair>& trie, uint8_t family,
                     const std::vector<Prefix>& prefixes, Key&& key) {
  std::vector<K> keys;
  for (const auto& p : prefixes) {
    if (p.addr.family != family) continue;
    keys.push_back(key(p));
    if (keys.size() == kBatch) {
      if (Status s = trie.remove(keys); !s) return s;
      keys.clear();
    }
  }
  return trie.remove(keys);
}

}  // namespace

Status BpfSourceTries::write(const std::vector<SourceTrieEntry>& entries) const {
  if (Status s = write_family(v4_, 4, entries, key4); !s) return s;
  return write_family(v6_, 6, entries, key6);
}

Status BpfSourceTries::remove(const std::vector<Prefix>& prefixes) const {
  if (Status s = remove_family(v4_, 4, prefixes, key4); !s) return s;
  return remove_family(v6_, 6, prefixes, key6);
}

Status BpfSourceTries::before_switch(const std::vector<compiler::SourceEntry>& next,
                                     uint32_t next_gen, const rl_gen_config& active) {
  if (!known_)
    if (Status s = read_back(); !s) return s.error().wrap("read the source tries");
  const bool reads[2] = {active.min_len[0] != 0, active.min_len[1] != 0};
  pending_ = plan_source_trie(mirror_, next, next_gen, reads);
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
