// SPDX-License-Identifier: GPL-2.0-only
// An upgrade across data path layouts: the rld of this source (ABI RL_ABI_VERSION) runs with
// rules, runtime allow/deny entries and runtime overrides, then an rld built with
// RL_ABI_VERSION_BUMP=1 (another ABI, and an rl_control of another size) starts on the same pins,
// as a package of another layout would. Everything is checked on real packets through the veth.
#include <bpf/bpf.h>
#include <net/if.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/fd.h"
#include "common/prefix.h"
#include "policy_text.h"
#include "rl_abi.h"
#include "rl_hash.h"
#include "rld_fixture.h"

namespace rl::testing {
namespace {

struct Pinned {
  uint32_t abi = 0;
  uint32_t value_size = 0;
  uint64_t hash_seed = 0;
};

// rl_control as pinned, whatever its layout: the value is read whole, abi_version and hash_seed
// are at their places in every layout.
Pinned pinned_control(const std::string& pin_root) {
  UniqueFd fd(bpf_obj_get((pin_root + "/maps/rl_control").c_str()));
  EXPECT_TRUE(fd) << "rl_control is pinned under " << pin_root;
  if (!fd) return {};
  bpf_map_info info{};
  uint32_t len = sizeof(info);
  EXPECT_EQ(bpf_obj_get_info_by_fd(fd.get(), &info, &len), 0);
  std::vector<uint8_t> v(std::max<size_t>(info.value_size, sizeof(rl_control)));
  uint32_t zero = 0;
  EXPECT_EQ(bpf_map_lookup_elem(fd.get(), &zero, v.data()), 0);
  rl_control c{};
  std::memcpy(&c, v.data(), sizeof(c));
  return {c.abi_version, info.value_size, c.hash_seed};
}

// `n` IPv4 hosts of 198.19.0.0/16 in one set of the host table placed with `seed`: more than
// its ways, so that the last ones go to the hosts' hash (rl_host_acl_v4). 65,536 hosts over
// 32,768 sets put six in hundreds of sets.
std::vector<std::string> hosts_in_one_set(uint64_t seed, size_t n) {
  std::map<uint32_t, std::vector<std::string>> by_set;
  for (uint32_t i = 1; i < (1u << 16); i++) {
    std::string text = "198.19." + std::to_string(i >> 8) + "." + std::to_string(i & 255);
    auto a = Address::parse(text);
    EXPECT_TRUE(a.ok());
    uint32_t words[4]{};
    std::memcpy(words, a->bytes.data(), 4);
    auto& set = by_set[rl_host_set_index(words, 4, seed)];
    set.push_back(text);
    if (set.size() == n) return set;
  }
  ADD_FAILURE() << "no set of the host table holds " << n << " of the lab's hosts";
  return {};
}

class UpgradeTest : public RldTest {
 protected:
  // cidr -> (list, expires_in_seconds or -1)
  std::map<std::string, std::pair<std::string, int64_t>> runtime_entries() {
    std::map<std::string, std::pair<std::string, int64_t>> out;
    for (const char* list : {"allow", "deny"}) {
      const Json listed = ctl({list, "list"});  // alive through the loop
      for (const auto& e : listed["entries"])
        out[e["cidr"]] = {e["list"], e["expires_in_seconds"].is_null()
                                         ? -1
                                         : e["expires_in_seconds"].get<int64_t>()};
    }
    return out;
  }

  // The id of the XDP program on the server end, 0 for none.
  uint64_t attached_prog() {
    auto out =
        lab_->run(lab_->server_ns(), {"ip", "-j", "link", "show", lab_->pair().server.ifname});
    EXPECT_TRUE(out.ok()) << out.describe();
    Json j = Json::parse(out.out, nullptr, false);
    if (j.is_discarded() || j.empty() || !j[0].contains("xdp")) return 0;
    return j[0]["xdp"]["prog"].value("id", uint64_t{0});
  }

  std::set<std::string> pins() {
    std::set<std::string> out;
    for (const char* sub : {"maps", "links"})
      for (const auto& e : std::filesystem::directory_iterator(pin_root_ + "/" + sub))
        out.insert(std::string(sub) + "/" + e.path().filename().string());
    return out;
  }
};

TEST_F(UpgradeTest, RuntimeEntriesOutliveALayoutChange) {
  write_policy("a.yaml", udp9_policy("1/min", 1));
  start_rld();
  ASSERT_EQ(pinned_control(pin_root_).abi, static_cast<uint32_t>(RL_ABI_VERSION));
  // Prefixes and hosts of both families and lists, two with a TTL, and a set of the host table
  // overfull so that some hosts are in its hash.
  const std::vector<std::vector<std::string>> adds = {
      {"deny", "add", "198.18.20.0/24"},
      {"deny", "add", "198.18.21.7"},
      {"allow", "add", "198.18.22.7", "--ttl", "1h"},
      {"allow", "add", "198.18.23.0/24"},
      {"deny", "add", "2001:db8:20::/48", "--ttl", "2h"},
      {"allow", "add", "2001:db8:21::7"},
      {"deny", "add", "2001:db8:22::7"},
  };
  for (const auto& a : adds) ctl(a);
  const auto crowded = hosts_in_one_set(pinned_control(pin_root_).hash_seed, RL_HOST_WAYS_V4 + 2);
  ASSERT_EQ(crowded.size(), size_t{RL_HOST_WAYS_V4 + 2});
  for (const auto& h : crowded) ctl({"deny", "add", h});
  UniqueFd overflow(bpf_obj_get((pin_root_ + "/maps/rl_host_acl_v4").c_str()));
  ASSERT_TRUE(overflow);
  rl_runtime_lpm4_key none{};
  ASSERT_EQ(bpf_map_get_next_key(overflow.get(), nullptr, &none), 0)
      << "the crowded set's last hosts are in the hosts' hash";
  const auto before = runtime_entries();
  ASSERT_EQ(before.size(), adds.size() + crowded.size());
  // Runtime overrides of both families, one with a TTL: udp9's burst of 1 raised for them.
  ctl({"override", "add", "udp9", "198.18.40.0/24", "--rate", "1/min", "--burst", "6", "--ttl",
       "1h"});
  ctl({"override", "add", "udp9", "2001:db8:40::/48", "--rate", "1/min", "--burst", "3"});
  EXPECT_EQ(through("198.18.40.1"), 6u) << "the override, before the upgrade";
  const uint64_t old_prog = attached_prog();
  ASSERT_NE(old_prog, 0u);
  rld_->stop();

  rld_path_ = RL_RLD_BUMP_PATH;
  start_rld();
  EXPECT_NE(rld_->err().find("replaced a data path with another layout"), std::string::npos)
      << rld_->err();
  EXPECT_NE(rld_->err().find("runtime_entries_kept=" + std::to_string(before.size())),
            std::string::npos)
      << rld_->err();
  EXPECT_NE(rld_->err().find("overrides_kept=2"), std::string::npos) << rld_->err();
  const Pinned now = pinned_control(pin_root_);
  EXPECT_EQ(now.abi, static_cast<uint32_t>(RL_ABI_VERSION + 1)) << "the new layout is pinned";
  EXPECT_EQ(now.value_size, sizeof(rl_control) + 8) << "and its rl_control is larger";
  const uint64_t new_prog = attached_prog();
  EXPECT_NE(new_prog, 0u);
  EXPECT_NE(new_prog, old_prog) << "the interface runs the new program";

  // Every entry listed, in its list, the TTLs running on from where they were.
  const auto after = runtime_entries();
  ASSERT_EQ(after.size(), before.size());
  for (const auto& [cidr, e] : before) {
    ASSERT_TRUE(after.count(cidr)) << cidr;
    EXPECT_EQ(after.at(cidr).first, e.first) << cidr;
    if (e.second < 0) {
      EXPECT_EQ(after.at(cidr).second, -1) << cidr << " never expires";
    } else {
      EXPECT_LE(after.at(cidr).second, e.second) << cidr;
      EXPECT_GE(after.at(cidr).second, e.second - 30) << cidr << " keeps its expiry";
    }
  }

  // And enforced by the new program: udp9 admits one packet per source, the lists decide first.
  EXPECT_EQ(through("198.18.24.1"), 1u) << "the rule is in force";
  EXPECT_EQ(through("198.18.20.5"), 0u) << "denied prefix";
  EXPECT_EQ(through("198.18.21.7"), 0u) << "denied host";
  EXPECT_EQ(through("198.18.22.7"), 20u) << "allowed host (TTL): past the rule";
  EXPECT_EQ(through("198.18.23.9"), 20u) << "allowed prefix: past the rule";
  EXPECT_EQ(through("2001:db8:20::5"), 0u) << "denied IPv6 prefix (TTL)";
  EXPECT_EQ(through("2001:db8:22::7"), 0u) << "denied IPv6 host";
  EXPECT_EQ(through("2001:db8:21::7"), 20u) << "allowed IPv6 host: past the rule";
  EXPECT_EQ(through("2001:db8:23::1"), 1u) << "the rule is in force for IPv6";
  for (const auto& h : crowded) EXPECT_EQ(through(h), 0u) << "denied host " << h;

  // The overrides, compiled again against the policy the new layout applied, TTL running on.
  const Json overrides = ctl({"override", "list"});
  ASSERT_EQ(overrides["entries"].size(), 2u) << overrides.dump();
  for (const auto& e : overrides["entries"]) {
    EXPECT_EQ(e["rule"], "udp9");
    if (e["cidr"] == "198.18.40.0/24")
      EXPECT_GT(e["expires_in_seconds"].get<int64_t>(), 3500) << e.dump();
    else
      EXPECT_TRUE(e["expires_in_seconds"].is_null()) << e.dump();
  }
  EXPECT_EQ(through("198.18.40.2"), 6u) << "the override, after the upgrade";
  EXPECT_EQ(through("2001:db8:40::2"), 3u) << "the IPv6 override, after the upgrade";
}

TEST_F(UpgradeTest, ABrokenPolicyKeepsTheOldLayoutAttachedWithItsRules) {
  write_policy("a.yaml", udp9_policy("1/min", 3));
  start_rld();
  ctl({"deny", "add", "198.18.31.0/24"});
  const uint64_t old_prog = attached_prog();
  ASSERT_NE(old_prog, 0u);
  const auto old_pins = pins();
  rld_->stop();

  write_policy("a.yaml", udp9_policy("fast", 3));
  rld_path_ = RL_RLD_BUMP_PATH;
  auto p = Process::spawn(rld_argv());
  rld_path_ = RL_RLD_PATH;
  ASSERT_TRUE(p.ok()) << p.error().str();
  Output out = p->wait(30s);
  EXPECT_NE(out.code, 0) << "the start fails:\n" << out.err;
  EXPECT_FALSE(out.timed_out);
  EXPECT_NE(out.err.find("stays attached and enforcing with its own rules"), std::string::npos)
      << out.err;
  EXPECT_NE(out.err.find("a.yaml"), std::string::npos) << "the policy error is named\n" << out.err;

  EXPECT_EQ(attached_prog(), old_prog) << "the old program still runs";
  EXPECT_EQ(pins(), old_pins) << "its pins untouched";
  EXPECT_EQ(pinned_control(pin_root_).abi, static_cast<uint32_t>(RL_ABI_VERSION));
  EXPECT_EQ(through("198.18.30.1"), 3u) << "its rule still limits";
  EXPECT_EQ(through("198.18.31.9"), 0u) << "its runtime deny entry still drops";

  // The current build adopts the old data path as it was, and the rule set in force with it.
  start_rld();
  Json st = ctl({"status"});
  EXPECT_TRUE(st["adopted"].get<bool>());
  EXPECT_EQ(ctl({"deny", "list"})["entries"].size(), 1u);
}

}  // namespace
}  // namespace rl::testing
