// SPDX-License-Identifier: GPL-2.0-only
// Policies from a Kubernetes ConfigMap volume, as the kubelet writes one (its AtomicWriter):
// each key is a symlink to ..data/KEY, ..data a symlink to a hidden timestamped directory, and
// an update writes a new directory and swaps ..data with one rename. rld must see each swap as
// a change and load the files through the links.
#include <unistd.h>

#include <map>
#include <set>

#include "rld_fixture.h"

namespace rl::testing {
namespace {

namespace fs = std::filesystem;

class ConfigMapTest : public RldTest {
 protected:
  // One update of the volume, in the kubelet's order.
  void publish(const std::map<std::string, std::string>& data) {
    fs::path dir = dir_ / "policies";
    std::string version = "..2025_01_01_00_00_00." + std::to_string(++version_);
    fs::create_directory(dir / version);
    for (const auto& [key, text] : data) std::ofstream(dir / version / key) << text;
    fs::path old;
    if (fs::is_symlink(dir / "..data")) old = dir / fs::read_symlink(dir / "..data");
    fs::create_symlink(version, dir / "..data_tmp");
    fs::rename(dir / "..data_tmp", dir / "..data");
    for (const auto& [key, text] : data)
      if (!fs::is_symlink(dir / key)) fs::create_symlink(fs::path("..data") / key, dir / key);
    for (const auto& e : fs::directory_iterator(dir)) {
      std::string name = e.path().filename();
      if (name[0] != '.' && !data.count(name)) fs::remove(e.path());
    }
    if (!old.empty()) fs::remove_all(old);
  }

  std::set<std::string> rules_in_force() {
    std::set<std::string> names;
    Json list = ctl({"policy", "list"});
    for (const auto& r : list["rules"]) names.insert(r["name"].get<std::string>());
    return names;
  }

  int version_ = 0;
};

std::string rule(const std::string& name, int port) {
  return "rules:\n  - name: " + name +
         "\n    match: {protocol: udp, port: " + std::to_string(port) +
         "}\n    limit: {rate: 1/min, burst: 2}\n";
}

TEST_F(ConfigMapTest, ReloadsEachUpdateOfTheVolume) {
  publish({{"a.yaml", rule("first", 9)}});
  start_rld();
  EXPECT_EQ(rules_in_force(), std::set<std::string>{"first"});
  EXPECT_EQ(received({.src = "198.18.1.1", .count = 20, .rate = 1000}), 2u);

  // A key changes and one is added.
  uint64_t gen = ctl({"status"})["generation"];
  publish({{"a.yaml", rule("second", 9)}, {"b.yaml", rule("third", 10)}});
  wait_reload(gen);
  EXPECT_EQ(rules_in_force(), (std::set<std::string>{"second", "third"}));

  // An invalid update changes nothing; the next valid one applies.
  gen = ctl({"status"})["generation"];
  publish({{"a.yaml", "rules:\n  - name: broken\n"}, {"b.yaml", rule("third", 10)}});
  wait_reload(gen, /*ok=*/false);
  EXPECT_EQ(rules_in_force(), (std::set<std::string>{"second", "third"}));
  publish({{"b.yaml", rule("third", 10)}});
  wait_reload(gen);
  EXPECT_EQ(rules_in_force(), std::set<std::string>{"third"});
  EXPECT_EQ(received({.src = "198.18.1.2", .dport = 10, .count = 20, .rate = 1000}), 2u);
}

}  // namespace
}  // namespace rl::testing
