// SPDX-License-Identifier: GPL-2.0-only
// rld's start-up hazards: a second rld on the same pin root, a pin root off bpffs, a pinned
// link whose interface was deleted and created again, and a policy that does not load (a first
// start fails and leaves no pin directories; a start that adopts a pinned rule set runs
// degraded), with /readyz and rlctl status telling which.
#include <sys/statfs.h>

#include <linux/magic.h>

#include <bpf/bpf.h>

#include <regex>

#include "common/cli_exit.h"
#include "common/fd.h"
#include "policy_text.h"
#include "rld_fixture.h"

namespace rl::testing {
namespace {

const std::string kStartupPolicy = udp9_policy("1/min", 3);

TEST_F(RldTest, ASecondRldOnThePinRootIsRefused) {
  write_policy("a.yaml", kStartupPolicy);
  start_rld();
  uint64_t gen = ctl({"status"})["generation"];

  auto second = run(rld_argv(), 10s);
  EXPECT_NE(second.code, 0) << second.describe();
  EXPECT_FALSE(second.timed_out);
  EXPECT_NE(second.err.find("another rld (pid " + std::to_string(rld_->pid()) + ")"),
            std::string::npos)
      << second.err;

  // The first one still owns the control socket and the data path.
  Json st = ctl({"status"});
  EXPECT_EQ(st["generation"].get<uint64_t>(), gen);
  EXPECT_TRUE(rld_->running());
  EXPECT_EQ(received({.src = "198.18.12.1", .count = 20, .rate = 2000}), 3u);
  // rld --cleanup is not refused the same way: it stops the running rld first (CleanupTest).
}

TEST_F(RldTest, APinRootOffBpffsIsRefusedAndNothingIsMounted) {
  write_policy("a.yaml", kStartupPolicy);
  auto plain = dir_ / "plain";
  std::filesystem::create_directories(plain / "keep");
  std::ofstream(plain / "keep" / "file") << "still here\n";

  auto argv = rld_argv();
  auto at = std::find(argv.begin(), argv.end(), "--pin-root");
  ASSERT_NE(at, argv.end());
  *(at + 1) = (plain / "pins").string();
  auto out = run(argv, 10s);
  EXPECT_NE(out.code, 0) << out.describe();
  EXPECT_NE(out.err.find("is not on a bpf filesystem"), std::string::npos) << out.err;

  struct statfs st {};
  ASSERT_EQ(::statfs(plain.c_str(), &st), 0);
  EXPECT_NE(st.f_type, static_cast<decltype(st.f_type)>(BPF_FS_MAGIC)) << "bpffs was mounted";
  EXPECT_TRUE(std::filesystem::exists(plain / "keep" / "file")) << "the directory was hidden";
  std::ifstream mounts("/proc/self/mountinfo");
  std::string line;
  while (std::getline(mounts, line))
    EXPECT_EQ(line.find(" " + dir_.string()), std::string::npos) << "mounted: " << line;
  EXPECT_FALSE(std::filesystem::exists(plain / "pins"));
}

// rld pinned a link on the interface; the interface is deleted (the link is severed but keeps
// its pin) and created again under the same name. A restarted rld drops the dead link, says so,
// and attaches afresh.
TEST_F(RldTest, ARecreatedInterfaceGetsAFreshLink) {
  write_policy("a.yaml", kStartupPolicy);
  start_rld();
  EXPECT_EQ(received({.src = "198.18.13.1", .count = 20, .rate = 2000}), 3u);
  auto stopped = rld_->stop(SIGTERM, 5s);
  ASSERT_TRUE(stopped.ok()) << stopped.describe();

  ASSERT_TRUE(lab_->recreate_pair().ok());
  auto shown = lab_->run(lab_->server_ns(), {"ip", "link", "show", lab_->pair().server.ifname});
  EXPECT_EQ(shown.out.find("xdp"), std::string::npos) << "a new interface has no program";
  ASSERT_TRUE(std::filesystem::exists(pin_root_ + "/links/" + lab_->pair().server.ifname));

  start_rld();
  EXPECT_NE(rld_->err().find("dropped the stale pinned link"), std::string::npos) << rld_->err();
  Json st = ctl({"status"});
  ASSERT_EQ(st["interfaces"].size(), 1u);
  EXPECT_NE(st["interfaces"][0]["mode"], "none");
  EXPECT_EQ(received({.src = "198.18.13.2", .count = 20, .rate = 2000}), 3u)
      << "the new link enforces the policy";
}

// A pinned map of another shape under the same ABI (a build that changed a map without a new
// ABI number, or a half-written pin root): libbpf cannot reuse it, so rld replaces the pinned
// data path as it does across ABIs, rather than refusing to start.
TEST_F(RldTest, APinnedMapOfAnotherShapeIsReplaced) {
  write_policy("a.yaml", kStartupPolicy);
  start_rld();
  ASSERT_TRUE(rld_->stop(SIGTERM, 5s).ok());
  std::string pin = pin_root_ + "/maps/rl_offenders";
  ASSERT_EQ(::unlink(pin.c_str()), 0);
  UniqueFd other(bpf_map_create(BPF_MAP_TYPE_ARRAY, "rl_offenders", 4, 8, 16, nullptr));
  ASSERT_TRUE(other);
  ASSERT_EQ(bpf_obj_pin(other.get(), pin.c_str()), 0);

  start_rld();
  EXPECT_NE(rld_->err().find("replaced a data path with another layout"), std::string::npos)
      << rld_->err();
  Json st = ctl({"status"});
  ASSERT_EQ(st["interfaces"].size(), 1u);
  EXPECT_NE(st["interfaces"][0]["mode"], "none");
  EXPECT_EQ(received({.src = "198.18.14.1", .count = 20, .rate = 2000}), 3u);
}

constexpr char kTypo[] =
    "rules:\n"
    "  - name: typo\n"
    "    limit: {rate: 10/s, burts: 3}\n";

// Nothing pinned, a policy that does not load: no rule would be enforced, so rld does not start.
// It says where the mistake is, attaches nothing and leaves no pinned maps a next start would
// adopt as if they were a policy.
TEST_F(RldTest, AFirstStartWithAnInvalidPolicyFailsAndNamesTheMistake) {
  write_policy("a.yaml", kStartupPolicy);
  write_policy("b.yaml", kTypo);
  auto out = run(rld_argv(), 30s);
  EXPECT_FALSE(out.timed_out) << out.describe();
  EXPECT_EQ(out.code, kExitNotConfigured) << out.describe();
  EXPECT_NE(out.err.find("rld failed to start"), std::string::npos) << out.err;
  EXPECT_TRUE(std::regex_search(out.err, std::regex("rld failed to start.*b\\.yaml:3:\\d+: error")))
      << "the error names file:line:column:\n"
      << out.err;
  EXPECT_EQ(out.err.find("rld running"), std::string::npos) << out.err;
  auto link = lab_->run(lab_->server_ns(), {"ip", "link", "show", lab_->pair().server.ifname});
  EXPECT_EQ(link.out.find("xdp"), std::string::npos) << "nothing attached:\n" << link.out;
  EXPECT_FALSE(std::filesystem::exists(pin_root_ + "/maps/rl_control")) << "no maps left pinned";

  // Fixed, it starts afresh and enforces the policy.
  std::filesystem::remove(dir_ / "policies" / "b.yaml");
  start_rld();
  Json st = ctl({"status"});
  EXPECT_FALSE(st["adopted"].get<bool>());
  EXPECT_TRUE(st["ready"].get<bool>()) << st.dump();
  EXPECT_EQ(received({.src = "198.18.15.1", .count = 20, .rate = 2000}), 3u);
}

// Cluster settings that cannot work are the operator's to mend, as a bad policy is: rld exits 6
// (which the unit does not restart), names the setting, and leaves nothing attached or pinned.
TEST_F(RldTest, UnusableClusterSettingsExitSixWithNothingAttached) {
  write_policy("a.yaml", kStartupPolicy);
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--redis-host", "127.0.0.1", "--redis-tls", "--redis-tls-ca-file",
        (dir_ / "no-such-ca.pem").string()},
       "no-such-ca.pem"},
      {{"--redis-host", "127.0.0.1", "--redis-user", "alice"}, "password"},
      {{"--redis-sentinel", "127.0.0.1:26379"}, "master"},
  };
  for (const auto& [flags, named] : cases) {
    rld_extra_args_ = flags;
    auto out = run(rld_argv(), 30s);
    EXPECT_EQ(out.code, kExitNotConfigured) << out.describe();
    EXPECT_NE(out.err.find(named), std::string::npos) << out.err;
    EXPECT_EQ(out.err.find("rld running"), std::string::npos) << out.err;
    auto link = lab_->run(lab_->server_ns(), {"ip", "link", "show", lab_->pair().server.ifname});
    EXPECT_EQ(link.out.find("xdp"), std::string::npos) << "nothing attached:\n" << link.out;
    EXPECT_FALSE(std::filesystem::exists(pin_root_ + "/maps/rl_control")) << out.err;
  }
}

// A first start that fails once the pin root is made (here on its policy) takes away the
// directories it made: the pin root itself when it was not there, its maps/ and links/ when it
// was. A root made beforehand, by an operator or a volume, stays as it was.
TEST_F(RldTest, AFailedFirstStartLeavesNoPinDirectoriesBehind) {
  namespace fs = std::filesystem;
  write_policy("b.yaml", kTypo);
  ASSERT_FALSE(fs::exists(pin_root_));
  auto out = run(rld_argv(), 30s);
  EXPECT_EQ(out.code, kExitNotConfigured) << out.describe();
  EXPECT_FALSE(fs::exists(pin_root_)) << "the pin root rld made is left behind";

  ASSERT_TRUE(fs::create_directory(pin_root_));
  out = run(rld_argv(), 30s);
  EXPECT_EQ(out.code, kExitNotConfigured) << out.describe();
  ASSERT_TRUE(fs::is_directory(pin_root_)) << "the pin root rld found is removed";
  std::string left;
  for (const auto& e : fs::recursive_directory_iterator(pin_root_)) left += e.path().string() + " ";
  EXPECT_EQ(left, "") << "what the failed start made is left behind";
}

// A directory without policy files (as installed) is an explicit empty rule set: rld starts,
// says so, and is ready.
TEST_F(RldTest, AnEmptyPolicyDirectoryStartsReadyWithNoRules) {
  start_rld();
  EXPECT_NE(rld_->err().find("no policy files"), std::string::npos) << rld_->err();
  Json st = ctl({"status"});
  EXPECT_TRUE(st["ready"].get<bool>()) << st.dump();
  EXPECT_EQ(st["rules"].get<uint64_t>(), 0u);
  EXPECT_TRUE(st["last_reload"]["ok"].get<bool>()) << st.dump();
  auto [code, body] = http("/readyz");
  EXPECT_EQ(code, 200) << body;
  EXPECT_NE(body.find("holds no policy files"), std::string::npos) << body;
}

// /readyz: 200 with what is enforced; 503 with the reason while the last load failed (the policy
// before it is enforced); 200 again once a valid policy is in force. /healthz stays 200.
TEST_F(RldTest, ReadyzFollowsWhetherTheConfiguredPolicyIsEnforced) {
  write_policy("a.yaml", kStartupPolicy);
  start_rld();
  auto [code, body] = http("/readyz");
  EXPECT_EQ(code, 200) << body;
  EXPECT_EQ(body.rfind("ready\nenforcing 1 rules (generation 1) on 1 interfaces: " +
                           lab_->pair().server.ifname,
                       0),
            0u)
      << body;

  uint64_t gen = ctl({"status"})["generation"];
  write_policy("b.yaml", kTypo);
  wait_reload(gen, /*ok=*/false);
  std::tie(code, body) = http("/readyz");
  EXPECT_EQ(code, 503) << body;
  EXPECT_NE(body.find("the last policy load failed"), std::string::npos) << body;
  EXPECT_NE(body.find("b.yaml:3:"), std::string::npos) << body;
  std::tie(code, body) = http("/healthz");
  EXPECT_EQ(code, 200) << "alive all the same: " << body;
  EXPECT_FALSE(ctl({"status"})["ready"].get<bool>());

  std::filesystem::remove(dir_ / "policies" / "b.yaml");
  wait_reload(gen);
  std::tie(code, body) = http("/readyz");
  EXPECT_EQ(code, 200) << body;
}

// A restart that adopts the pinned rule set while the policy does not load keeps enforcing that
// rule set, and says it is degraded: in rlctl status (exit status 4, the rules named as the pins'
// rather than the policy directory's), the log and /readyz. A valid policy ends it.
TEST_F(RldTest, AnAdoptedRuleSetWithAnInvalidPolicyRunsDegraded) {
  write_policy("a.yaml", kStartupPolicy);
  start_rld();
  EXPECT_EQ(received({.src = "198.18.16.1", .count = 20, .rate = 2000}), 3u);
  rld_->signal(SIGKILL);
  rld_->wait(5s);
  write_policy("b.yaml", kTypo);

  start_rld();
  EXPECT_NE(rld_->err().find("degraded"), std::string::npos) << rld_->err();
  Json st = ctl({"status"});
  EXPECT_TRUE(st["adopted"].get<bool>());
  EXPECT_TRUE(st["degraded"].get<bool>()) << st.dump();
  EXPECT_FALSE(st["ready"].get<bool>());
  EXPECT_EQ(st["rules"].get<uint64_t>(), 1u);
  auto text = run({RL_RLCTL_PATH, "-s", socket_path(), "status"});
  EXPECT_EQ(text.code, kExitNotReady) << text.describe();
  EXPECT_NE(text.out.find("NOT READY: degraded:"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("1 rules adopted from the pins in " + pin_root_ + " (the policy in " +
                          (dir_ / "policies").string() + " did not load)"),
            std::string::npos)
      << "the rules come from the pins, not the policy directory:\n"
      << text.out;
  auto [code, body] = http("/readyz");
  EXPECT_EQ(code, 503) << body;
  EXPECT_NE(body.find("degraded: the policy in " + (dir_ / "policies").string() + " did not load"),
            std::string::npos)
      << body;
  EXPECT_NE(body.find("b.yaml:3:"), std::string::npos) << body;
  EXPECT_EQ(http("/healthz").first, 200);
  EXPECT_EQ(received({.src = "198.18.16.1", .count = 20, .rate = 2000}), 0u)
      << "the adopted rule and its key's state still enforce";

  uint64_t gen = st["generation"];
  std::filesystem::remove(dir_ / "policies" / "b.yaml");
  wait_reload(gen);
  st = ctl({"status"});
  EXPECT_FALSE(st["degraded"].get<bool>()) << st.dump();
  EXPECT_TRUE(st["ready"].get<bool>()) << st.dump();
  EXPECT_EQ(http("/readyz").first, 200);
  text = run({RL_RLCTL_PATH, "-s", socket_path(), "status"});
  EXPECT_EQ(text.code, kExitOk) << text.describe();
  EXPECT_NE(text.out.find("1 rules from " + (dir_ / "policies").string() + "\n"), std::string::npos)
      << text.out;
}

}  // namespace
}  // namespace rl::testing
