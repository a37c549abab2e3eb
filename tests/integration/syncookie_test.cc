// SPDX-License-Identifier: GPL-2.0-only
// SYN cookies end to end: rld on the server's veth with a syn_cookies rule, a real TCP server
// behind it, real clients (IPv4 and IPv6) in the client namespace connecting while spoofed SYNs
// and ACKs from 198.18.0.0/16 flood the port. Every client connection completes; no spoofed packet
// leaves a socket or a conntrack entry behind. A control run without cookies shows the same flood
// does leave half-open sockets, so the check can fail.
#include <filesystem>
#include <sstream>

#include "common/cli_exit.h"
#include "rld_fixture.h"

namespace rl::testing {
namespace {

constexpr uint16_t kPort = 8080;
constexpr uint64_t kClients = 50;  // connections per family
// The flood outlasts the clients' connections by seconds, so that they connect while it goes on
// even on a loaded host (4 s of flood were once too few: the clients took longer).
constexpr uint64_t kFloodSyns = 40000;
constexpr char kSpoofed[] = "198.18.";

std::string policy(bool cookies) {
  return std::string(
             "rules:\n"
             "  - name: web\n"
             "    match: {protocol: tcp, port: 8080}\n"
             "    limit: {rate: 5000/s, burst: 5000}\n") +
         (cookies ? "    syn_cookies: true\n" : "");
}

class SynCookieLabTest : public RldTest {
 protected:
  // A veth takes the frames its peer's XDP program sends back (XDP_TX) only while it runs an
  // XDP program itself (on this kernel GRO alone does not do it): the client end gets one that
  // passes everything. A real NIC's peer needs nothing.
  void client_takes_xdp_tx() {
    auto out = lab_->run(lab_->client_ns(), {"ip", "link", "set", "dev", lab_->pair().client.ifname,
                                             "xdpdrv", "obj", RL_EMPTY_XDP_OBJ, "sec", "xdp"});
    ASSERT_TRUE(out.ok()) << out.describe();
  }

  // Without a route back to the spoofed sources the server's stack would not even keep a
  // half-open socket (it cannot send the SYN-ACK): this one leads to the client namespace, which
  // drops what it gets.
  void route_spoofed_back() {
    auto out = lab_->run(lab_->server_ns(),
                         {"ip", "route", "add", "198.18.0.0/16", "via", lab_->pair().client.ipv4});
    ASSERT_TRUE(out.ok()) << out.describe();
  }

  // The lines of `text` that mention a spoofed source.
  static std::vector<std::string> spoofed(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (line.find(kSpoofed) != std::string::npos) out.push_back(line);
    return out;
  }

  std::string sockets() { return in_server("ss -Htan"); }
  std::string conntrack() { return in_server("cat /proc/net/nf_conntrack"); }

  uint64_t global(const std::string& name) {
    return ctl({"stats"})["global"][name]["packets"].get<uint64_t>();
  }

  // A SYN flood from 2,000 spoofed sources, 20 SYNs each, for about 8 s.
  Result<Process> start_syn_flood() {
    SendSpec flood{.src = "198.18.0.0/16",
                   .sources = 2000,
                   .proto = "tcp",
                   .dport = kPort,
                   .syn = true,
                   .count = kFloodSyns,
                   .rate = 5000};
    return lab_->spawn_in(lab_->client_ns(), rlsend_argv(lab_->pair(), flood));
  }
};

TEST_F(SynCookieLabTest, RealClientsConnectWhileSpoofedSynsFlood) {
  write_policy("web.yaml", policy(true));
  start_rld();
  client_takes_xdp_tx();
  route_spoofed_back();
  EXPECT_TRUE(synproxy_table_installed()) << "rld installs the stack's SYNPROXY";
  EXPECT_EQ(tcp_loose(), "0\n");

  auto server = start_tcp_server(*lab_, 0, {.port = kPort, .expect = 2 * kClients, .seconds = 40});
  ASSERT_TRUE(server.ok()) << server.error().str();
  auto flood = start_syn_flood();
  ASSERT_TRUE(flood.ok()) << flood.error().str();
  const Pair& pair = lab_->pair();
  auto v4 = tcp_connect(*lab_, {.to = pair.server.ipv4, .port = kPort, .count = kClients});
  auto v6 = tcp_connect(*lab_, {.to = pair.server.ipv6, .port = kPort, .count = kClients});
  // Sockets while the flood is still on: a half-open socket would still be retrying its SYN-ACK.
  auto during = spoofed(sockets());
  EXPECT_TRUE(flood->running()) << "the clients connected while the flood went on";
  auto sent = flood->wait(15s);
  ASSERT_TRUE(sent.ok()) << sent.describe();
  auto flood_summary = parse_send_summary(sent.out);
  ASSERT_TRUE(flood_summary.ok());
  EXPECT_EQ(flood_summary->sent, kFloodSyns);

  ASSERT_TRUE(v4.ok()) << v4.error().str();
  ASSERT_TRUE(v6.ok()) << v6.error().str();
  EXPECT_EQ(v4->completed, kClients) << v4->failed << " failed";
  EXPECT_EQ(v6->completed, kClients) << v6->failed << " failed";
  auto served = finish_tcp_server(*server, 10s);
  ASSERT_TRUE(served.ok()) << served.error().str();
  EXPECT_EQ(served->accepted, 2 * kClients);
  EXPECT_EQ(served->peers.size(), 2u) << "only the two client addresses";

  EXPECT_TRUE(during.empty()) << during.front();
  auto after = spoofed(sockets());
  EXPECT_TRUE(after.empty()) << after.front();
  std::string ct = conntrack();
  EXPECT_TRUE(spoofed(ct).empty()) << spoofed(ct).front();
  EXPECT_NE(ct.find("src=" + pair.client.ipv4), std::string::npos)
      << "the clients' connections are in conntrack (so it is on and the check above means "
         "something):\n"
      << ct;

  EXPECT_GE(global("syn_cookies_sent"), kFloodSyns + 2 * kClients);
  EXPECT_GE(global("syn_cookies_accepted"), 2 * kClients);

  // Spoofed ACKs guessing cookies: all dropped, none leaves a trace.
  uint64_t rejected = global("syn_cookies_rejected");
  auto acks = send({.src = "198.18.0.0/16",
                    .sources = 1000,
                    .proto = "tcp",
                    .dport = kPort,
                    .count = 5000,
                    .rate = 5000});
  EXPECT_EQ(acks.sent, 5000u);
  EXPECT_EQ(global("syn_cookies_rejected"), rejected + 5000);
  EXPECT_TRUE(spoofed(conntrack()).empty());
  EXPECT_TRUE(spoofed(sockets()).empty());
}

// The same flood against the same rule without cookies reaches the listener, which keeps a
// half-open socket per spoofed SYN it has room for: what the test above shows does not happen.
TEST_F(SynCookieLabTest, WithoutCookiesTheFloodLeavesHalfOpenSockets) {
  write_policy("web.yaml", policy(false));
  start_rld();
  route_spoofed_back();
  EXPECT_FALSE(synproxy_table_installed());
  auto server = start_tcp_server(*lab_, 0, {.port = kPort, .seconds = 15});
  ASSERT_TRUE(server.ok()) << server.error().str();
  auto flood = start_syn_flood();
  ASSERT_TRUE(flood.ok()) << flood.error().str();
  auto sent = flood->wait(15s);
  ASSERT_TRUE(sent.ok()) << sent.describe();
  auto half_open = spoofed(in_server("ss -Htan state syn-recv"));
  EXPECT_GT(half_open.size(), 10u);
}

// The stack side follows the policy: installed with the first syn_cookies rule, removed with the
// last (and the sysctl restored), removed by rld --cleanup.
TEST_F(SynCookieLabTest, StackSideFollowsThePolicy) {
  ASSERT_EQ(tcp_loose(), "1\n") << "a fresh namespace's default";
  write_policy("web.yaml", policy(false));
  start_rld();
  EXPECT_FALSE(synproxy_table_installed());

  uint64_t gen = ctl({"status"})["generation"];
  write_policy("web.yaml", policy(true));
  wait_reload(gen);
  EXPECT_TRUE(synproxy_table_installed());
  EXPECT_EQ(tcp_loose(), "0\n");
  std::string rules = in_server("nft list table inet rl_synproxy");
  EXPECT_NE(rules.find("tcp dport 8080"), std::string::npos) << rules;
  EXPECT_NE(rules.find("synproxy mss 1460 wscale 7 timestamp sack-perm"), std::string::npos)
      << rules;
  EXPECT_NE(rules.find("notrack"), std::string::npos) << rules;

  gen = ctl({"status"})["generation"];
  write_policy("web.yaml", policy(false));
  wait_reload(gen);
  EXPECT_FALSE(synproxy_table_installed());
  EXPECT_EQ(tcp_loose(), "1\n");

  gen = ctl({"status"})["generation"];
  write_policy("web.yaml", policy(true));
  wait_reload(gen);
  EXPECT_TRUE(synproxy_table_installed());
  rld_.reset();  // rld stopped: the limiter and its stack side stay
  EXPECT_TRUE(synproxy_table_installed());
  auto out = run({"nsenter", "--net=/run/netns/" + lab_->server_ns(), RL_RLD_PATH, "--cleanup",
                  "--pin-root", pin_root_});
  ASSERT_TRUE(out.ok()) << out.describe();
  EXPECT_FALSE(synproxy_table_installed());
  EXPECT_EQ(tcp_loose(), "1\n");
}

// `nft flush ruleset`, which nftables.service runs on reload, takes rld's table with it: rld puts
// it back within seconds, and still restores the operator's sysctl value when the table goes.
TEST_F(SynCookieLabTest, AFlushedRulesetIsPutBack) {
  ASSERT_EQ(tcp_loose(), "1\n") << "a fresh namespace's default";
  write_policy("web.yaml", policy(true));
  start_rld();
  ASSERT_TRUE(synproxy_table_installed());
  in_server("nft flush ruleset");
  ASSERT_FALSE(synproxy_table_installed());
  bool back = false;
  for (int i = 0; i < 80 && !back; i++) {
    std::this_thread::sleep_for(100ms);
    back = synproxy_table_installed();
  }
  ASSERT_TRUE(back) << "rld puts its table back within 8 s";
  EXPECT_NE(in_server("nft list table inet rl_synproxy").find("tcp dport 8080"), std::string::npos);
  EXPECT_EQ(tcp_loose(), "0\n");

  const uint64_t gen = ctl({"status"})["generation"];
  write_policy("web.yaml", policy(false));
  wait_reload(gen);
  EXPECT_FALSE(synproxy_table_installed());
  EXPECT_EQ(tcp_loose(), "1\n") << "the operator's value, not the 0 rld had set";
}

// SYN cookies are installed completely or not at all. rld runs in a mount namespace whose
// /proc/sys is read-only (as in a container without a writable /proc/sys, or under
// ProtectKernelTunables=): a policy with a syn_cookies rule is refused as a whole, with an error
// that names the sysctl and why, the policy in force stays, and no nftables table is left behind
// with the sysctl unchanged. A first start with such a policy fails the same way.
TEST_F(SynCookieLabTest, AReadOnlySysctlRefusesThePolicyAndLeavesNoTable) {
  ASSERT_EQ(tcp_loose(), "1\n") << "a fresh namespace's default";
  rld_wrapper_ = {"unshare",
                  "--mount",
                  "--propagation",
                  "private",
                  "sh",
                  "-c",
                  "mount -o bind,ro /proc/sys /proc/sys && exec \"$@\"",
                  "sh"};
  const std::string kWhy =
      "SYN cookies need write access to /proc/sys/net/netfilter/nf_conntrack_tcp_loose "
      "(read-only: a container without a writable /proc/sys, or a unit with "
      "ProtectKernelTunables=; in a container, mount the node's /proc/sys/net/netfilter "
      "read-write at another path, a hostPath volume in Kubernetes, and set "
      "netfilter_sysctl_dir to it)";

  write_policy("web.yaml", policy(true));
  auto first = run(rld_argv(), 30s);
  EXPECT_EQ(first.code, kExitNotConfigured) << first.describe();
  EXPECT_NE(first.err.find(kWhy), std::string::npos) << first.err;
  EXPECT_FALSE(synproxy_table_installed()) << in_server("nft list ruleset");
  EXPECT_EQ(tcp_loose(), "1\n");

  write_policy("web.yaml", policy(false));
  start_rld();
  uint64_t gen = ctl({"status"})["generation"];
  write_policy("web.yaml", policy(true));
  wait_reload(gen, /*ok=*/false);
  Json st = ctl({"status"});
  ASSERT_EQ(st["last_reload"]["errors"].size(), 1u) << st.dump();
  EXPECT_NE(st["last_reload"]["errors"][0].get<std::string>().find(kWhy), std::string::npos)
      << st.dump();
  EXPECT_EQ(st["generation"].get<uint64_t>(), gen) << "the policy in force stays";
  EXPECT_EQ(st["rules"].get<uint64_t>(), 1u);
  EXPECT_FALSE(synproxy_table_installed()) << in_server("nft list ruleset");
  EXPECT_EQ(tcp_loose(), "1\n");
  EXPECT_TRUE(rld_->running()) << rld_->err();
}

// A container whose /proc/sys is read-only, as Kubernetes gives a pod that is not privileged,
// with its network namespace's /proc/sys/net/netfilter mounted read-write at another path (what
// the DaemonSet's hostPath volume does) and netfilter_sysctl_dir naming it: the syn_cookies
// policy goes in, the sysctl changes in rld's network namespace, a real client connects through
// the cookies, and rld --cleanup run the same way (the cleanup manifest) restores the sysctl. The
// same --cleanup without the setting cannot write the sysctl and leaves the table with its
// record instead of losing the value to restore.
TEST_F(SynCookieLabTest, AReadOnlyProcSysWithTheSysctlDirectoryBoundElsewhere) {
  ASSERT_EQ(tcp_loose(), "1\n") << "a fresh namespace's default";
  const std::string bound = (dir_ / "netfilter").string();
  std::filesystem::create_directories(bound);
  // Behind nsenter --net: the directory bound is the server namespace's view of the sysctls.
  const std::vector<std::string> container = container_sysctls(bound);
  auto in_container = [&](std::vector<std::string> argv) {
    std::vector<std::string> all = {"nsenter", "--net=/run/netns/" + lab_->server_ns()};
    all.insert(all.end(), container.begin(), container.end());
    all.insert(all.end(), argv.begin(), argv.end());
    return run(all, 30s);
  };
  // The container really is read-only where rld looks by default, and writable where bound.
  auto ro = in_container({"sh", "-c", "echo 1 > /proc/sys/net/netfilter/nf_conntrack_tcp_loose"});
  EXPECT_FALSE(ro.ok()) << ro.describe();
  EXPECT_NE(ro.err.find("Read-only file system"), std::string::npos) << ro.err;
  auto rw = in_container({"sh", "-c", "echo 1 > \"$0\"/nf_conntrack_tcp_loose", bound});
  EXPECT_TRUE(rw.ok()) << rw.describe();

  rld_wrapper_ = container;
  rld_extra_args_ = {"--netfilter-sysctl-dir", bound};
  write_policy("web.yaml", policy(true));
  start_rld();
  client_takes_xdp_tx();
  EXPECT_TRUE(synproxy_table_installed()) << in_server("nft list ruleset");
  EXPECT_EQ(tcp_loose(), "0\n") << "set in rld's network namespace through the bound directory";
  EXPECT_TRUE(rld_->wait_for("sysctl_path=" + bound + "/nf_conntrack_tcp_loose", 5s))
      << rld_->err();

  constexpr uint64_t kConnections = 10;
  auto server = start_tcp_server(*lab_, 0, {.port = kPort, .expect = kConnections, .seconds = 20});
  ASSERT_TRUE(server.ok()) << server.error().str();
  auto v4 =
      tcp_connect(*lab_, {.to = lab_->pair().server.ipv4, .port = kPort, .count = kConnections});
  ASSERT_TRUE(v4.ok()) << v4.error().str();
  EXPECT_EQ(v4->completed, kConnections) << v4->failed << " failed";
  auto served = finish_tcp_server(*server, 10s);
  ASSERT_TRUE(served.ok()) << served.error().str();
  EXPECT_EQ(served->accepted, kConnections);
  EXPECT_GE(global("syn_cookies_accepted"), kConnections) << "through the cookies";

  rld_.reset();  // rld stopped: the limiter and its stack side stay
  ASSERT_TRUE(synproxy_table_installed());

  // Without the setting the sysctl cannot be restored: the table stays with its record.
  auto unset = in_container({RL_RLD_PATH, "--cleanup", "--pin-root", pin_root_});
  EXPECT_FALSE(unset.ok()) << unset.describe();
  EXPECT_NE(unset.err.find("table inet rl_synproxy left in place to restore "
                           "nf_conntrack_tcp_loose=1"),
            std::string::npos)
      << unset.err;
  EXPECT_TRUE(synproxy_table_installed());
  EXPECT_EQ(tcp_loose(), "0\n");

  auto out = in_container(
      {RL_RLD_PATH, "--cleanup", "--pin-root", pin_root_, "--netfilter-sysctl-dir", bound});
  EXPECT_TRUE(out.ok()) << out.describe();
  EXPECT_FALSE(synproxy_table_installed());
  EXPECT_EQ(tcp_loose(), "1\n") << "the recorded value restored";
}

}  // namespace
}  // namespace rl::testing
