// SPDX-License-Identifier: GPL-2.0-only
#include "cluster/sync_batch.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <bit>
#include <map>
#include <memory_resource>
#include <tuple>
#include <unordered_map>

#include "cluster/slots.h"

namespace rl::cluster {
namespace {

// Lua numbers are doubles: integers are exact below 2^53.
constexpr uint64_t kMaxExact = (uint64_t{1} << 53) - 1;

const char* why_invalid(const KeyDelta& d) {
  if (d.rule.empty()) return "empty rule name";
  // A brace would move the hash tag, and with it the key's slot and name.
  if (d.rule.find_first_of("{}") != std::string::npos) return "rule name contains '{' or '}'";
  if (d.window_ms == 0) return "window_ms is 0";
  // The script's for_ms arithmetic stays exact below this (docs/cluster.md).
  if (d.window_ms >= (uint64_t{1} << 36)) return "window_ms is 2^36 or more";
  if (d.delta > kMaxExact) return "delta is 2^53 or more";
  if (d.limit > kMaxExact) return "limit is 2^53 or more";
  if (!d.key.empty() && d.key[0] == kReservedPrefix) return "key text starts with '#'";
  return nullptr;
}

// Deltas or limits as one argument of little-endian doubles (Lua's struct "<d" each, exact
// below 2^53): the script unpacks 2,000 at a time, which costs a fraction of converting 2,000
// decimal arguments with tonumber() (strtod), and Redis parses one argument instead of n.
std::string pack_counts(const uint64_t* values, size_t n) {
  std::string out(8 * n, '\0');
  for (size_t i = 0; i < n; i++) {
    auto bits = std::bit_cast<uint64_t>(static_cast<double>(values[i]));
    for (int b = 0; b < 8; b++) out[8 * i + b] = static_cast<char>(bits >> (8 * b));
  }
  return out;
}

}  // namespace

std::string rule_hash(const std::string& prefix, const std::string& rule, uint64_t window_ms) {
  return prefix + ":{" + rule + "}:" + std::to_string(window_ms);
}

std::string spread_hash(const std::string& prefix, std::string_view tag, const std::string& rule,
                        uint64_t window_ms) {
  return prefix + ":{" + std::string(tag) + "}:" + rule + ":" + std::to_string(window_ms);
}

SyncBatch::SyncBatch(std::string prefix, Ready ready, uint32_t spread)
    : prefix_(std::move(prefix)),
      ready_(std::move(ready)),
      spread_(std::max<uint32_t>(spread, 1)) {}

SyncBatch::SyncBatch(const std::string& prefix, const std::vector<KeyDelta>& deltas,
                     const Ready& ready, uint32_t spread)
    : SyncBatch(prefix, ready, spread) {
  expected_ = deltas.size();
  for (size_t i = 0; i < deltas.size(); i++) add(deltas[i], i);
  finish();
}

void SyncBatch::open_call(Open& o, const KeyDelta& d, uint32_t bucket, size_t expected) {
  o.call = calls_.size();
  o.opened = true;
  calls_.push_back(Call{d.rule, d.window_ms, bucket, {}, {}});
  hashes_.push_back(spread_ == 1
                        ? rule_hash(prefix_, d.rule, d.window_ms)
                        : spread_hash(prefix_, spread_tags(spread_)[bucket], d.rule, d.window_ms));
  keys_.emplace_back();
  args_.emplace_back();
  const size_t n = std::min(expected, kMaxCallKeys);
  o.slots.clear();
  o.slots.reserve(n);
  o.sums.clear();
  o.sums.reserve(n);
  o.limits.clear();
  o.limits.reserve(n);
  calls_.back().indices.reserve(n);
  keys_.back().reserve(n);
}

void SyncBatch::close_call(Open& o) {
  const Call& call = calls_[o.call];
  args_[o.call] = {std::to_string(call.window_ms), std::to_string(call.indices.size()),
                   pack_counts(o.sums.data(), o.sums.size()),
                   pack_counts(o.limits.data(), o.limits.size())};
  const size_t closed = o.call;
  o.call = SIZE_MAX;
  if (ready_) ready_(*this, closed);
}

void SyncBatch::add(const KeyDelta& d, size_t i) {
  if (const char* why = why_invalid(d)) {
    if (invalid_.empty()) invalid_reason_ = "rule '" + d.rule + "' key '" + d.key + "': " + why;
    invalid_.push_back(i);
    return;
  }
  if (last_ == SIZE_MAX || last_rule_.first != d.rule || last_rule_.second != d.window_ms) {
    auto [rule, fresh] = by_rule_.try_emplace({d.rule, d.window_ms}, open_.size());
    last_ = rule->second;
    last_rule_ = rule->first;
    if (fresh)
      for (uint32_t b = 0; b < spread_; b++)
        open_.push_back(Open{SIZE_MAX, false, decltype(Open::slots)(&arena_), {}, {}});
  }
  const uint32_t bucket = spread_bucket(d.key, spread_);
  Open& o = open_[last_ + bucket];
  if (o.call == SIZE_MAX) {
    // The first rule, or a bucket that filled a call already, may well hold its share of every
    // key left; the others start small and grow.
    const size_t left = expected_ > i ? expected_ - i : kMaxCallKeys;
    open_call(o, d, bucket, last_ == 0 || o.opened ? left / spread_ + 1 : 0);
  }
  Call& call = calls_[o.call];
  auto [slot, first] = o.slots.try_emplace(d.key, call.indices.size());
  if (!first) {
    call.repeats.emplace_back(i, slot->second);
    uint64_t& sum = o.sums[slot->second];
    sum = std::min(sum + d.delta, kMaxExact);  // both terms are below 2^53: no wrap
    // Listed twice with different limits (a replayed delta and a fresh one, whose headroom
    // differs): the stricter holds.
    o.limits[slot->second] = std::min(o.limits[slot->second], d.limit);
    return;
  }
  call.indices.push_back(i);
  keys_[o.call].push_back(d.key);
  o.sums.push_back(d.delta);
  o.limits.push_back(d.limit);
  if (call.indices.size() == kMaxCallKeys) close_call(o);
}

void SyncBatch::finish() {
  for (Open& o : open_)
    if (o.call != SIZE_MAX) close_call(o);
}

std::vector<std::string_view> SyncBatch::keys(size_t i) const { return {hashes_[i]}; }

std::vector<std::string_view> SyncBatch::args(size_t i) const {
  // window, n, the n key texts, the n deltas packed, the n limits packed.
  std::vector<std::string_view> a;
  a.reserve(args_[i].size() + keys_[i].size());
  a.insert(a.end(), args_[i].begin(), args_[i].begin() + 2);
  a.insert(a.end(), keys_[i].begin(), keys_[i].end());
  a.push_back(args_[i][2]);
  a.push_back(args_[i][3]);
  return a;
}

StoreStatus SyncBatch::read_reply(size_t i, const redisReply& r, SyncReply& out) const {
  const Call& call = calls_[i];
  auto bad = [&](const std::string& what) {
    return StoreError{ErrorKind::kProtocol, EPROTO,
                      "rule '" + call.rule + "': unexpected script reply: " + what};
  };
  if (r.type != REDIS_REPLY_ARRAY) return bad("not an array");
  if (r.elements < 1 || (r.elements - 1) % 3 != 0)
    return bad(std::to_string(r.elements) + " elements");
  for (size_t e = 0; e < r.elements; e++) {
    if (r.element[e]->type != REDIS_REPLY_INTEGER || r.element[e]->integer < 0)
      return bad("element " + std::to_string(e) + " is not a count");
    if (e % 3 == 1 && (r.element[e]->integer < 1 ||
                       static_cast<size_t>(r.element[e]->integer) > call.indices.size()))
      return bad("no key " + std::to_string(r.element[e]->integer));
  }
  out.server_time_ms = std::max(out.server_time_ms, static_cast<uint64_t>(r.element[0]->integer));
  size_t first = out.over.size();
  for (size_t e = 1; e < r.elements; e += 3) {
    auto slot = static_cast<size_t>(r.element[e]->integer) - 1;
    out.over.push_back(OverLimit{call.indices[slot],
                                 static_cast<uint64_t>(r.element[e + 1]->integer),
                                 static_cast<uint64_t>(r.element[e + 2]->integer)});
  }
  if (call.repeats.empty()) return StoreStatus::Ok();
  // A repeated key is over exactly when its first listing is.
  std::unordered_map<size_t, OverLimit> over_by_slot;
  for (size_t o = first, e = 1; o < out.over.size(); o++, e += 3)
    over_by_slot.emplace(static_cast<size_t>(r.element[e]->integer) - 1, out.over[o]);
  for (auto [index, slot] : call.repeats) {
    auto it = over_by_slot.find(slot);
    if (it == over_by_slot.end()) continue;
    OverLimit copy = it->second;
    copy.index = index;
    out.over.push_back(copy);
  }
  return StoreStatus::Ok();
}

}  // namespace rl::cluster
