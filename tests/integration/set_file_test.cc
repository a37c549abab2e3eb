// SPDX-License-Identifier: GPL-2.0-only
// Source sets read from a file of a million prefixes per family, on a real rld with real packets:
// the file loads and is enforced, and a changed line takes effect within 2 s while traffic runs
// through the update, sources whose fate did not change keeping it for every packet.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>

#include "rld_fixture.h"

namespace rl::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr size_t kPerFamily = 1'000'000;

// kPerFamily - 1 prefixes of each family spread as a blocklist's are (IPv4 /24s over the unicast
// space, IPv6 /48s over 2400::/12), none of them the lab's, then `extra` lines.
std::string big_set(const std::string& extra) {
  std::string text;
  text.reserve(40 * kPerFamily);
  char line[64];
  size_t n = 0;
  for (uint64_t v = 1u << 16; n < kPerFamily - 1; v += 13) {
    uint32_t a = static_cast<uint32_t>((v << 8) & 0xffffffffu);
    if ((a >> 17) == (0xc612u >> 1)) continue;  // 198.18.0.0/15: the lab's sources
    std::snprintf(line, sizeof(line), "%u.%u.%u.0/24\n", a >> 24, (a >> 16) & 255, (a >> 8) & 255);
    text += line;
    n++;
  }
  for (uint64_t k = 0; k < kPerFamily - 1; k++) {
    uint64_t hi = 0x240000000000ULL + k * 4099;
    std::snprintf(line, sizeof(line), "%x:%x:%x::/48 # feed entry\n",
                  static_cast<unsigned>((hi >> 32) & 0xffff),
                  static_cast<unsigned>((hi >> 16) & 0xffff), static_cast<unsigned>(hi & 0xffff));
    text += line;
  }
  return text + extra;
}

class SetFileTest : public RldTest {
 protected:
  void SetUp() override {
    RldTest::SetUp();
    fs::create_directories(dir_ / "sets");
    publish(big_set("198.18.0.0/24\n2001:db8:1::/48\n"));
    write_policy("feed.yaml", "sets:\n  feed: {file: " + set_path() +
                                  "}\nrules:\n  - name: feed\n    match: {sources: [feed]}\n"
                                  "    limit: {rate: 1/min, burst: 2}\n");
  }

  std::string set_path() const { return (dir_ / "sets" / "feed.txt").string(); }

  // As a feed writes it: a hidden file, renamed over the set file.
  void publish(const std::string& text) {
    fs::path part = dir_ / "sets" / ".feed.txt.part";
    std::ofstream(part) << text;
    fs::rename(part, set_path());
  }

  Json feed_set() {
    Json s = ctl({"status"});
    for (const auto& set : s.value("sets", Json::array()))
      if (set["name"] == "feed") return set;
    ADD_FAILURE() << "no set feed in " << s.dump();
    return Json::object();
  }

  // rld's peak resident size, from its own status.
  uint64_t rld_peak_kib() {
    std::ifstream in("/proc/" + std::to_string(rld_->pid()) + "/status");
    for (std::string line; std::getline(in, line);)
      if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6));
    return 0;
  }

  // The kernel's slab memory, in KiB (/proc/meminfo): trie nodes are slab objects.
  static uint64_t slab_kib() {
    std::ifstream in("/proc/meminfo");
    for (std::string line; std::getline(in, line);)
      if (line.rfind("Slab:", 0) == 0) return std::stoull(line.substr(5));
    return 0;
  }

  // The kernel's accounting of a pinned map's memory (bpftool's bytes_memlock).
  uint64_t map_bytes(const std::string& name) {
    auto out = run({"bpftool", "-j", "map", "show", "pinned", pin_root_ + "/maps/" + name});
    Json j = Json::parse(out.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << out.describe();
    return j.is_discarded() ? 0 : j.value("bytes_memlock", uint64_t{0});
  }
};

// A set file of a million IPv4 and a million IPv6 prefixes loads and is enforced: sources inside
// it are limited, sources outside it are not, in both families.
TEST_F(SetFileTest, AMillionPrefixesPerFamilyLoadAndAreEnforced) {
  const uint64_t slab_before = slab_kib();
  auto t = Clock::now();
  ASSERT_NO_FATAL_FAILURE(start_rld(60s));
  double load_s = std::chrono::duration<double>(Clock::now() - t).count();
  const double slab_mib = (static_cast<double>(slab_kib()) - slab_before) / 1024.0;
  Json set = feed_set();
  EXPECT_EQ(set.value("prefixes", 0), 2 * kPerFamily);
  EXPECT_EQ(set.value("source", ""), set_path());
  std::printf(
      "start with the set: %.2f s; rld peak RSS %.0f MiB; rl_src_v4 %.1f MiB and "
      "rl_src_v6 %.1f MiB by the kernel's account; slab grew %.0f MiB\n",
      load_s, rld_peak_kib() / 1024.0, map_bytes("rl_src_v4") / 1048576.0,
      map_bytes("rl_src_v6") / 1048576.0, slab_mib);

  EXPECT_EQ(through("198.18.0.9"), 2u) << "inside the set: its burst only";
  EXPECT_EQ(through("198.18.1.9"), 20u) << "outside the set: not limited";
  EXPECT_EQ(through("2001:db8:1::9"), 2u);
  EXPECT_EQ(through("2001:db8:2::9"), 20u);
  std::string m = metrics();
  EXPECT_EQ(sample(m, "rl_set_prefixes{set=\"feed\"}"), 2.0 * kPerFamily);
}

// Under a flood, one line added to the set file takes effect within 2 s, and the sources whose
// fate the update does not change keep it for every packet: the flooding source, listed, is held
// to its burst throughout; an unlisted one loses nothing. Reloading the unchanged file leaves the
// set's time of update.
TEST_F(SetFileTest, AChangedLineTakesEffectWithinTwoSecondsUnderAFlood) {
  ASSERT_NO_FATAL_FAILURE(start_rld(60s));
  const int64_t first_update = feed_set().value("updated", int64_t{0});
  // The flood stays under 10,000 packets a second: rlsend spins between faster slots, and a
  // spinning sender would take one of the machine's CPUs from the rld under test.
  constexpr uint64_t kRate = 2000, kFlood = 8000;
  constexpr double kSeconds = 6;
  auto sink = start_sink(*lab_, 0, {.port = 9, .seconds = 20, .idle_ms = 1500});
  ASSERT_TRUE(sink.ok()) << sink.error().str();
  auto flow = [&](const std::string& src, uint32_t sources, uint64_t rate) {
    SendSpec spec{.src = src,
                  .sources = sources,
                  .count = static_cast<uint64_t>(rate * kSeconds),
                  .rate = rate,
                  .max_seconds = kSeconds + 5};
    auto p = lab_->spawn_in(lab_->client_ns(), rlsend_argv(lab_->pair(), spec));
    EXPECT_TRUE(p.ok()) << p.error().str();
    return p;
  };
  auto listed = flow("198.18.0.7", 1, kFlood);        // the flood: in the set before and after
  auto unlisted = flow("198.18.2.0/24", 200, kRate);  // in it neither before nor after
  auto added = flow("198.18.1.7", 1, kRate);          // added by the update
  const auto started = Clock::now();
  std::this_thread::sleep_for(1500ms);
  const auto changed = Clock::now();
  publish(big_set("198.18.0.0/24\n2001:db8:1::/48\n198.18.1.0/24\n"));
  for (auto* p : {&listed, &unlisted, &added}) {
    ASSERT_TRUE(p->ok());
    auto done = (*p)->wait(20s);
    EXPECT_EQ(done.code, 0) << done.describe();
  }
  auto got = finish_sink(*sink, 20s);
  ASSERT_TRUE(got.ok()) << got.error().str();

  uint64_t unlisted_got = 0;
  for (const auto& [src, n] : got->sources)
    if (src.rfind("198.18.2.", 0) == 0) unlisted_got += n;
  const uint64_t sent = static_cast<uint64_t>(kRate * kSeconds);
  EXPECT_EQ(unlisted_got, sent) << "an unlisted source lost packets during the update";
  EXPECT_EQ(got->sources["198.18.0.7"], 2u) << "the flood got past the set during the update";
  // The added source passed until the update took effect, then got its burst of 2: the paced
  // sender puts its packets on a clock from the flows' start.
  const uint64_t before = got->sources["198.18.1.7"] - 2;
  const double effect_s = static_cast<double>(before) / kRate -
                          std::chrono::duration<double>(changed - started).count();
  std::printf(
      "the added line took effect %.3f s after the file's rename (%lu packets passed "
      "before it)\n",
      effect_s, static_cast<unsigned long>(before));
  EXPECT_LT(effect_s, 2.0);
  EXPECT_GT(before, 0u);
  EXPECT_LT(before, sent);

  Json set = feed_set();
  EXPECT_EQ(set.value("prefixes", 0), 2 * kPerFamily + 1);
  EXPECT_GE(set.value("updated", int64_t{0}), first_update);
  const uint64_t gen = ctl({"status"})["generation"];
  ASSERT_NO_FATAL_FAILURE(ctl({"policy", "reload"}));
  wait_reload(gen);
  EXPECT_EQ(feed_set().value("updated", int64_t{0}), set.value("updated", int64_t{0}))
      << "a reload that leaves the set as it was does not move its time";
}

}  // namespace
}  // namespace rl::testing
