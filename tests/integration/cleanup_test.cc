// SPDX-License-Identifier: GPL-2.0-only
// rld --cleanup takes rl off the host whatever the configuration holds and whether or not an rld
// still runs: no XDP program on the lab's interfaces, no pin, no nftables table, the conntrack
// sysctl as it was. rld runs with a SYN-cookie rule, so that there is a table and a sysctl to
// restore.
#include <filesystem>
#include <fstream>

#include "rld_fixture.h"

namespace rl::testing {
namespace {

constexpr char kCookies[] =
    "rules:\n"
    "  - name: web\n"
    "    match: {protocol: tcp, port: 8080}\n"
    "    limit: {rate: 100/s, burst: 100}\n"
    "    syn_cookies: true\n";

class CleanupTest : public RldTest {
 protected:
  bool xdp_on_server_end() {
    return link_details(lab_->pair().server.ifname).find("prog/xdp") != std::string::npos;
  }

  // rld with the SYN-cookie rule, and everything it put in place.
  void start_with_cookies() {
    loose_before_ = tcp_loose();
    ASSERT_EQ(loose_before_, "1\n") << "a new namespace's default";
    write_policy("web.yaml", kCookies);
    start_rld();
    ASSERT_TRUE(synproxy_table_installed());
    ASSERT_EQ(tcp_loose(), "0\n");
    ASSERT_TRUE(xdp_on_server_end());
    ASSERT_TRUE(std::filesystem::exists(pin_root_ + "/links/" + lab_->pair().server.ifname));
  }

  // rld --cleanup in the server's namespace, as the package's prerm and the cleanup manifest
  // run it (there: the node's network namespace).
  Output cleanup(std::vector<std::string> args) {
    std::vector<std::string> argv = {"nsenter", "--net=/run/netns/" + lab_->server_ns(),
                                     RL_RLD_PATH, "--cleanup"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, 30s);
  }

  void expect_nothing_left() {
    EXPECT_FALSE(xdp_on_server_end()) << "no program on the interface";
    EXPECT_FALSE(std::filesystem::exists(pin_root_)) << "no pin";
    EXPECT_FALSE(synproxy_table_installed()) << "no nftables table";
    EXPECT_EQ(tcp_loose(), loose_before_) << "the sysctl restored";
  }

  std::string loose_before_;
};

TEST_F(CleanupTest, WorksWithABrokenConfigurationFile) {
  start_with_cookies();
  rld_->stop(SIGKILL);
  const std::string config = (dir_ / "rld.yaml").string();
  std::ofstream(config) << "interfaces: [eth0\npin_root: /sys/fs/bpf/rl\n";
  auto out = cleanup({"--config", config, "--pin-root", pin_root_});
  EXPECT_TRUE(out.ok()) << out.describe();
  EXPECT_NE(out.err.find("configuration not used"), std::string::npos) << out.err;
  expect_nothing_left();
}

TEST_F(CleanupTest, WorksWithoutAConfigurationFile) {
  start_with_cookies();
  rld_->stop(SIGKILL);
  auto out = cleanup({"--config", (dir_ / "gone.yaml").string(), "--pin-root", pin_root_});
  EXPECT_TRUE(out.ok()) << out.describe();
  expect_nothing_left();
}

TEST_F(CleanupTest, StopsARunningRldFirst) {
  start_with_cookies();
  auto out = cleanup({"--pin-root", pin_root_});
  EXPECT_TRUE(out.ok()) << out.describe();
  EXPECT_NE(out.err.find("stopping the rld running on the pin root"), std::string::npos) << out.err;
  EXPECT_FALSE(rld_->running()) << "the running rld stopped";
  EXPECT_EQ(rld_->wait(5s).code, 0) << "by SIGTERM, cleanly";
  expect_nothing_left();
}

// What deploy/kubernetes/rld-cleanup.yaml runs on each node once the rld DaemonSet is deleted
// (its args, with the test's pin root and sysctl directory: tests/packaging/check_manifest.py
// --cleanup holds the manifest to them), over the pins an rld left when its pod was killed, in a
// container's view of /proc/sys: read-only, the netfilter directory bound read-write elsewhere.
TEST_F(CleanupTest, TheCleanupManifestsCommandAfterAKilledPod) {
  start_with_cookies();
  rld_->stop(SIGKILL);
  const std::string bound = (dir_ / "netfilter").string();
  std::filesystem::create_directories(bound);
  auto in_pod = [&] {
    std::vector<std::string> argv = {"nsenter", "--net=/run/netns/" + lab_->server_ns()};
    auto container = container_sysctls(bound);
    argv.insert(argv.end(), container.begin(), container.end());
    argv.insert(argv.end(), {RL_RLD_PATH, "--cleanup", "--pin-root", pin_root_,
                             "--netfilter-sysctl-dir", bound});
    return run(argv, 30s);
  };
  auto out = in_pod();
  EXPECT_TRUE(out.ok()) << out.describe();
  expect_nothing_left();
  // Again, as when the kubelet restarts the pod: nothing to do, still a success.
  auto again = in_pod();
  EXPECT_TRUE(again.ok()) << again.describe();
}

}  // namespace
}  // namespace rl::testing
