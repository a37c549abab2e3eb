// SPDX-License-Identifier: GPL-2.0-only
#include "cluster/slots.h"

#include <hiredis/hiredis.h>

#include <charconv>
#include <map>
#include <mutex>

namespace rl::cluster {
namespace {

constexpr std::array<uint16_t, 256> make_crc16_table() {
  std::array<uint16_t, 256> t{};
  for (uint32_t i = 0; i < 256; i++) {
    uint32_t c = i << 8;
    for (int b = 0; b < 8; b++) c = (c & 0x8000) ? (c << 1) ^ 0x1021 : c << 1;
    t[i] = static_cast<uint16_t>(c);
  }
  return t;
}
constexpr auto kCrc16Table = make_crc16_table();

StoreError bad(const std::string& what) {
  return StoreError{ErrorKind::kProtocol, EPROTO, "CLUSTER SLOTS: " + what};
}

}  // namespace

uint16_t crc16(std::string_view data) {
  uint16_t crc = 0;
  for (char ch : data)
    crc = static_cast<uint16_t>((crc << 8) ^
                                kCrc16Table[((crc >> 8) ^ static_cast<uint8_t>(ch)) & 0xff]);
  return crc;
}

uint16_t key_slot(std::string_view key) {
  size_t open = key.find('{');
  if (open != std::string_view::npos) {
    size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1)
      key = key.substr(open + 1, close - open - 1);
  }
  return crc16(key) & (kSlots - 1);
}

uint32_t spread_bucket(std::string_view key_text, uint32_t spread) {
  if (spread <= 1) return 0;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char ch : key_text) {
    h ^= static_cast<uint8_t>(ch);
    h *= 0x100000001b3ULL;
  }
  return static_cast<uint32_t>(h % spread);
}

const std::vector<std::string>& spread_tags(uint32_t spread) {
  static std::mutex mu;
  static std::map<uint32_t, std::vector<std::string>> made;
  std::lock_guard lock(mu);
  auto [it, fresh] = made.try_emplace(spread);
  if (!fresh) return it->second;
  std::vector<std::string>& tags = it->second;
  tags.resize(spread);
  // Slot -> the bucket that wants it; every bucket wants a different slot while spread <= 8,192.
  std::map<uint16_t, uint32_t> wanted;
  for (uint32_t b = 0; b < spread; b++)
    wanted[static_cast<uint16_t>((uint64_t{2} * b + 1) * kSlots / (uint64_t{2} * spread))] = b;
  for (uint64_t n = 0; !wanted.empty(); n++) {
    std::string tag = std::to_string(n);
    auto w = wanted.find(key_slot(tag));
    if (w == wanted.end()) continue;
    tags[w->second] = tag;
    wanted.erase(w);
  }
  return tags;
}

size_t SlotMap::unserved() const {
  size_t n = 0;
  for (int16_t o : owner) n += o < 0;
  return n;
}

size_t SlotMap::slots_of(size_t i) const {
  size_t n = 0;
  for (int16_t o : owner) n += o == static_cast<int16_t>(i);
  return n;
}

bool SlotMap::masters_equal(const SlotMap& o) const {
  if (masters.size() != o.masters.size()) return false;
  for (size_t i = 0; i < masters.size(); i++)
    if (masters[i].host != o.masters[i].host || masters[i].port != o.masters[i].port) return false;
  return true;
}

StoreResult<SlotMap> parse_cluster_slots(const redisReply& r, const std::string& asked_host) {
  if (r.type == REDIS_REPLY_ERROR) return bad(std::string(r.str, r.len));
  if (r.type != REDIS_REPLY_ARRAY) return bad("not an array");
  SlotMap map;
  std::map<std::string, int16_t> index;  // "host:port" -> masters
  for (size_t i = 0; i < r.elements; i++) {
    const redisReply& range = *r.element[i];
    if (range.type != REDIS_REPLY_ARRAY || range.elements < 3) return bad("a range is short");
    const redisReply& from = *range.element[0];
    const redisReply& to = *range.element[1];
    const redisReply& node = *range.element[2];
    if (from.type != REDIS_REPLY_INTEGER || to.type != REDIS_REPLY_INTEGER || from.integer < 0 ||
        to.integer < from.integer || to.integer >= kSlots)
      return bad("a range's bounds");
    if (node.type != REDIS_REPLY_ARRAY || node.elements < 2 ||
        node.element[0]->type != REDIS_REPLY_STRING || node.element[1]->type != REDIS_REPLY_INTEGER)
      return bad("a range's master");
    SlotMap::Node n;
    n.host.assign(node.element[0]->str, node.element[0]->len);
    if (n.host.empty() || n.host == "?") n.host = asked_host;
    n.port = static_cast<int>(node.element[1]->integer);
    if (node.elements > 2 && node.element[2]->type == REDIS_REPLY_STRING)
      n.id.assign(node.element[2]->str, node.element[2]->len);
    auto [it, fresh] = index.try_emplace(n.addr(), static_cast<int16_t>(map.masters.size()));
    if (fresh) map.masters.push_back(std::move(n));
    for (long long s = from.integer; s <= to.integer; s++) map.owner[s] = it->second;
  }
  return map;
}

std::optional<Redirect> parse_redirect(std::string_view reply) {
  Redirect r;
  if (reply.rfind("MOVED ", 0) == 0) {
    reply.remove_prefix(6);
  } else if (reply.rfind("ASK ", 0) == 0) {
    r.ask = true;
    reply.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  size_t sp = reply.find(' ');
  if (sp == std::string_view::npos) return std::nullopt;
  unsigned slot = 0;
  auto [p, ec] = std::from_chars(reply.data(), reply.data() + sp, slot);
  if (ec != std::errc() || p != reply.data() + sp || slot >= kSlots) return std::nullopt;
  r.slot = static_cast<uint16_t>(slot);
  std::string_view addr = reply.substr(sp + 1);
  size_t colon = addr.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto [q, ec2] = std::from_chars(addr.data() + colon + 1, addr.data() + addr.size(), r.port);
  if (ec2 != std::errc() || r.port < 1 || r.port > 65535) return std::nullopt;
  r.host = std::string(addr.substr(0, colon));
  if (r.host.size() > 1 && r.host.front() == '[' && r.host.back() == ']')
    r.host = r.host.substr(1, r.host.size() - 2);
  return r;
}

}  // namespace rl::cluster
