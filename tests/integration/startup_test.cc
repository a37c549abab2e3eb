// SPDX-License-Identifier: GPL-2.0-only
// rld's start-up hazards: a second rld on the same pin root, a pin root off bpffs, and a pinned
// link whose interface was deleted and created again.
#include <sys/statfs.h>

#include <linux/magic.h>

#include <bpf/bpf.h>

#include "common/fd.h"
#include "rld_fixture.h"

namespace rl::testing {
namespace {

constexpr char kPolicy[] =
    "rules:\n"
    "  - name: udp9\n"
    "    match: {protocol: udp, port: 9}\n"
    "    limit: {rate: 1/min, burst: 3}\n";

TEST_F(RldTest, ASecondRldOnThePinRootIsRefused) {
  write_policy("a.yaml", kPolicy);
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

  auto cleanup = run({"nsenter", "--net=/run/netns/" + lab_->server_ns(), RL_RLD_PATH, "--cleanup",
                      "--pin-root", pin_root_});
  EXPECT_NE(cleanup.code, 0) << "no cleanup from under a running rld";
  EXPECT_TRUE(std::filesystem::exists(pin_root_ + "/maps/rl_control"));
}

TEST_F(RldTest, APinRootOffBpffsIsRefusedAndNothingIsMounted) {
  write_policy("a.yaml", kPolicy);
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
  write_policy("a.yaml", kPolicy);
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
  write_policy("a.yaml", kPolicy);
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

}  // namespace
}  // namespace rl::testing
