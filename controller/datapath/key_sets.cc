// SPDX-License-Identifier: GPL-2.0-only
// Splitting a set while packets run on every CPU. To split set s = active - 2^L into s and
// t = active:
//   1. Clear set t and copy into it the keys of s whose wide index has bit L set. No packet
//      reads t yet: each indexes with the count it read, and every count so far is <= t.
//   2. Publish active + 1. A packet that reads the new count finds those keys in t.
//   3. Wait for a grace period: afterwards no packet that read the old count is still running.
//   4. Fold into each copy what packets of the window between 1 and 3 wrote to its original,
//      then free the originals, their state zeroed (a free way holds a fresh key's state). Keys
//      that such packets inserted into s but that belong in t move to t the same way.
// How far off a key can be: in that window (a grace period, milliseconds) packets of one key
// may be judged on either copy, and the fold keeps the larger state word, so the packets
// admitted on the copy that moved less are forgotten: at most what the key's limit admits within
// one grace period, once per split of its set (once per doubling of the table). A block survives
// (its state word is the larger). A key whose new set has no free way when it moves in step 4
// starts fresh. Packets never see a missing key: until step 4, every key is in the set the
// packet's count gives it. Ordering: the count is published with a sequentially consistent
// store after the copies, and a packet's reads of the new set depend on the count it read (the
// set's address is computed from it), so a packet that sees the new count sees the copies.
// A failed grace period leaves the originals of that chunk in place: no packet looks them up
// again, and they are reused like any idle slot.
#include "datapath/key_sets.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <optional>

#include "rl_hash.h"
#include "rl_layout.h"

namespace rl {
namespace {

constexpr uint32_t kKeysPerSet = 1;  // grow above one key per set on average

uint32_t load_tag(rl_slot& s) { return std::atomic_ref<__u32>(s.tag).load(); }

bool cas_tag(rl_slot& s, uint32_t seen, uint32_t next) {
  return std::atomic_ref<__u32>(s.tag).compare_exchange_strong(seen, next);
}

// Free a way that held the key with tag `tag`, its state zeroed first: a packet takes a free way
// with one CAS of its tag and no reset (rl_way_take in bpf/lib/limiter.h). No packet looks the
// key up here any more (step 3), but one of a key that belongs in this set may reclaim the way
// meanwhile (it is reusable once the key went idle): its tag is then another key's, and the CASes
// below expect what the way held for the old key, so they leave the new key alone. One narrow
// race remains: a reclaim between the tag check and the state's CAS, by a key whose packets
// brought its fresh state to the old key's exact word by then (a state is a time in
// nanoseconds or a window's index and count), would have that word zeroed (lenient by those
// packets, once). No lock is taken: a way held by rld across a crash would be
// lost to every key of its set.
void free_way(rl_slot& way, uint32_t tag) {
  // The words are read before the tag is checked: a reclaim that the check does not see comes
  // after those reads, and resets the words the CASes expect.
  __u64 state = std::atomic_ref<__u64>(way.state).load();
  __u32 idle = std::atomic_ref<__u32>(way.idle).load();
  if (load_tag(way) != tag) return;
  if (state) std::atomic_ref<__u64>(way.state).compare_exchange_strong(state, 0);
  if (idle) std::atomic_ref<__u32>(way.idle).compare_exchange_strong(idle, 0);
  cas_tag(way, tag, RL_TAG_FREE);
}

// The later of two idle ticks (compared modulo 2^32, as rl_idle_passed does).
uint32_t later_tick(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) > 0 ? a : b; }

}  // namespace

uint32_t key_sets_level(uint32_t active) {
  uint32_t l = 0;
  while ((2ull << l) <= active) l++;
  return l;
}

uint32_t key_sets_wanted(uint64_t tracked, uint32_t active, uint32_t capacity) {
  uint32_t want = active;
  if (want & (want - 1)) want = 2u << key_sets_level(want);  // finish the doubling under way
  while (want < capacity && tracked > static_cast<uint64_t>(want) * kKeysPerSet) want *= 2;
  return std::min(want, capacity);
}

KeySetGrowth::KeySetGrowth(std::span<rl_set> sets, std::span<rl_set_summary> summary,
                           uint32_t* active, uint32_t low_bits, GracePeriod grace)
    : sets_(sets),
      summary_(summary),
      active_(active),
      low_bits_(low_bits),
      grace_(std::move(grace)) {}

uint32_t KeySetGrowth::active() const { return std::atomic_ref<uint32_t>(*active_).load(); }

std::optional<rl_slot> KeySetGrowth::moving(rl_slot& way, uint32_t level) const {
  rl_slot copy{};
  copy.tag = load_tag(way);
  if (copy.tag == RL_TAG_FREE || copy.tag == RL_TAG_CLAIMING) return std::nullopt;
  // The wide index's bits below low_bits come from the hash, the rest from the tag, and a set
  // of level L >= low_bits has used the wide index's bits below L: bit L is the tag's
  // bit L - low_bits.
  if (!((copy.tag >> (level - low_bits_)) & 1)) return std::nullopt;
  copy.state = std::atomic_ref<__u64>(way.state).load();
  copy.idle = std::atomic_ref<__u32>(way.idle).load();
  return copy;
}

bool KeySetGrowth::place(uint32_t t_idx, const rl_slot& from) {
  rl_set& t = sets_[t_idx];
  for (auto& way : t.way) {
    if (load_tag(way) != from.tag) continue;
    // The key is in t already (copied in step 1, or inserted by a packet that read the new
    // count): keep the larger state, the later idle tick. Packets CAS the state too.
    std::atomic_ref<__u64> st(way.state);
    __u64 cur = st.load();
    while (cur < from.state && !st.compare_exchange_weak(cur, from.state)) {
    }
    std::atomic_ref<__u32> idle(way.idle);
    __u32 i = idle.load();
    while (later_tick(from.idle, i) != i && !idle.compare_exchange_weak(i, from.idle)) {
    }
    return true;
  }
  for (uint32_t w = 0; w < RL_WAYS; w++) {
    rl_slot& way = t.way[w];
    // Claimed as a packet claims a slot: nobody uses it until its tag is the key's, and its
    // print is in the summary by then.
    if (!cas_tag(way, RL_TAG_FREE, RL_TAG_CLAIMING)) continue;
    std::atomic_ref<__u64>(way.state).store(from.state);
    std::atomic_ref<__u32>(way.idle).store(from.idle);
    std::atomic_ref<__u8>(summary_[rl_summary_line(t_idx)].print[rl_summary_row(t_idx)][w])
        .store(rl_tag_print(from.tag));
    std::atomic_ref<__u32>(way.tag).store(from.tag);
    return true;
  }
  return false;
}

Result<uint32_t> KeySetGrowth::split(uint32_t count) {
  const uint32_t active = this->active();
  const auto capacity = static_cast<uint32_t>(sets_.size());
  if (active >= capacity || count == 0) return 0u;
  const uint32_t level = key_sets_level(active);
  const uint32_t base = 1u << level;
  const uint32_t first = active - base;  // the first set to split
  const uint32_t n = std::min({count, base - first, capacity - active});

  // 1. The new sets, which no packet reads yet.
  for (uint32_t i = 0; i < n; i++) {
    rl_set& s = sets_[first + i];
    rl_set& t = sets_[active + i];
    for (auto& way : t.way) {
      std::atomic_ref<__u64>(way.state).store(0);
      std::atomic_ref<__u32>(way.idle).store(0);
      std::atomic_ref<__u32>(way.tag).store(RL_TAG_FREE);
    }
    for (auto& way : s.way)
      if (auto copy = moving(way, level)) place(active + i, *copy);
  }
  // 2. Publish.
  std::atomic_ref<uint32_t>(*active_).store(active + n);
  // 3. Wait out every packet that read the old count.
  if (Status g = grace_(); !g) return g.error().wrap("key table growth");
  // 4. Fold what those packets wrote, move what they inserted, free the originals.
  for (uint32_t i = 0; i < n; i++) {
    rl_set& s = sets_[first + i];
    for (auto& way : s.way) {
      auto orig = moving(way, level);
      if (!orig) continue;
      place(active + i, *orig);
      free_way(way, orig->tag);
    }
  }
  return n;
}

Result<uint32_t> KeySetGrowth::grow_to(uint32_t target, uint32_t chunk) {
  target = std::min(target, static_cast<uint32_t>(sets_.size()));
  uint32_t total = 0;
  while (active() < target) {
    auto n = split(std::min(chunk, target - active()));
    if (!n) return n.error();
    if (*n == 0) break;
    total += *n;
  }
  return total;
}

Status rcu_grace_period() {
  if (::syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) != 0)
    return errno_error("membarrier(MEMBARRIER_CMD_GLOBAL)");
  return {};
}

}  // namespace rl
