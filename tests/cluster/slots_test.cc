// SPDX-License-Identifier: GPL-2.0-only
// Redis Cluster's key space as rl computes it: slots as Redis computes them, the spread's hash
// tags, CLUSTER SLOTS replies and redirects read from the wire format.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "cluster/slots.h"
#include "cluster/sync_batch.h"

namespace rl::cluster {
namespace {

// A reply as hiredis reads it off the wire.
struct WireReply {
  explicit WireReply(const std::string& resp) {
    redisReader* reader = redisReaderCreate();
    redisReaderFeed(reader, resp.data(), resp.size());
    void* r = nullptr;
    EXPECT_EQ(redisReaderGetReply(reader, &r), REDIS_OK);
    reply = static_cast<redisReply*>(r);
    redisReaderFree(reader);
  }
  ~WireReply() {
    if (reply) freeReplyObject(reply);
  }
  WireReply(const WireReply&) = delete;
  WireReply& operator=(const WireReply&) = delete;
  redisReply* reply = nullptr;
};

std::string bulk(const std::string& s) {
  return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}
std::string integer(long long v) { return ":" + std::to_string(v) + "\r\n"; }

// One range of CLUSTER SLOTS: [from, to, [host, port, id], [replica...]].
std::string range(long long from, long long to, const std::string& host, int port,
                  const std::string& id) {
  return "*4\r\n" + integer(from) + integer(to) + "*3\r\n" + bulk(host) + integer(port) + bulk(id) +
         "*3\r\n" + bulk(host) + integer(port + 1) + bulk(id + "r");
}

TEST(Slots, Crc16IsRedis) {
  // The check value of CRC-16/XMODEM, which Redis' cluster spec gives as its test vector.
  EXPECT_EQ(crc16("123456789"), 0x31C3);
  EXPECT_EQ(crc16(""), 0);
}

TEST(Slots, KeySlotFollowsHashTags) {
  // CLUSTER KEYSLOT's answers on a real Redis 7.0.
  EXPECT_EQ(key_slot("foo"), 12182);
  EXPECT_EQ(key_slot("bar"), 5061);
  EXPECT_EQ(key_slot("{user1000}.following"), key_slot("user1000"));
  EXPECT_EQ(key_slot("foo{}{bar}"), crc16("foo{}{bar}") % kSlots);  // an empty tag is no tag
  EXPECT_EQ(key_slot("foo{{bar}}zap"), key_slot("{bar"));           // the first '{' counts
  EXPECT_EQ(key_slot("foo{bar}{zap}"), key_slot("bar"));
  EXPECT_EQ(key_slot("rl:{7}:api:60000"), key_slot("7"));
}

TEST(Slots, SpreadTagsSitEvenlyOverTheSlots) {
  const auto& tags = spread_tags(kClusterSpread);
  ASSERT_EQ(tags.size(), kClusterSpread);
  std::set<uint16_t> slots;
  for (uint32_t b = 0; b < kClusterSpread; b++) {
    const uint16_t want = static_cast<uint16_t>((2 * b + 1) * kSlots / (2 * kClusterSpread));
    EXPECT_EQ(key_slot(tags[b]), want) << "bucket " << b << " tag " << tags[b];
    slots.insert(key_slot(tags[b]));
  }
  EXPECT_EQ(slots.size(), kClusterSpread);
  // Any split of the slots into k even ranges gives every range the same number of buckets.
  for (uint32_t k : {2u, 3u, 4u, 5u, 6u, 10u, 12u}) {
    std::map<uint32_t, uint32_t> per_range;
    for (uint16_t s : slots) per_range[static_cast<uint32_t>(uint64_t{s} * k / kSlots)]++;
    for (auto [r, n] : per_range) EXPECT_EQ(n, kClusterSpread / k) << k << " ranges, range " << r;
  }
  // The same every time: the fleet's nodes must agree.
  EXPECT_EQ(&spread_tags(kClusterSpread), &tags);
  EXPECT_EQ(tags[0], spread_tags(kClusterSpread)[0]);
}

TEST(Slots, KeysSpreadEvenlyOverTheBuckets) {
  std::vector<uint32_t> per_bucket(kClusterSpread);
  const uint32_t keys = 60000;
  for (uint32_t i = 0; i < keys; i++) {
    std::string key = "198.18." + std::to_string(i / 256 % 256) + "." + std::to_string(i % 256) +
                      ":" + std::to_string(i / 65536);
    per_bucket[spread_bucket(key, kClusterSpread)]++;
  }
  auto [lo, hi] = std::minmax_element(per_bucket.begin(), per_bucket.end());
  // 1,000 a bucket on average; a fair hash stays within about 4 standard deviations.
  EXPECT_GT(*lo, 870u);
  EXPECT_LT(*hi, 1130u);
  EXPECT_EQ(spread_bucket("anything", 1), 0u);
}

TEST(Slots, ReadsClusterSlots) {
  const std::string resp = "*3\r\n" + range(0, 5460, "10.0.0.1", 7000, "a") +
                           range(5461, 10922, "10.0.0.2", 7000, "b") +
                           range(10923, 16383, "", 7002, "c");
  WireReply r(resp);
  ASSERT_NE(r.reply, nullptr);
  auto map = parse_cluster_slots(*r.reply, "10.0.0.9");
  ASSERT_TRUE(map) << map.error().str();
  ASSERT_EQ(map->masters.size(), 3u);
  EXPECT_EQ(map->masters[0].addr(), "10.0.0.1:7000");
  EXPECT_EQ(map->masters[2].addr(), "10.0.0.9:7002") << "a node without an address is the asked";
  EXPECT_EQ(map->masters[1].id, "b");
  EXPECT_EQ(map->owner[0], 0);
  EXPECT_EQ(map->owner[5461], 1);
  EXPECT_EQ(map->owner[16383], 2);
  EXPECT_EQ(map->slots_of(0), 5461u);
  EXPECT_EQ(map->unserved(), 0u);

  WireReply partial("*1\r\n" + range(0, 99, "10.0.0.1", 7000, "a"));
  auto some = parse_cluster_slots(*partial.reply, "x");
  ASSERT_TRUE(some);
  EXPECT_EQ(some->unserved(), kSlots - 100u);
  EXPECT_FALSE(*some == *map);

  WireReply bad("*1\r\n*3\r\n:10\r\n:5\r\n*0\r\n");
  EXPECT_FALSE(parse_cluster_slots(*bad.reply, "x"));
  WireReply error("-ERR This instance has cluster support disabled\r\n");
  auto refused = parse_cluster_slots(*error.reply, "x");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("cluster support disabled"), std::string::npos);
}

TEST(Slots, ReadsRedirects) {
  auto moved = parse_redirect("MOVED 3999 127.0.0.1:6381");
  ASSERT_TRUE(moved);
  EXPECT_FALSE(moved->ask);
  EXPECT_EQ(moved->slot, 3999);
  EXPECT_EQ(moved->host, "127.0.0.1");
  EXPECT_EQ(moved->port, 6381);
  auto ask = parse_redirect("ASK 12 [2001:db8::1]:7000");
  ASSERT_TRUE(ask);
  EXPECT_TRUE(ask->ask);
  EXPECT_EQ(ask->host, "2001:db8::1");
  auto bare = parse_redirect("MOVED 1 :7001");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->host, "");
  EXPECT_FALSE(parse_redirect("MOVED 16384 h:1"));
  EXPECT_FALSE(parse_redirect("MOVED x h:1"));
  EXPECT_FALSE(parse_redirect("ERR MOVED 1 h:1"));
  EXPECT_EQ(reply_error_kind("MOVED 1 h:1"), ErrorKind::kRedirect);
  EXPECT_EQ(reply_error_kind("TRYAGAIN Multiple keys request during rehashing"),
            ErrorKind::kClusterDown);
  EXPECT_EQ(reply_error_kind("CLUSTERDOWN The cluster is down"), ErrorKind::kClusterDown);
}

// A spread batch makes one call per rule and bucket, named by the bucket's tag, so every call
// touches one slot; every key lands in one call, once.
TEST(Slots, SpreadBatchCallsTouchOneSlotEach) {
  std::vector<KeyDelta> deltas;
  deltas.reserve(3001);
  for (int i = 0; i < 3000; i++)
    deltas.push_back({i % 2 ? "api" : "dns",
                      "198.18.0." + std::to_string(i / 2 % 256) + ":" + std::to_string(i / 512), 1,
                      100, 60000});
  deltas.push_back(deltas.front());  // a repeat folds into its slot
  SyncBatch batch("rl", deltas, {}, kClusterSpread);
  std::set<std::string> hashes;
  size_t keys = 0;
  for (size_t c = 0; c < batch.calls().size(); c++) {
    const auto& call = batch.calls()[c];
    ASSERT_EQ(batch.keys(c).size(), 1u);
    const std::string hash(batch.keys(c)[0]);
    EXPECT_TRUE(hashes.insert(hash).second) << hash;
    EXPECT_EQ(hash, spread_hash("rl", spread_tags(kClusterSpread)[call.bucket], call.rule, 60000));
    EXPECT_EQ(key_slot(hash), key_slot(spread_tags(kClusterSpread)[call.bucket]));
    for (size_t i : call.indices)
      EXPECT_EQ(spread_bucket(deltas[i].key, kClusterSpread), call.bucket);
    keys += call.indices.size();
  }
  EXPECT_EQ(keys, 3000u);
  EXPECT_EQ(batch.calls().size(), 2 * kClusterSpread);
  // Without a spread, one call per rule under the rule's own tag, as before.
  SyncBatch one("rl", deltas);
  ASSERT_EQ(one.calls().size(), 2u);
  EXPECT_EQ(std::string(one.keys(0)[0]), "rl:{dns}:60000");
}

}  // namespace
}  // namespace rl::cluster
