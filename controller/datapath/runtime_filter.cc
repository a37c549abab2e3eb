// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/runtime_filter.h"

#include <algorithm>
#include <atomic>

#include "compiler/source_filter.h"
#include "rl_abi.h"
#include "rl_hash.h"
#include "rl_layout.h"

namespace rl {
namespace {

// The bit of address a in the filter of a family whose min_len is min_len.
uint32_t bit_of(const Address& a, uint32_t min_len) {
  return rl_rtf_bit(compiler::source_filter_hash(a, min_len));
}

}  // namespace

RuntimeFilter::RuntimeFilter(std::span<uint64_t> words, GracePeriod grace_period)
    : words_(words), grace_period_(std::move(grace_period)) {}

uint64_t RuntimeFilter::switch_word() const { return std::atomic_ref<uint64_t>(words_[0]).load(); }

uint64_t* RuntimeFilter::half_words(uint32_t half, uint32_t fam6) const {
  return &words_[rl_rtf_index(half, fam6, 0)];
}

Status RuntimeFilter::add(const Prefix& p, const Entries& entries) {
  const uint32_t fam6 = p.addr.family == 6;
  // Packets of a family without hosts skip their hash: its bit goes up before a host goes in.
  if (p.is_host()) std::atomic_ref<uint64_t>(words_[0]).fetch_or(rl_rtf_hosts_bit(fam6));
  const uint64_t sw = switch_word();
  if (!(sw & RL_RTF_BUILT) || p.len < rl_rtf_min_len(sw, fam6)) {
    auto all = entries();
    if (!all) return all.error().wrap("runtime filter");
    all->push_back(p);
    return rebuild(*all);
  }
  const uint32_t bit = bit_of(p.addr, rl_rtf_min_len(sw, fam6));
  std::atomic_ref<uint64_t>(half_words(rl_rtf_half(sw), fam6)[bit / 64])
      .fetch_or(1ULL << (bit % 64));
  set_++;
  return {};
}

Status RuntimeFilter::removed(const Entries& entries) {
  removed_++;
  if (removed_ * 2 < set_) return {};
  auto all = entries();
  if (!all) return all.error().wrap("runtime filter");
  return rebuild(*all);
}

Status RuntimeFilter::rebuild(const std::vector<Prefix>& entries) {
  uint32_t min_len[2] = {RL_RTF_NONE, RL_RTF_NONE};
  uint64_t hosts = 0;
  for (const auto& e : entries) {
    uint32_t& m = min_len[e.addr.family == 6];
    m = std::min<uint32_t>(m, e.len);
    if (e.is_host()) hosts |= rl_rtf_hosts_bit(e.addr.family == 6);
  }
  const uint64_t sw = switch_word();
  const uint32_t half = (sw & RL_RTF_BUILT) ? rl_rtf_half(sw) ^ 1 : 0;
  // A packet that read the switch before the last rebuild stored it may still read this half.
  // Before the first build packets read no half at all.
  if (sw & RL_RTF_BUILT)
    if (Status s = grace_period_(); !s) return s.error().wrap("runtime filter");
  for (uint32_t fam6 = 0; fam6 < 2; fam6++)
    for (uint32_t w = 0; w < RL_RUNTIME_FILTER_WORDS; w++)
      std::atomic_ref<uint64_t>(half_words(half, fam6)[w]).store(0);
  for (const auto& e : entries) {
    const uint32_t fam6 = e.addr.family == 6;
    const uint32_t bit = bit_of(e.addr, min_len[fam6]);
    std::atomic_ref<uint64_t>(half_words(half, fam6)[bit / 64]).fetch_or(1ULL << (bit % 64));
  }
  std::atomic_ref<uint64_t>(words_[0]).store(uint64_t{min_len[0]} | uint64_t{min_len[1]} << 8 |
                                             uint64_t{half} << RL_RTF_HALF_SHIFT | RL_RTF_BUILT |
                                             hosts | hashed_);
  set_ = entries.size();
  removed_ = 0;
  return {};
}

void RuntimeFilter::hash_in_use(uint32_t fam6) {
  hashed_ |= rl_rtf_hash_bit(fam6);
  std::atomic_ref<uint64_t>(words_[0]).fetch_or(rl_rtf_hash_bit(fam6));
}

void RuntimeFilter::hash_emptied(uint32_t fam6) {
  hashed_ &= ~rl_rtf_hash_bit(fam6);
  std::atomic_ref<uint64_t>(words_[0]).fetch_and(~rl_rtf_hash_bit(fam6));
}

}  // namespace rl
