// SPDX-License-Identifier: GPL-2.0-only
// rld's xdp_mode against the kernel: `generic` attaches in generic (SKB) mode and limits real
// packets; `auto` picks native on a veth (whose driver has native XDP) and falls back to generic
// on a macvlan (whose driver has none on this kernel: no ndo_bpf), saying so; `native` on the
// macvlan is refused with a clear message and leaves nothing attached. Each mode is checked where
// the kernel reports it (`ip -d link show`), in `rlctl status`, in rl_interface_attached and in
// /healthz.
#include "policy_text.h"
#include "rld_fixture.h"

namespace rl::testing {
namespace {

const std::string kXdpModePolicy = udp9_policy("1/min", 10);

// A macvlan in the server namespace on the server end of pair(0), with an address of its own:
// frames the client sends to its MAC reach it through the veth, whose receive handler hands
// them to the macvlan, where generic XDP runs on them.
constexpr char kMacvlan[] = "rlkeys-mv0";
constexpr char kMacvlanIp[] = "192.0.2.250";

class XdpModeTest : public RldTest {
 protected:
  // rld's command line with `ifname` in place of pair(0)'s server end, and `mode` if given.
  std::vector<std::string> argv_on(const std::string& ifname, const std::string& mode) {
    auto argv = rld_argv();
    for (size_t i = 0; i + 1 < argv.size(); i++)
      if (argv[i] == "--interface" && argv[i + 1] == lab_->pair().server.ifname)
        argv[i + 1] = ifname;
    if (!mode.empty()) argv.insert(argv.end(), {"--xdp-mode", mode});
    return argv;
  }
  void start_on(const std::string& ifname, const std::string& mode) {
    auto p = Process::spawn(argv_on(ifname, mode));
    ASSERT_TRUE(p.ok()) << p.error().str();
    rld_ = std::make_unique<Process>(std::move(*p));
    ASSERT_TRUE(rld_->wait_for("rld running", 10s)) << "rld did not start:\n" << rld_->err();
  }

  // The macvlan as a Pair: the client's end of pair(0), the macvlan as the server end.
  Pair add_macvlan() {
    const std::string& ns = lab_->server_ns();
    auto add = lab_->run(ns, {"ip", "link", "add", kMacvlan, "link", lab_->pair().server.ifname,
                              "type", "macvlan", "mode", "bridge"});
    EXPECT_TRUE(add.ok()) << add.describe();
    EXPECT_TRUE(
        lab_->run(ns, {"ip", "addr", "add", std::string(kMacvlanIp) + "/32", "dev", kMacvlan})
            .ok());
    EXPECT_TRUE(lab_->run(ns, {"ip", "link", "set", kMacvlan, "up"}).ok());
    auto mac = lab_->run(ns, {"cat", std::string("/sys/class/net/") + kMacvlan + "/address"});
    EXPECT_TRUE(mac.ok()) << mac.describe();
    Pair p = lab_->pair();
    p.server.ifname = kMacvlan;
    p.server.mac = mac.out.substr(0, mac.out.find('\n'));
    p.server.ipv4 = kMacvlanIp;
    return p;
  }

  // The mode rld reports for its one interface: rlctl status, the metric and /healthz agree.
  void expect_reported(const std::string& ifname, const std::string& mode) {
    Json st = ctl({"status"});
    ASSERT_EQ(st["interfaces"].size(), 1u) << st.dump();
    EXPECT_EQ(st["interfaces"][0]["name"], ifname) << st.dump();
    EXPECT_EQ(st["interfaces"][0]["mode"], mode) << st.dump();
    std::string m = metrics();
    EXPECT_EQ(
        sample(m, "rl_interface_attached{interface=\"" + ifname + "\",mode=\"" + mode + "\"}"), 1)
        << m;
    auto health = lab_->run(
        lab_->server_ns(),
        {"curl", "-sf", "http://127.0.0.1:" + std::to_string(metrics_port_) + "/healthz"});
    ASSERT_TRUE(health.ok()) << health.describe();
    EXPECT_NE(health.out.find(ifname + ": " + mode + "\n"), std::string::npos) << health.out;
  }

  // 50 datagrams from one fresh source over `pair`: a burst of 10 gets through, no more.
  void expect_limited(const Pair& pair, const std::string& src) {
    auto sink = start_sink(*lab_, 0, {.port = 9, .seconds = 10, .idle_ms = 800});
    ASSERT_TRUE(sink.ok()) << sink.error().str();
    auto sent = rl::testing::send(*lab_, pair,
                                  {.src = src, .dst = pair.server.ipv4, .count = 50, .rate = 2000});
    ASSERT_TRUE(sent.ok()) << sent.error().str();
    EXPECT_EQ(sent->sent, 50u);
    auto got = finish_sink(*sink, 10s);
    ASSERT_TRUE(got.ok()) << got.error().str();
    EXPECT_EQ(got->received, 10u) << "the rule's burst, judged by XDP on " << pair.server.ifname;
    EXPECT_EQ(rule_stats("udp9")["dropped_packets"], 40) << "dropped by the program, counted";
  }

  // rld on pair(0)'s server end in `mode`; *link: what the kernel then reports of the link.
  void start_on_veth(const std::string& mode, std::string* link) {
    write_policy("p.yaml", kXdpModePolicy);
    ASSERT_NO_FATAL_FAILURE(start_on(lab_->pair().server.ifname, mode));
    *link = link_details(lab_->pair().server.ifname);
  }

  // On the veth: rld reports `mode`, gave no warning, and the program limits packets from `src`.
  void expect_veth_in(const std::string& mode, const std::string& src) {
    expect_reported(lab_->pair().server.ifname, mode);
    EXPECT_EQ(rld_->err().find("native XDP unavailable"), std::string::npos) << rld_->err();
    expect_limited(lab_->pair(), src);
  }
};

TEST_F(XdpModeTest, GenericModeAttachesInGenericModeAndLimits) {
  std::string link;
  ASSERT_NO_FATAL_FAILURE(start_on_veth("generic", &link));
  EXPECT_NE(link.find("xdpgeneric"), std::string::npos) << link;
  EXPECT_NE(link.find("prog/xdp id"), std::string::npos) << link;
  expect_veth_in("generic", "198.18.9.7");
}

TEST_F(XdpModeTest, AutoPicksNativeOnAVeth) {
  std::string link;
  ASSERT_NO_FATAL_FAILURE(start_on_veth("auto", &link));
  // iproute2 names the driver's hook "xdp", the generic one "xdpgeneric".
  EXPECT_NE(link.find(" xdp "), std::string::npos) << link;
  EXPECT_EQ(link.find("xdpgeneric"), std::string::npos) << link;
  expect_veth_in("native", "198.18.9.8");
}

TEST_F(XdpModeTest, NativeOnADeviceWithoutNativeXdpIsRefusedAndAutoFallsBack) {
  write_policy("p.yaml", kXdpModePolicy);
  Pair mv = add_macvlan();
  ASSERT_FALSE(mv.server.mac.empty());

  // native: rld refuses to start, says why and what to do, and attaches nothing.
  auto refused = run(argv_on(kMacvlan, "native"), 20s);
  EXPECT_EQ(refused.code, 1) << refused.describe();
  EXPECT_NE(refused.err.find("native XDP is not supported by " + std::string(kMacvlan)),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("set xdp_mode to generic, or to auto"), std::string::npos)
      << refused.err;
  std::string link = link_details(kMacvlan);
  EXPECT_EQ(link.find("prog/xdp"), std::string::npos) << "nothing attached:\n" << link;

  // auto: generic, with the warning.
  start_on(kMacvlan, "auto");
  EXPECT_NE(rld_->err().find("native XDP unavailable on " + std::string(kMacvlan)),
            std::string::npos)
      << rld_->err();
  EXPECT_NE(rld_->err().find("using generic mode"), std::string::npos) << rld_->err();
  link = link_details(kMacvlan);
  EXPECT_NE(link.find("xdpgeneric"), std::string::npos) << link;
  expect_reported(kMacvlan, "generic");
  // The program on the macvlan judges the packets that reach it, and only those: the veth under
  // it has no program.
  EXPECT_EQ(link_details(lab_->pair().server.ifname).find("prog/xdp"), std::string::npos);
  expect_limited(mv, "198.18.9.9");

  // rlctl attach --mode native is refused the same way, and changes nothing.
  ASSERT_TRUE(lab_->run(lab_->server_ns(), {"ip", "link", "add", "rlkeys-mv1", "link",
                                            lab_->pair().server.ifname, "type", "macvlan"})
                  .ok());
  auto attach =
      run({RL_RLCTL_PATH, "attach", "rlkeys-mv1", "--mode", "native", "-s", socket_path()});
  EXPECT_EQ(attach.code, 1) << attach.describe();
  EXPECT_NE(attach.err.find("native XDP is not supported by rlkeys-mv1"), std::string::npos)
      << attach.err;
  EXPECT_EQ(link_details("rlkeys-mv1").find("prog/xdp"), std::string::npos);
  expect_reported(kMacvlan, "generic");
}

}  // namespace
}  // namespace rl::testing
