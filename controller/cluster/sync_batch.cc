#include "cluster/sync_batch.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <bit>
#include <map>
#include <memory_resource>
#include <tuple>
#include <unordered_map>

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
  if (!d.key.empty() && d.key[0] == kReservedPrefix) return "key text starts with '#'";
  return nullptr;
}

// The deltas as one argument of little-endian doubles (Lua's struct "<d" each, exact below
// 2^53): the script unpacks 2,000 at a time, which costs a fraction of converting 2,000
// decimal arguments with tonumber() (strtod), and Redis parses one argument instead of n.
std::string pack_deltas(const uint64_t* deltas, size_t n) {
  std::string out(8 * n, '\0');
  for (size_t i = 0; i < n; i++) {
    auto bits = std::bit_cast<uint64_t>(static_cast<double>(deltas[i]));
    for (int b = 0; b < 8; b++) out[8 * i + b] = static_cast<char>(bits >> (8 * b));
  }
  return out;
}

}  // namespace

std::string rule_hash(const std::string& prefix, const std::string& rule, uint64_t window_ms) {
  return prefix + ":{" + rule + "}:" + std::to_string(window_ms);
}

SyncBatch::SyncBatch(const std::string& prefix, const std::vector<KeyDelta>& deltas) {
  std::map<std::tuple<std::string_view, uint64_t, uint64_t>, size_t> by_rule;
  // Per rule: key -> slot. The nodes come from one arena freed with the batch: a sync of 100,000
  // keys would otherwise make 100,000 allocations just to find repeats.
  std::pmr::monotonic_buffer_resource arena(deltas.size() * 48);
  std::vector<std::pmr::unordered_map<std::string_view, size_t>> slots;
  // Per rule first: the rule's keys (each once), their summed deltas and their request indices.
  std::vector<Call> rules;
  std::vector<std::vector<std::string_view>> rule_keys;
  std::vector<std::vector<uint64_t>> sums;
  size_t last_call = SIZE_MAX;  // deltas come grouped by rule: skip the map lookup
  for (size_t i = 0; i < deltas.size(); i++) {
    const KeyDelta& d = deltas[i];
    if (const char* why = why_invalid(d)) {
      if (invalid_.empty()) invalid_reason_ = "rule '" + d.rule + "' key '" + d.key + "': " + why;
      invalid_.push_back(i);
      continue;
    }
    size_t c = last_call;
    if (c == SIZE_MAX || rules[c].rule != d.rule || rules[c].limit != d.limit ||
        rules[c].window_ms != d.window_ms) {
      auto [rule, fresh] = by_rule.try_emplace({d.rule, d.limit, d.window_ms}, rules.size());
      c = last_call = rule->second;
      if (fresh) {
        rules.push_back(Call{d.rule, d.limit, d.window_ms, {}, {}});
        rule_keys.emplace_back();
        slots.emplace_back(&arena);
        // The first rule may well hold every key; later ones grow as needed.
        if (c == 0) slots.back().reserve(deltas.size() - i);
        sums.emplace_back();
      }
    }
    auto [slot, first] = slots[c].try_emplace(d.key, rules[c].indices.size());
    if (first) {
      rules[c].indices.push_back(i);
      rule_keys[c].push_back(d.key);
      sums[c].push_back(d.delta);
    } else {
      rules[c].repeats.emplace_back(i, slot->second);
      uint64_t& sum = sums[c][slot->second];
      sum = std::min(sum + d.delta, kMaxExact);  // both terms are below 2^53: no wrap
    }
  }
  // Each rule's keys go out in calls of at most kMaxCallKeys: the store sends a call as soon as
  // it is formatted, so Redis runs one while the next is being formatted. A key's repeats
  // follow it into its call.
  for (size_t c = 0; c < rules.size(); c++) {
    const Call& rule = rules[c];
    const size_t n = rule.indices.size(), first = calls_.size();
    for (size_t from = 0; from < n; from += kMaxCallKeys) {
      const size_t to = std::min(n, from + kMaxCallKeys);
      Call call{rule.rule, rule.limit, rule.window_ms, {}, {}};
      call.indices.assign(rule.indices.begin() + from, rule.indices.begin() + to);
      calls_.push_back(std::move(call));
      hashes_.push_back(rule_hash(prefix, rule.rule, rule.window_ms));
      keys_.emplace_back(rule_keys[c].begin() + from, rule_keys[c].begin() + to);
      std::vector<std::string> args;
      args.reserve(4);
      args.push_back(std::to_string(rule.limit));
      args.push_back(std::to_string(rule.window_ms));
      args.push_back(std::to_string(to - from));
      args.push_back(pack_deltas(&sums[c][from], to - from));
      args_.push_back(std::move(args));
    }
    for (auto [index, slot] : rule.repeats)
      calls_[first + slot / kMaxCallKeys].repeats.emplace_back(index, slot % kMaxCallKeys);
  }
}

std::vector<std::string_view> SyncBatch::keys(size_t i) const { return {hashes_[i]}; }

std::vector<std::string_view> SyncBatch::args(size_t i) const {
  // limit, window, n, the n key texts, the n deltas packed.
  std::vector<std::string_view> a;
  a.reserve(args_[i].size() + keys_[i].size());
  a.insert(a.end(), args_[i].begin(), args_[i].begin() + 3);
  a.insert(a.end(), keys_[i].begin(), keys_[i].end());
  a.push_back(args_[i][3]);
  return a;
}

Status SyncBatch::read_reply(size_t i, const redisReply& r, SyncReply& out) const {
  const Call& call = calls_[i];
  auto bad = [&](const std::string& what) {
    return Error{EPROTO, "rule '" + call.rule + "': unexpected script reply: " + what};
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
  if (call.repeats.empty()) return Status::Ok();
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
  return Status::Ok();
}

}  // namespace rl::cluster
