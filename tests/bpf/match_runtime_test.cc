// SPDX-License-Identifier: GPL-2.0-only
// The runtime allow and deny lists (rlctl allow/deny): longest match, expiry, the filter in front
// of the tries, the host table and its hash, and entries that an earlier rld left in pinned maps.
#include <arpa/inet.h>
#include <bpf/bpf.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

#include "common/fd.h"
#include "datapath/pins.h"
#include "match_fixture.h"
#include "rl_hash.h"

namespace rl::testing {
namespace {

TEST_F(MatchTest, RuntimeAllowAndDenyWithExpiry) {
  policy::Policy p;
  p.rules = {token_bucket("all", 1, 1)};
  apply(p);
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.1.0/24"), RL_SRC_F_ALLOW, kT0 + 10 * kSec).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("2001:db8::/32"), RL_SRC_F_DENY, 0).ok());
  EXPECT_EQ(send(udp4("198.18.1.5")).reason, RL_REASON_RUNTIME_ALLOW);
  EXPECT_EQ(send(udp6("2001:db8::5")).reason, RL_REASON_RUNTIME_DENY);
  hooks().set_clock(kT0 + 11 * kSec);
  EXPECT_EQ(send(udp4("198.18.1.5")).reason, RL_REASON_ADMITTED) << "expired entries stop applying";
  ASSERT_TRUE(dp_->runtime_acl_remove(P("2001:db8::/32")).ok());
  EXPECT_EQ(send(udp6("2001:db8::5")).reason, RL_REASON_ADMITTED);
}

// A host's entry that has expired stops applying, and its prefix's entry applies again at once,
// before rld removes the expired one: the host's hash answers first, but an expired answer does
// not end the search.
TEST_F(MatchTest, AnExpiredHostEntryLeavesTheSourceToItsPrefix) {
  admit_all();
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.40.0/24"), RL_SRC_F_DENY, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.40.7/32"), RL_SRC_F_ALLOW, kT0 + 10 * kSec).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("2001:db8:40::/64"), RL_SRC_F_ALLOW, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("2001:db8:40::7/128"), RL_SRC_F_DENY, kT0 + 10 * kSec).ok());
  EXPECT_EQ(send(udp4("198.18.40.7")).reason, RL_REASON_RUNTIME_ALLOW);
  EXPECT_EQ(send(udp6("2001:db8:40::7")).reason, RL_REASON_RUNTIME_DENY);
  hooks().set_clock(kT0 + 11 * kSec);
  EXPECT_EQ(send(udp4("198.18.40.7")).reason, RL_REASON_RUNTIME_DENY) << "the /24's entry";
  EXPECT_EQ(send(udp6("2001:db8:40::7")).reason, RL_REASON_RUNTIME_ALLOW) << "the /64's entry";
  EXPECT_EQ(runtime_entries(), 4u) << "the expired ones stay until rld removes them";
}

// Inside a trie, an expired prefix leaves the source to the next shorter entry that covers it,
// past as many as RL_RUNTIME_EXPIRED_SKIPS expired ones, without waiting for rld to remove them.
TEST_F(MatchTest, AnExpiredPrefixLeavesTheSourceToAShorterOne) {
  admit_all();
  const uint64_t soon = kT0 + 10 * kSec;
  for (const auto& [cidr, flags, expires] :
       std::vector<std::tuple<const char*, uint32_t, uint64_t>>{
           {"198.18.0.0/16", RL_SRC_F_DENY, 0},
           {"198.18.41.0/24", RL_SRC_F_ALLOW, soon},
           {"198.18.41.0/26", RL_SRC_F_DENY, soon},
           {"198.18.41.0/28", RL_SRC_F_ALLOW, soon},
           {"2001:db8::/32", RL_SRC_F_ALLOW, 0},
           {"2001:db8:41::/48", RL_SRC_F_DENY, soon},
       })
    ASSERT_TRUE(dp_->runtime_acl_set(P(cidr), flags, expires).ok()) << cidr;
  EXPECT_EQ(send(udp4("198.18.41.5")).reason, RL_REASON_RUNTIME_ALLOW) << "the /28's entry";
  EXPECT_EQ(send(udp4("198.18.41.200")).reason, RL_REASON_RUNTIME_ALLOW) << "the /24's entry";
  EXPECT_EQ(send(udp6("2001:db8:41::5")).reason, RL_REASON_RUNTIME_DENY) << "the /48's entry";
  hooks().set_clock(soon + kSec);
  EXPECT_EQ(send(udp4("198.18.41.5")).reason, RL_REASON_RUNTIME_DENY) << "past three, the /16";
  EXPECT_EQ(send(udp4("198.18.41.200")).reason, RL_REASON_RUNTIME_DENY) << "past one, the /16";
  EXPECT_EQ(send(udp6("2001:db8:41::5")).reason, RL_REASON_RUNTIME_ALLOW) << "the /32's entry";
  EXPECT_EQ(runtime_entries(), 6u) << "the expired ones stay until rld removes them";
}

// Packets skip a runtime trie while its family's count is 0, and each change moves the count by
// one: a prefix set again (a new expiry) is not a second entry, and one removed twice is not two
// fewer, so the entries left stay in force.
TEST_F(MatchTest, RuntimeEntriesStayInForceThroughReplacesAndRepeatedRemoves) {
  admit_all();
  for (const char* cidr : {"198.18.1.0/24", "2001:db8:1::/48"}) {
    ASSERT_TRUE(dp_->runtime_acl_set(P(cidr), RL_SRC_F_DENY, 0).ok());
    ASSERT_TRUE(dp_->runtime_acl_set(P(cidr), RL_SRC_F_ALLOW, kT0 + 60 * kSec).ok());
  }
  for (const char* cidr : {"198.18.2.0/24", "2001:db8:2::/48"})
    ASSERT_TRUE(dp_->runtime_acl_set(P(cidr), RL_SRC_F_DENY, 0).ok());
  EXPECT_EQ(send(udp4("198.18.1.5")).reason, RL_REASON_RUNTIME_ALLOW) << "the later setting";
  EXPECT_EQ(send(udp6("2001:db8:1::5")).reason, RL_REASON_RUNTIME_ALLOW);
  for (const char* cidr : {"198.18.1.0/24", "2001:db8:1::/48"}) {
    ASSERT_TRUE(dp_->runtime_acl_remove(P(cidr)).ok());
    ASSERT_TRUE(dp_->runtime_acl_remove(P(cidr)).ok()) << "gone already: not an error";
  }
  EXPECT_EQ(send(udp4("198.18.2.5")).reason, RL_REASON_RUNTIME_DENY);
  EXPECT_EQ(send(udp6("2001:db8:2::5")).reason, RL_REASON_RUNTIME_DENY);
  EXPECT_EQ(send(udp4("198.18.1.5")).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(send(udp6("2001:db8:1::5")).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(runtime_entries(), 2u);
}

// Packets look in a runtime trie only when the runtime filter says an entry may cover their
// source (rl_runtime_filter_hit). An entry shorter than any before makes rld build the filter
// anew in its other half and switch; removing entries rebuilds it too. Entries stay in force
// through both, and sources no entry covers are never caught by a stale bit's trie lookup.
TEST_F(MatchTest, RuntimeEntriesHoldAsTheFilterIsRebuilt) {
  admit_all();
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.9.9/32"), RL_SRC_F_DENY, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("2001:db8:9::9/128"), RL_SRC_F_DENY, 0).ok());
  EXPECT_EQ(send(udp4("198.18.9.9")).reason, RL_REASON_RUNTIME_DENY);
  EXPECT_EQ(send(udp4("198.18.9.10")).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(send(udp6("2001:db8:9::9")).reason, RL_REASON_RUNTIME_DENY);
  // Shorter prefixes: a rebuild per family, into the other half.
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.19.0.0/16"), RL_SRC_F_ALLOW, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("2001:db8:5::/48"), RL_SRC_F_ALLOW, 0).ok());
  EXPECT_EQ(send(udp4("198.19.200.1")).reason, RL_REASON_RUNTIME_ALLOW);
  EXPECT_EQ(send(udp6("2001:db8:5:ffff::1")).reason, RL_REASON_RUNTIME_ALLOW);
  EXPECT_EQ(send(udp4("198.18.9.9")).reason, RL_REASON_RUNTIME_DENY) << "kept across the switch";
  EXPECT_EQ(send(udp6("2001:db8:9::9")).reason, RL_REASON_RUNTIME_DENY);
  // Removals: the short ones go, the filter is rebuilt for the /32 and /128 again.
  ASSERT_TRUE(dp_->runtime_acl_remove(P("198.19.0.0/16")).ok());
  ASSERT_TRUE(dp_->runtime_acl_remove(P("2001:db8:5::/48")).ok());
  EXPECT_EQ(send(udp4("198.19.200.1")).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(send(udp6("2001:db8:5:ffff::1")).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(send(udp4("198.18.9.9")).reason, RL_REASON_RUNTIME_DENY);
  EXPECT_EQ(send(udp6("2001:db8:9::9")).reason, RL_REASON_RUNTIME_DENY);
  // Many entries: every one applies.
  for (int i = 0; i < 300; i++)
    ASSERT_TRUE(
        dp_->runtime_acl_set(P("198.18.20." + std::to_string(i % 256) + "/32"), RL_SRC_F_DENY, 0)
            .ok());
  for (int i = 0; i < 256; i += 17)
    EXPECT_EQ(send(udp4("198.18.20." + std::to_string(i))).reason, RL_REASON_RUNTIME_DENY) << i;
}

// One of the program's maps by name, from the maps the program uses: the runtime tests look at
// where rld put an entry, and put one where an rld before the hosts' hash did.
UniqueFd program_map(int prog_fd, const char* name) {
  bpf_prog_info info{};
  uint32_t len = sizeof(info);
  std::array<uint32_t, 64> ids{};
  info.nr_map_ids = ids.size();
  info.map_ids = reinterpret_cast<uintptr_t>(ids.data());
  if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) != 0) return UniqueFd();
  for (uint32_t i = 0; i < info.nr_map_ids && i < ids.size(); i++) {
    UniqueFd fd(bpf_map_get_fd_by_id(ids[i]));
    bpf_map_info mi{};
    uint32_t mlen = sizeof(mi);
    if (fd && bpf_obj_get_info_by_fd(fd.get(), &mi, &mlen) == 0 && std::strcmp(mi.name, name) == 0)
      return fd;
  }
  return UniqueFd();
}

// The prefix lengths an IPv4 runtime map holds.
std::vector<uint32_t> prefix_lengths(int map_fd) {
  std::vector<uint32_t> out;
  rl_runtime_lpm4_key k{}, next{};
  const void* prev = nullptr;
  while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
    out.push_back(next.prefixlen);
    k = next;
    prev = &k;
  }
  return out;
}

// A host's entry (/32, /128) is the longest match: it goes to the host table, which packets ask
// first, and overrides its prefix's entry either way.
TEST_F(MatchTest, RuntimeHostEntriesAreTheLongestMatch) {
  admit_all();
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.30.0/24"), RL_SRC_F_ALLOW, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.30.7/32"), RL_SRC_F_DENY, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("2001:db8:30::/64"), RL_SRC_F_DENY, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("2001:db8:30::7/128"), RL_SRC_F_ALLOW, 0).ok());
  EXPECT_EQ(send(udp4("198.18.30.7")).reason, RL_REASON_RUNTIME_DENY);
  EXPECT_EQ(send(udp4("198.18.30.8")).reason, RL_REASON_RUNTIME_ALLOW);
  EXPECT_EQ(send(udp6("2001:db8:30::7")).reason, RL_REASON_RUNTIME_ALLOW);
  EXPECT_EQ(send(udp6("2001:db8:30::8")).reason, RL_REASON_RUNTIME_DENY);

  UniqueFd trie = program_map(dp_->prog_fd(), "rl_runtime_v4");
  UniqueFd hosts = program_map(dp_->prog_fd(), "rl_host_acl_v4");
  ASSERT_TRUE(trie && hosts);
  EXPECT_EQ(prefix_lengths(trie.get()), std::vector<uint32_t>{24});
  EXPECT_TRUE(prefix_lengths(hosts.get()).empty()) << "the host is in the table, not the hash";

  auto listed = dp_->runtime_acl_list();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 4u);

  // Removed, the hosts fall back to their prefixes' entries.
  ASSERT_TRUE(dp_->runtime_acl_remove(P("198.18.30.7/32")).ok());
  ASSERT_TRUE(dp_->runtime_acl_remove(P("2001:db8:30::7/128")).ok());
  EXPECT_EQ(send(udp4("198.18.30.7")).reason, RL_REASON_RUNTIME_ALLOW);
  EXPECT_EQ(send(udp6("2001:db8:30::7")).reason, RL_REASON_RUNTIME_DENY);
  EXPECT_TRUE(prefix_lengths(hosts.get()).empty());
}

// Pinned maps, as rld keeps them, so that a second load adopts the first one's entries.
class PinnedRuntimeTest : public MatchTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(prepare_pin_root(root_).ok());
    MatchTest::SetUp();
  }
  void options(LoadOptions& o) override {
    o.pin_root = root_;
    o.cluster_keys = RL_CLUSTER_KEYS;  // as rld sizes it, which an adopting load checks
  }
  // Loads the program again, adopting the pinned maps, as a restarted rld does.
  void reload() {
    LoadOptions o;
    o.key_capacity = 1 << 16;
    o.trace_decisions = true;
    options(o);
    auto second = BpfDatapath::load(o);
    ASSERT_TRUE(second.ok()) << second.error().str();
    dp_ = std::move(*second);
    ASSERT_TRUE(dp_->adopted());
  }
  void TearDown() override {
    dp_.reset();
    EXPECT_TRUE(remove_pins(root_).ok());
  }
  const std::string root_ = "/sys/fs/bpf/rl-bpf-test-" + std::to_string(getpid());
};

// Hosts in the hash (their set of the table had no way free) are pinned with it: a load finds
// them, and packets ask the hash for them until they move to the table. An expired prefix entry
// is looked past, whichever rld wrote it.
TEST_F(PinnedRuntimeTest, HashHostsAndExpiredEntriesHoldAcrossALoad) {
  admit_all();
  const uint64_t soon = kT0 + 10 * kSec;
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.0.0/16"), RL_SRC_F_DENY, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.42.0/24"), RL_SRC_F_ALLOW, soon).ok());
  UniqueFd trie = program_map(dp_->prog_fd(), "rl_runtime_v4");
  UniqueFd hosts = program_map(dp_->prog_fd(), "rl_host_acl_v4");
  UniqueFd control = program_map(dp_->prog_fd(), "rl_control");
  ASSERT_TRUE(trie && hosts && control);
  rl_runtime_lpm4_key k16{16, {198, 18, 0, 0}};
  rl_runtime_lpm4_key k7{32, {198, 18, 42, 7}}, k9{32, {198, 18, 42, 9}};
  rl_runtime_entry hashed{RL_SRC_F_ALLOW, 32, soon};
  ASSERT_EQ(bpf_map_update_elem(hosts.get(), &k7, &hashed, BPF_NOEXIST), 0);
  hashed = {RL_SRC_F_ALLOW, 32, 0};
  ASSERT_EQ(bpf_map_update_elem(hosts.get(), &k9, &hashed, BPF_NOEXIST), 0);
  uint32_t zero = 0;
  rl_control ctl{};
  ASSERT_EQ(bpf_map_lookup_elem(control.get(), &zero, &ctl), 0);
  ctl.runtime_acl_v4 += 2;  // the hash's two, as rld counts them
  ASSERT_EQ(bpf_map_update_elem(control.get(), &zero, &ctl, BPF_ANY), 0);

  ASSERT_NO_FATAL_FAILURE(reload());
  hooks().set_clock(soon + kSec);
  EXPECT_EQ(send(udp4("198.18.42.5")).reason, RL_REASON_RUNTIME_DENY) << "past the /24";
  EXPECT_EQ(send(udp4("198.18.42.7")).reason, RL_REASON_RUNTIME_DENY) << "past the hash's /32";
  EXPECT_EQ(send(udp4("198.18.42.9")).reason, RL_REASON_RUNTIME_ALLOW) << "the hash's /32";
  rl_runtime_entry e{};
  ASSERT_EQ(bpf_map_lookup_elem(trie.get(), &k16, &e), 0);
  EXPECT_EQ(e.prefixlen, 16u);
  ASSERT_EQ(bpf_map_lookup_elem(hosts.get(), &k7, &e), 0);
  EXPECT_EQ(e.prefixlen, 32u);
  auto found = dp_->runtime_acl_find(P("198.18.42.0/24"));
  ASSERT_TRUE(found.ok());
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->flags, RL_SRC_F_ALLOW);
  EXPECT_EQ((*found)->expires_ns, soon);
  found = dp_->runtime_acl_find(P("198.18.42.9/32"));
  ASSERT_TRUE(found.ok() && found->has_value()) << "found in the hash";

  // Set again, the hash's hosts move to the table; removed, they are gone from both.
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.42.9/32"), RL_SRC_F_ALLOW, 0).ok());
  EXPECT_EQ(prefix_lengths(hosts.get()), std::vector<uint32_t>{32}) << "198.18.42.7's is left";
  EXPECT_EQ(send(udp4("198.18.42.9")).reason, RL_REASON_RUNTIME_ALLOW) << "the table's /32";
  ASSERT_TRUE(dp_->runtime_acl_remove(P("198.18.42.7/32")).ok());
  EXPECT_TRUE(prefix_lengths(hosts.get()).empty());
  EXPECT_EQ(runtime_entries(), 3u) << "the /16, the /24 and 198.18.42.9";
}

// The source tries hold one entry per prefix for both generations, and a load that adopts them
// reads them back: the next rule set changes only what differs, and every packet is judged by
// the sets of the rule set in force, before the load and after it.
TEST_F(PinnedRuntimeTest, SourceTriesAreReadBackAndUpdatedInPlace) {
  auto rules = [](const char* small) {
    policy::Policy p;
    p.sets = {set("big", {"198.18.0.0/16"}), set("small", {small})};
    auto a = token_bucket("small-rule", 10, 10);
    a.match.sources = {"small"};
    auto b = token_bucket("big-rule", 10, 10);
    b.match.sources = {"big"};
    p.rules = {a, b};
    return p;
  };
  apply(rules("198.18.7.0/24"));
  EXPECT_EQ(send(udp4("198.18.7.1")).rule_pos, 0);
  EXPECT_EQ(send(udp4("198.18.8.1")).rule_pos, 1);
  UniqueFd trie = program_map(dp_->prog_fd(), "rl_src_v4");
  ASSERT_TRUE(trie);
  EXPECT_EQ(prefix_lengths(trie.get()), (std::vector<uint32_t>{24, 16, 0}))
      << "each prefix once, the /0 included";

  ASSERT_NO_FATAL_FAILURE(reload());
  hooks().set_clock(kT0);
  EXPECT_EQ(send(udp4("198.18.7.1")).rule_pos, 0) << "the adopted rule set";
  apply(rules("198.18.9.0/24"));
  EXPECT_EQ(send(udp4("198.18.7.1")).rule_pos, 1);
  EXPECT_EQ(send(udp4("198.18.9.1")).rule_pos, 0);
  EXPECT_EQ(send(udp4("203.0.113.1")).rule_pos, -1);
  trie = program_map(dp_->prog_fd(), "rl_src_v4");
  ASSERT_TRUE(trie);
  EXPECT_EQ(prefix_lengths(trie.get()), (std::vector<uint32_t>{24, 16, 0}))
      << "the old /24 went, the new one came";
}

// The host table is pinned with the hash seed that places its hosts: a load that adopts it finds
// every host in the set packets look in, as a restarted rld does.
TEST_F(PinnedRuntimeTest, TableHostsHoldAcrossALoad) {
  admit_all();
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.50.1/32"), RL_SRC_F_DENY, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("2001:db8:50::1/128"), RL_SRC_F_ALLOW, 0).ok());
  ASSERT_NO_FATAL_FAILURE(reload());
  hooks().set_clock(kT0);
  EXPECT_EQ(send(udp4("198.18.50.1")).reason, RL_REASON_RUNTIME_DENY);
  EXPECT_EQ(send(udp6("2001:db8:50::1")).reason, RL_REASON_RUNTIME_ALLOW);
  EXPECT_EQ(send(udp4("198.18.50.2")).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(runtime_entries(), 2u);
  ASSERT_TRUE(dp_->runtime_acl_remove(P("198.18.50.1/32")).ok());
  EXPECT_EQ(send(udp4("198.18.50.1")).reason, RL_REASON_ADMITTED);
  auto found = dp_->runtime_acl_find(P("2001:db8:50::1/128"));
  ASSERT_TRUE(found.ok() && found->has_value());
}

// A host whose set of the table has no way free goes to the hosts' hash, which packets then ask;
// once a way is free, setting it again moves it to the table, and packets stop asking the hash
// when it is empty.
TEST_F(MatchTest, AHostWhoseSetIsFullGoesToTheHash) {
  admit_all();
  UniqueFd control = program_map(dp_->prog_fd(), "rl_control");
  UniqueFd hash = program_map(dp_->prog_fd(), "rl_host_acl_v4");
  ASSERT_TRUE(control && hash);
  uint32_t zero = 0;
  rl_control ctl{};
  ASSERT_EQ(bpf_map_lookup_elem(control.get(), &zero, &ctl), 0);
  // RL_HOST_WAYS_V4 + 1 addresses of 198.18.0.0/15 in one set: 2^17 addresses over the sets
  // put about 4 in each, and over a third of the sets get 5 or more.
  std::map<uint32_t, std::vector<std::string>> by_set;
  std::vector<std::string> same_set;
  for (uint32_t i = 0; i < (1u << 17) && same_set.empty(); i++) {
    uint32_t host = (198u << 24 | 18u << 16) + i;
    uint32_t a[4] = {htonl(host), 0, 0, 0};
    auto& set = by_set[rl_host_set_index(a, 4, ctl.hash_seed)];
    set.push_back(std::to_string(host >> 24) + "." + std::to_string(host >> 16 & 255) + "." +
                  std::to_string(host >> 8 & 255) + "." + std::to_string(host & 255));
    if (set.size() == RL_HOST_WAYS_V4 + 1) same_set = set;
  }
  ASSERT_EQ(same_set.size(), RL_HOST_WAYS_V4 + 1u);
  for (const auto& h : same_set) ASSERT_TRUE(dp_->runtime_acl_set(P(h), RL_SRC_F_DENY, 0).ok());
  EXPECT_EQ(prefix_lengths(hash.get()), std::vector<uint32_t>{32}) << "one in the hash";
  for (const auto& h : same_set) EXPECT_EQ(send(udp4(h)).reason, RL_REASON_RUNTIME_DENY) << h;
  EXPECT_EQ(send(udp4("198.18.255.255")).reason, RL_REASON_ADMITTED);

  ASSERT_TRUE(dp_->runtime_acl_remove(P(same_set[0])).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P(same_set.back()), RL_SRC_F_ALLOW, 0).ok());
  EXPECT_TRUE(prefix_lengths(hash.get()).empty()) << "it moved to the freed way";
  EXPECT_EQ(send(udp4(same_set[0])).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(send(udp4(same_set.back())).reason, RL_REASON_RUNTIME_ALLOW);
  EXPECT_EQ(runtime_entries(), RL_HOST_WAYS_V4 + 0u);
  ASSERT_EQ(bpf_map_lookup_elem(control.get(), &zero, &ctl), 0);
  EXPECT_EQ(ctl.runtime_acl_v4, RL_HOST_WAYS_V4 + 0u) << "counted once each, wherever they were";
}

// rld finds an entry by its exact prefix, not the longest match that covers it.
TEST_F(MatchTest, RuntimeEntriesAreFoundByTheirExactPrefix) {
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.0.0/16"), RL_SRC_F_DENY, 0).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("198.18.43.7/32"), RL_SRC_F_ALLOW, kT0 + kSec).ok());
  ASSERT_TRUE(dp_->runtime_acl_set(P("2001:db8:43::/48"), RL_SRC_F_ALLOW, 0).ok());
  for (const char* cidr : {"198.18.0.0/16", "198.18.43.7/32", "2001:db8:43::/48"}) {
    auto found = dp_->runtime_acl_find(P(cidr));
    ASSERT_TRUE(found.ok()) << cidr;
    ASSERT_TRUE(found->has_value()) << cidr;
    EXPECT_EQ((*found)->prefix, P(cidr));
  }
  EXPECT_EQ((*dp_->runtime_acl_find(P("198.18.43.7/32")))->flags, RL_SRC_F_ALLOW);
  for (const char* cidr : {"198.18.43.0/24", "198.18.43.8/32", "198.0.0.0/8", "2001:db8:43::/64",
                           "2001:db8:43::1/128"}) {
    auto found = dp_->runtime_acl_find(P(cidr));
    ASSERT_TRUE(found.ok()) << cidr;
    EXPECT_FALSE(found->has_value()) << cidr << " is only covered by an entry";
  }
}

}  // namespace
}  // namespace rl::testing
