// SPDX-License-Identifier: GPL-2.0-only
// Command-line conventions against a real rld: global options after the subcommand, exit
// codes, refusals that change nothing, `rld --check-config` touching no kernel state, and a
// pin root on a bpffs private to `ip netns exec` said out loud.
#include <sys/stat.h>
#include <sys/vfs.h>

#include "policy_text.h"
#include "rld_fixture.h"

namespace rl::testing {
namespace {

const std::string kCliPolicy = udp9_policy("100/s", 10);

TEST_F(RldTest, RlctlTakesGlobalOptionsAfterTheSubcommandAndKeepsItsExitCodes) {
  write_policy("p.yaml", kCliPolicy);
  start_rld();
  // The example of `rlctl --help`: the options after the subcommand.
  auto stats = run({RL_RLCTL_PATH, "stats", "-o", "json", "--socket", socket_path()});
  ASSERT_TRUE(stats.ok()) << stats.describe();
  Json j = Json::parse(stats.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << stats.out;
  EXPECT_EQ(j["rules"][0]["name"], "udp9");

  auto no_such = run({RL_RLCTL_PATH, "detach", "NOSUCHIF", "-s", socket_path()});
  EXPECT_EQ(no_such.code, 1) << no_such.describe();
  EXPECT_NE(no_such.err.find("no interface named 'NOSUCHIF'"), std::string::npos) << no_such.err;
  auto not_ours = run({RL_RLCTL_PATH, "detach", "lo", "-s", socket_path()});
  EXPECT_EQ(not_ours.code, 1) << not_ours.describe();
  EXPECT_NE(not_ours.err.find("rl is not attached to lo"), std::string::npos) << not_ours.err;
  // Still attached and enforcing where it was.
  Json st = ctl({"status"});
  ASSERT_EQ(st["interfaces"].size(), 1u) << st.dump();
  EXPECT_EQ(st["interfaces"][0]["name"], lab_->pair().server.ifname);
  EXPECT_TRUE(st["pins_outlive_rld"].get<bool>()) << st.dump();

  EXPECT_EQ(run({RL_RLCTL_PATH, "stats", "--no-such-option"}).code, 2);
  EXPECT_EQ(run({RL_RLCTL_PATH, "stats", "-o", "yaml"}).code, 2);
  EXPECT_EQ(run({RL_RLCTL_PATH}).code, 2);
  EXPECT_EQ(run({RL_RLCTL_PATH, "status", "-s", (dir_ / "nobody.sock").string()}).code, 3);
  EXPECT_EQ(run({RL_RLD_PATH, "--no-such-option"}).code, 2);
  EXPECT_EQ(run({RL_RLD_PATH, "--key-capacity", "lots", "--check-config"}).code, 2);
  auto help = run({RL_RLCTL_PATH, "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("Exit status: 0 ok"), std::string::npos);
}

// A runtime entry's --ttl is whole seconds, a fraction rounded up; one under a second is refused
// and adds nothing, rather than going out as 0, which means an entry that never expires.
TEST_F(RldTest, RlctlTtlIsWholeSecondsAndNeverBecomesForever) {
  write_policy("p.yaml", kCliPolicy);
  start_rld();
  for (const char* ttl : {"500ms", "0s"}) {
    auto r = run({RL_RLCTL_PATH, "deny", "add", "198.18.6.7", "--ttl", ttl, "-s", socket_path()});
    EXPECT_EQ(r.code, 2) << r.describe();
    EXPECT_NE(r.err.find("is under a second"), std::string::npos) << r.err;
  }
  EXPECT_TRUE(ctl({"deny", "list"})["entries"].empty()) << "a refused --ttl adds nothing";
  EXPECT_EQ(ctl({"deny", "add", "198.18.6.7", "--ttl", "1500ms"})["ttl_seconds"], 2)
      << "1.5 s rounded up";
  Json listed = ctl({"deny", "list"})["entries"];
  ASSERT_EQ(listed.size(), 1u) << listed.dump();
  EXPECT_EQ(listed[0]["cidr"], "198.18.6.7/32");
  EXPECT_FALSE(listed[0]["expires_in_seconds"].is_null()) << "it expires";
}

TEST_F(RldTest, CheckConfigTouchesNoKernelState) {
  write_policy("p.yaml", kCliPolicy);
  std::string pins = "/sys/fs/bpf/rl-check-" + lab_->tag();
  std::vector<std::string> argv = {"nsenter",      "--net=/run/netns/" + lab_->server_ns(),
                                   RL_RLD_PATH,    "--check-config",
                                   "--interface",  lab_->pair().server.ifname,
                                   "--policy-dir", (dir_ / "policies").string(),
                                   "--pin-root",   pins,
                                   "--config",     (dir_ / "rld.yaml").string()};
  std::ofstream(dir_ / "rld.yaml") << "xdp_mode: generic\n";
  auto ok = run(argv);
  EXPECT_EQ(ok.code, 0) << ok.describe();
  EXPECT_NE(ok.out.find("  xdp_mode: generic\n"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("rule udp9"), std::string::npos) << ok.out;
  EXPECT_FALSE(std::filesystem::exists(pins));
  std::string mode = link_details(lab_->pair().server.ifname);
  EXPECT_EQ(mode.find("xdp"), std::string::npos) << mode;

  // Across files, as rld loads them: the same rule name twice is an error with its place.
  write_policy("q.yml", kCliPolicy);
  auto dup = run(argv);
  EXPECT_EQ(dup.code, 1) << dup.describe();
  EXPECT_NE(dup.err.find("q.yml:2:"), std::string::npos) << dup.err;
  std::filesystem::remove(dir_ / "policies" / "q.yml");
  std::ofstream(dir_ / "rld.yaml") << "xdp_mdoe: generic\n";
  auto typo = run(argv);
  EXPECT_EQ(typo.code, 1) << typo.describe();
  EXPECT_NE(typo.err.find("rld.yaml:1:1: error: unknown key 'xdp_mdoe' (did you mean 'xdp_mode'?)"),
            std::string::npos)
      << typo.err;
  // The same directory, checked by rlctl: every file, as rld loads it.
  auto v = run({RL_RLCTL_PATH, "policy", "validate", (dir_ / "policies").string()});
  EXPECT_EQ(v.code, 0) << v.describe();
  EXPECT_FALSE(std::filesystem::exists(pins));
}

// `ip netns exec` mounts a private /sys: /sys/fs/bpf there is not the host's, so rld mounts a
// bpffs of its own that dies with it. rld says so, rlctl status shows it, and rld --cleanup from
// another `ip netns exec` (another private bpffs) does not claim success while rl stays
// attached.
TEST_F(RldTest, APrivateBpffsUnderIpNetnsExecIsReported) {
  write_policy("p.yaml", kCliPolicy);
  std::vector<std::string> argv = rld_argv();
  ASSERT_EQ(argv[0], "nsenter");
  argv.erase(argv.begin(), argv.begin() + 2);
  argv.insert(argv.begin(), {"ip", "netns", "exec", lab_->server_ns()});
  auto p = Process::spawn(argv);
  ASSERT_TRUE(p.ok()) << p.error().str();
  rld_ = std::make_unique<Process>(std::move(*p));
  ASSERT_TRUE(rld_->wait_for("rld running", 10s)) << "rld did not start:\n" << rld_->err();
  EXPECT_NE(rld_->err().find("will not outlive rld"), std::string::npos) << rld_->err();

  Json st = ctl({"status"});
  EXPECT_FALSE(st["pins_outlive_rld"].get<bool>()) << st.dump();
  EXPECT_NE(st["pin_warning"].get<std::string>().find("ip netns exec"), std::string::npos);
  auto text = run({RL_RLCTL_PATH, "status", "-s", socket_path()});
  EXPECT_NE(text.out.find("WARNING: pins under " + pin_root_), std::string::npos) << text.out;
  // The host's bpffs holds nothing of this rld.
  EXPECT_FALSE(std::filesystem::exists(pin_root_));

  auto cleanup = run({"ip", "netns", "exec", lab_->server_ns(), RL_RLD_PATH, "--cleanup",
                      "--pin-root", pin_root_});
  EXPECT_EQ(cleanup.code, 1) << cleanup.describe();
  EXPECT_NE(cleanup.err.find("rl is still attached"), std::string::npos) << cleanup.err;
  EXPECT_NE(cleanup.err.find(lab_->pair().server.ifname), std::string::npos) << cleanup.err;

  // Its pins die with it: once rld is gone, so is the program.
  rld_->stop();
  rld_.reset();
  std::string link = link_details(lab_->pair().server.ifname);
  EXPECT_EQ(link.find("prog/xdp"), std::string::npos) << link;
}

// `rlctl key show` reads one key's slot from the pinned key table: a source that used its burst
// has no tokens left and is blocked, one never seen is not tracked.
TEST_F(RldTest, KeyShowReadsOneKeysState) {
  write_policy("p.yaml",
               "rules:\n"
               "  - name: udp9\n"
               "    match: {protocol: udp, port: 9}\n"
               "    limit: {rate: 1/min, burst: 5}\n"
               "    block: 10m\n");
  start_rld();
  auto sent = send({.src = "198.18.3.7", .count = 20, .rate = 2000});
  ASSERT_EQ(sent.sent, 20u);
  // The offender report reaches rld's table through the ring buffer: wait for it (bounded).
  Json k;
  for (int i = 0; i < 50; i++) {
    k = ctl({"key", "show", "198.18.3.7"});
    if (!k["rules"].empty() && k["rules"][0]["drops"].get<uint64_t>() > 0) break;
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_EQ(k["rules"].size(), 1u) << k.dump();
  const Json& r = k["rules"][0];
  EXPECT_EQ(r["rule"], "udp9");
  EXPECT_EQ(r["key"], "198.18.3.7");
  ASSERT_TRUE(r["tracked"].get<bool>()) << k.dump();
  EXPECT_TRUE(r["state"]["blocked"].get<bool>()) << k.dump();
  EXPECT_GT(r["state"]["blocked_for_seconds"].get<double>(), 500) << k.dump();
  EXPECT_EQ(r["state"]["tokens"].get<double>(), 0) << k.dump();
  EXPECT_EQ(r["state"]["burst"].get<double>(), 5) << k.dump();
  EXPECT_GT(r["drops"].get<uint64_t>(), 0u) << k.dump();
  EXPECT_FALSE(r["last_drop"].is_null());

  Json fresh = ctl({"key", "show", "198.18.3.8", "--rule", "udp9"});
  ASSERT_EQ(fresh["rules"].size(), 1u) << fresh.dump();
  EXPECT_FALSE(fresh["rules"][0]["tracked"].get<bool>()) << fresh.dump();
  EXPECT_EQ(fresh["rules"][0]["drops"], 0);

  auto text = run({RL_RLCTL_PATH, "key", "show", "198.18.3.7", "-s", socket_path()});
  ASSERT_TRUE(text.ok()) << text.describe();
  EXPECT_NE(text.out.find("0.0 of 5.0 packets left"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("yes, "), std::string::npos) << text.out;

  auto no_rule =
      run({RL_RLCTL_PATH, "key", "show", "198.18.3.7", "--rule", "nope", "-s", socket_path()});
  EXPECT_EQ(no_rule.code, 1) << no_rule.describe();
  auto bad = run({RL_RLCTL_PATH, "key", "show", "not-an-address", "-s", socket_path()});
  EXPECT_EQ(bad.code, 1) << bad.describe();
  auto traffic = run({RL_RLCTL_PATH, "top", "--by", "traffic", "-s", socket_path()});
  EXPECT_EQ(traffic.code, 1) << traffic.describe();
  EXPECT_NE(traffic.err.find("traffic sampling is off: set traffic_sample_shift"),
            std::string::npos)
      << traffic.err;
  Json top = ctl({"top", "--by", "drops"});
  ASSERT_EQ(top["offenders"].size(), 1u) << top.dump();
  EXPECT_EQ(top["offenders"][0]["key"], "198.18.3.7");
}

}  // namespace
}  // namespace rl::testing
