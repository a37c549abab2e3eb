// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/host_table.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <type_traits>

#include "rl_hash.h"

namespace rl {
namespace {

// A way's fields (the kernel's __u32 and __u64), read and written whole while packets read them.
template <typename T>
T load(const T& v) {
  return std::atomic_ref<T>(const_cast<T&>(v)).load(std::memory_order_acquire);
}
template <typename T>
void store(T& v, std::type_identity_t<T> x) {
  std::atomic_ref<T>(v).store(x, std::memory_order_release);
}

// The version bits of the word after `old`: every store of a way's word raises it.
uint64_t next_version(uint64_t old) {
  return (((old >> RL_HOST_VERSION_SHIFT) + 1) & RL_HOST_VERSION_MASK) << RL_HOST_VERSION_SHIFT;
}

// The word for an entry, one version past `old`'s.
uint64_t live_word(uint64_t old, uint32_t flags, uint64_t expires_ns) {
  uint64_t expiry = 0;
  if (expires_ns)
    expiry = std::min<uint64_t>(
        (expires_ns + (1ULL << RL_HOST_EXPIRY_SHIFT) - 1) >> RL_HOST_EXPIRY_SHIFT,
        RL_HOST_EXPIRY_MASK);
  return RL_HOST_LIVE | (flags & RL_SRC_F_ALLOW ? RL_HOST_ALLOW : 0) | next_version(old) | expiry;
}

RuntimeEntry entry_of(const Address& a, uint64_t word) {
  // The flags as packets read them (rl_hash.h), at a time 0 before any expiry.
  return {Prefix::of(a, static_cast<uint8_t>(a.width())), rl_host_word_flags(word, 0),
          (word & RL_HOST_EXPIRY_MASK) << RL_HOST_EXPIRY_SHIFT};
}

// A family's way: its address as the packet compares it, read and written in the words the
// packet loads.
struct Way4 {
  static constexpr uint8_t kFamily = 4;
  using Set = rl_host_set4;
  using Addr = __u32;
  static Addr addr_of(const Address& a) {
    Addr x;
    std::memcpy(&x, a.bytes.data(), sizeof(x));
    return x;
  }
  static Addr read(const rl_host_way4& w) { return load(w.addr); }
  static void write(rl_host_way4& w, Addr x) { store(w.addr, x); }
  static Address address(Addr x) {
    Address a;
    std::memcpy(a.bytes.data(), &x, sizeof(x));
    return a;
  }
};

struct Way6 {
  static constexpr uint8_t kFamily = 6;
  using Set = rl_host_set6;
  using Addr = std::array<__u64, 2>;
  static Addr addr_of(const Address& a) {
    Addr x;
    std::memcpy(x.data(), a.bytes.data(), sizeof(x));
    return x;
  }
  static Addr read(const rl_host_way6& w) { return {load(w.addr[0]), load(w.addr[1])}; }
  static void write(rl_host_way6& w, const Addr& x) {
    store(w.addr[0], x[0]);
    store(w.addr[1], x[1]);
  }
  static Address address(const Addr& x) {
    Address a;
    a.family = 6;
    std::memcpy(a.bytes.data(), x.data(), sizeof(x));
    return a;
  }
};

template <typename W>
typename W::Set& set_of(std::span<typename W::Set> sets, const Address& host, uint64_t seed) {
  uint32_t words[4];
  std::memcpy(words, host.bytes.data(), sizeof(words));
  return sets[rl_host_set_index(words, W::kFamily, seed)];
}

// The way of the set holding the host live, if any. rld is the only writer, so its own reads
// need no second look at the word.
template <typename W>
auto* live_way(typename W::Set& set, const typename W::Addr& x) {
  for (auto& w : set.way)
    if ((load(w.word) & RL_HOST_LIVE) && W::read(w) == x) return &w;
  return static_cast<decltype(&set.way[0])>(nullptr);
}

template <typename W>
HostTable::Put put_in(typename W::Set& set, const Address& host, uint32_t flags,
                      uint64_t expires_ns) {
  const auto x = W::addr_of(host);
  if (auto* w = live_way<W>(set, x)) {
    store(w->word, live_word(load(w->word), flags, expires_ns));
    return HostTable::Put::kChanged;
  }
  for (auto& w : set.way) {
    uint64_t old = load(w.word);
    if (old & RL_HOST_LIVE) continue;
    // A packet trusts a way only while its word stays live and unchanged around its read of the
    // address, so the address goes in first, then the word that makes it live.
    W::write(w, x);
    store(w.word, live_word(old, flags, expires_ns));
    return HostTable::Put::kAdded;
  }
  return HostTable::Put::kFull;
}

template <typename W>
bool erase_in(typename W::Set& set, const Address& host) {
  auto* w = live_way<W>(set, W::addr_of(host));
  if (!w) return false;
  store(w->word, next_version(load(w->word)));  // no longer live
  return true;
}

// Read as a packet reads: the word, the address, the word again. The metrics thread lists while
// rld's loop may write; a way that changed meanwhile is skipped, as a packet would treat it.
template <typename W>
void each_in(std::span<typename W::Set> sets, const std::function<void(const RuntimeEntry&)>& fn) {
  for (const auto& set : sets)
    for (const auto& w : set.way) {
      uint64_t word = load(w.word);
      if (!(word & RL_HOST_LIVE)) continue;
      auto x = W::read(w);
      if (load(w.word) == word) fn(entry_of(W::address(x), word));
    }
}

}  // namespace

HostTable::HostTable(std::span<rl_host_set4> v4, std::span<rl_host_set6> v6, uint64_t seed)
    : v4_(v4), v6_(v6), seed_(seed) {}

HostTable::Put HostTable::put(const Address& host, uint32_t flags, uint64_t expires_ns) {
  if (host.family == 4)
    return put_in<Way4>(set_of<Way4>(v4_, host, seed_), host, flags, expires_ns);
  return put_in<Way6>(set_of<Way6>(v6_, host, seed_), host, flags, expires_ns);
}

bool HostTable::erase(const Address& host) {
  if (host.family == 4) return erase_in<Way4>(set_of<Way4>(v4_, host, seed_), host);
  return erase_in<Way6>(set_of<Way6>(v6_, host, seed_), host);
}

std::optional<RuntimeEntry> HostTable::find(const Address& host) const {
  auto found = [&](auto* w) -> std::optional<RuntimeEntry> {
    if (!w) return std::nullopt;
    return entry_of(host, load(w->word));
  };
  if (host.family == 4)
    return found(live_way<Way4>(set_of<Way4>(v4_, host, seed_), Way4::addr_of(host)));
  return found(live_way<Way6>(set_of<Way6>(v6_, host, seed_), Way6::addr_of(host)));
}

void HostTable::each(const std::function<void(const RuntimeEntry&)>& fn) const {
  each_in<Way4>(v4_, fn);
  each_in<Way6>(v6_, fn);
}

}  // namespace rl
