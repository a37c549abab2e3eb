// SPDX-License-Identifier: GPL-2.0-only
// The runtime lists' host table (controller/datapath/host_table.h) over sets the test owns, with
// packets modelled as the XDP program reads a way (bpf/lib/host_table.h: the word, the address,
// the word again).
#include "datapath/host_table.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <type_traits>
#include <vector>

#include "rl_hash.h"

namespace rl::testing {
namespace {

constexpr uint64_t kSeed = 0x5eed5eed12345678ULL;

struct Lab {
  std::vector<rl_host_set4> v4 = std::vector<rl_host_set4>(RL_HOST_SETS_V4);
  std::vector<rl_host_set6> v6 = std::vector<rl_host_set6>(RL_HOST_SETS_V6);
  HostTable table{v4, v6, kSeed};
};

Address A(const char* text) { return *Address::parse(text); }

uint32_t set4(const Address& a) {
  uint32_t w[4];
  std::memcpy(w, a.bytes.data(), sizeof(w));
  return rl_host_set_index(w, a.family, kSeed);
}

// `n` IPv4 hosts of 198.18.0.0/15 that share one set.
std::vector<Address> same_set(size_t n) {
  std::vector<std::vector<Address>> by_set(RL_HOST_SETS_V4);
  for (uint32_t i = 0; i < (1u << 17); i++) {
    Address a;
    uint32_t host = htonl((198u << 24 | 18u << 16) + i);
    std::memcpy(a.bytes.data(), &host, 4);
    auto& set = by_set[set4(a)];
    set.push_back(a);
    if (set.size() == n) return set;
  }
  return {};
}

// The word of the way a packet from `a` trusts, read as the program reads (one scan; 0 for none
// or a way that changed meanwhile).
uint64_t packet_word(const Lab& lab, const Address& a) {
  uint32_t addr;
  std::memcpy(&addr, a.bytes.data(), 4);
  auto load = [](const auto& x) {
    using T = std::remove_cvref_t<decltype(x)>;
    return std::atomic_ref<T>(const_cast<T&>(x)).load(std::memory_order_acquire);
  };
  for (const auto& w : lab.v4[set4(a)].way) {
    uint64_t word = load(w.word);
    if (!(word & RL_HOST_LIVE) || load(w.addr) != addr) continue;
    return load(w.word) == word ? word : 0;
  }
  return 0;
}

uint32_t packet_flags(const Lab& lab, const Address& a, uint64_t now) {
  uint64_t word = packet_word(lab, a);
  return word ? rl_host_word_flags(word, now) : 0;
}

TEST(HostTable, PutFindChangeEraseAndList) {
  Lab lab;
  const uint64_t unit = 1ULL << RL_HOST_EXPIRY_SHIFT;
  EXPECT_EQ(lab.table.put(A("198.18.0.7"), RL_SRC_F_DENY, 0), HostTable::Put::kAdded);
  EXPECT_EQ(lab.table.put(A("2001:db8::7"), RL_SRC_F_ALLOW, 10 * unit + 1), HostTable::Put::kAdded);
  auto e = lab.table.find(A("2001:db8::7"));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->prefix, *Prefix::parse("2001:db8::7/128"));
  EXPECT_EQ(e->flags, RL_SRC_F_ALLOW);
  EXPECT_EQ(e->expires_ns, 11 * unit) << "rounded up: never early";
  EXPECT_FALSE(lab.table.find(A("2001:db8::8")));

  EXPECT_EQ(lab.table.put(A("198.18.0.7"), RL_SRC_F_ALLOW, 5 * unit), HostTable::Put::kChanged);
  EXPECT_EQ(lab.table.find(A("198.18.0.7"))->flags, RL_SRC_F_ALLOW);
  EXPECT_EQ(packet_flags(lab, A("198.18.0.7"), 5 * unit - 1), RL_SRC_F_ALLOW);
  EXPECT_EQ(packet_flags(lab, A("198.18.0.7"), 5 * unit), 0u) << "expired";

  std::vector<RuntimeEntry> listed;
  lab.table.each([&](const RuntimeEntry& x) { listed.push_back(x); });
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].prefix, *Prefix::parse("198.18.0.7/32"));

  EXPECT_TRUE(lab.table.erase(A("198.18.0.7")));
  EXPECT_FALSE(lab.table.erase(A("198.18.0.7")));
  EXPECT_FALSE(lab.table.find(A("198.18.0.7")));
  EXPECT_EQ(packet_flags(lab, A("198.18.0.7"), 0), 0u);
}

TEST(HostTable, AFullSetSaysSoAndAFreedWayTakesTheNext) {
  Lab lab;
  auto hosts = same_set(RL_HOST_WAYS_V4 + 1);
  ASSERT_EQ(hosts.size(), RL_HOST_WAYS_V4 + 1u);
  for (size_t i = 0; i < RL_HOST_WAYS_V4; i++)
    EXPECT_EQ(lab.table.put(hosts[i], RL_SRC_F_DENY, 0), HostTable::Put::kAdded);
  EXPECT_EQ(lab.table.put(hosts.back(), RL_SRC_F_DENY, 0), HostTable::Put::kFull);
  EXPECT_FALSE(lab.table.find(hosts.back()));
  EXPECT_TRUE(lab.table.erase(hosts[1]));
  EXPECT_EQ(lab.table.put(hosts.back(), RL_SRC_F_DENY, 0), HostTable::Put::kAdded);
  EXPECT_EQ(packet_flags(lab, hosts.back(), 0), RL_SRC_F_DENY);
  EXPECT_EQ(packet_flags(lab, hosts[1], 0), 0u);
}

// rld rewrites ways while packets read them. Hosts of one set are added and removed over and over,
// each with an expiry of its own: a packet must find its own host's entry or none, never an entry
// another host had or is getting in the way it reads.
TEST(HostTable, APacketNeverTakesAnotherHostsEntry) {
  Lab lab;
  auto hosts = same_set(RL_HOST_WAYS_V4 + 2);
  ASSERT_EQ(hosts.size(), RL_HOST_WAYS_V4 + 2u);
  auto own = [](size_t i) { return (i + 1) << RL_HOST_EXPIRY_SHIFT; };  // one unit apart
  std::atomic<bool> done{false};
  std::atomic<uint64_t> wrong{0}, found{0};
  std::thread reader([&] {
    for (uint64_t n = 0; !done.load(std::memory_order_relaxed); n++) {
      size_t i = n % hosts.size();
      uint64_t word = packet_word(lab, hosts[i]);
      if (!word) continue;
      found.fetch_add(1, std::memory_order_relaxed);
      if ((word & RL_HOST_EXPIRY_MASK) << RL_HOST_EXPIRY_SHIFT != own(i))
        wrong.fetch_add(1, std::memory_order_relaxed);
    }
  });
  // Every way is rewritten with each of the hosts in turn (a put, then the erase of a host put
  // three rounds before), for at least 2,000,000 rounds and until the reader has found entries.
  for (int round = 0; round < 2000000 || (found.load() < 1000 && round < 200000000); round++) {
    size_t i = round % hosts.size();
    (void)lab.table.put(hosts[i], RL_SRC_F_DENY, own(i));
    (void)lab.table.erase(hosts[(i + hosts.size() - 3) % hosts.size()]);
  }
  done = true;
  reader.join();
  EXPECT_EQ(wrong.load(), 0u);
  EXPECT_GE(found.load(), 1000u) << "the reader ran while entries were in";
}

}  // namespace
}  // namespace rl::testing
