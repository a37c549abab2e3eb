// SPDX-License-Identifier: GPL-2.0-only
// rld on a real veth in a lab namespace, driven by rlctl, fed by rlsend. rld runs with
// `nsenter --net` so that it keeps the host's mount namespace: its pins live in the host's bpffs
// (under a name unique to the test) and survive a killed rld, as they would in production.
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/cli_exit.h"
#include "lab.h"
#include "ports.h"
#include "process.h"
#include "traffic.h"

namespace rl::testing {

using Json = nlohmann::json;

// A TCP port nobody listens on right now (the kernel picks it; good enough on loopback); 0, which
// nothing can listen on, if none could be had.
inline uint16_t free_port() {
  auto port = free_loopback_port();
  EXPECT_TRUE(port.ok()) << port.error().str();
  return port.ok() ? *port : 0;
}

class RldTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto lab = Lab::create(lab_options_);
    ASSERT_TRUE(lab.ok()) << lab.error().str();
    lab_ = std::make_unique<Lab>(std::move(*lab));
    dir_ = std::filesystem::path("/tmp") / ("rl-it-" + lab_->tag());
    std::filesystem::create_directories(dir_ / "policies");
    pin_root_ = "/sys/fs/bpf/rl-it-" + lab_->tag();
    metrics_port_ = free_port();
  }

  void TearDown() override {
    rld_.reset();
    if (lab_) {
      // Remove the pins and links whatever the test did; then the lab deletes its namespaces.
      auto out = run({"nsenter", "--net=/run/netns/" + lab_->server_ns(), RL_RLD_PATH, "--cleanup",
                      "--pin-root", pin_root_});
      EXPECT_TRUE(out.ok()) << out.describe();
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    lab_.reset();
  }

  void write_policy(const std::string& name, const std::string& text) {
    std::string part = (dir_ / "policies" / (name + ".part")).string();
    std::ofstream(part) << text;
    std::filesystem::rename(part, dir_ / "policies" / name);  // rld never sees half a file
  }

  // rld's command line in the server namespace (pair(0)'s server end and every side link's),
  // behind rld_wrapper_ (env, setpriv, ...); tests may change key_capacity_ first.
  std::vector<std::string> rld_argv() const {
    std::vector<std::string> argv = {"nsenter", "--net=/run/netns/" + lab_->server_ns()};
    argv.insert(argv.end(), rld_wrapper_.begin(), rld_wrapper_.end());
    argv.insert(argv.end(),
                {rld_path_, "--interface", lab_->pair().server.ifname, "--policy-dir",
                 (dir_ / "policies").string(), "--pin-root", pin_root_, "--control-socket",
                 socket_path(), "--metrics-listen", "127.0.0.1:" + std::to_string(metrics_port_),
                 "--reload-debounce-ms", "100", "--key-capacity", key_capacity_});
    for (size_t k = 0; k < lab_options_.side_links; k++) {
      argv.emplace_back("--interface");
      argv.push_back(lab_->side_link(k).server.ifname);
    }
    argv.insert(argv.end(), rld_extra_args_.begin(), rld_extra_args_.end());
    return argv;
  }

  std::vector<std::string> rld_extra_args_;  // more of rld's flags, set before start_rld()
  std::string rld_path_ = RL_RLD_PATH;       // the rld start_rld() runs

  // `wait`: how long rld may take to load its policy and run.
  void start_rld(std::chrono::milliseconds wait = 10s) {
    auto p = Process::spawn(rld_argv());
    ASSERT_TRUE(p.ok()) << p.error().str();
    rld_ = std::make_unique<Process>(std::move(*p));
    ASSERT_TRUE(rld_->wait_for("rld running", wait)) << "rld did not start:\n" << rld_->err();
  }

  std::string socket_path() const { return (dir_ / "rld.sock").string(); }

  // rlctl -o json ...; fails the test unless it exits 0, or, for rlctl status, the exit status
  // that says what the answer does (kExitNotReady while "ready" is false).
  Json ctl(std::vector<std::string> args) {
    std::vector<std::string> argv = {RL_RLCTL_PATH, "-s", socket_path(), "-o", "json"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto out = run(argv, 30s);
    Json j = Json::parse(out.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << out.out;
    bool not_ready =
        !args.empty() && args.front() == "status" && j.is_object() && !j.value("ready", true);
    EXPECT_EQ(out.code, not_ready ? kExitNotReady : kExitOk) << out.describe() << out.out;
    EXPECT_FALSE(out.timed_out) << out.describe();
    return j;
  }

  Json rule_stats(const std::string& rule) {
    Json s = ctl({"stats"});
    for (const auto& r : s["rules"])
      if (r["name"] == rule) return r["counters"];
    ADD_FAILURE() << "no rule " << rule << " in " << s.dump();
    return Json::object();
  }

  // Waits (bounded) until rld's last reload reports `ok` at a generation past `after`.
  void wait_reload(uint64_t after, bool ok = true) {
    for (int i = 0; i < 100; i++) {
      Json s = ctl({"status"});
      if (s["last_reload"]["ok"].get<bool>() == ok &&
          (!ok || s["generation"].get<uint64_t>() > after))
        return;
      std::this_thread::sleep_for(50ms);
    }
    ADD_FAILURE() << "rld did not reload";
  }

  std::string metrics() {
    auto out = lab_->run(
        lab_->server_ns(),
        {"curl", "-sf", "http://127.0.0.1:" + std::to_string(metrics_port_) + "/metrics"});
    EXPECT_TRUE(out.ok()) << out.describe();
    return out.out;
  }

  // `shell` run in the server namespace: its standard output; a test failure if it fails.
  std::string in_server(const std::string& shell) {
    auto out = lab_->exec_in(lab_->server_ns(), shell);
    EXPECT_TRUE(out.ok()) << shell << ": " << out.describe();
    return out.out;
  }

  // `ip -d link show` of `ifname` in the server namespace: the XDP program and mode on it.
  std::string link_details(const std::string& ifname) {
    auto out = lab_->run(lab_->server_ns(), {"ip", "-d", "link", "show", "dev", ifname});
    EXPECT_TRUE(out.ok()) << out.describe();
    return out.out;
  }

  // What SYN-cookie rules change in the server namespace: the conntrack sysctl rld sets to 0
  // while they are in force, and the nftables table it installs.
  std::string tcp_loose() {
    return in_server("cat /proc/sys/net/netfilter/nf_conntrack_tcp_loose");
  }
  bool synproxy_table_installed() {
    return lab_->run(lab_->server_ns(), {"nft", "list", "table", "inet", "rl_synproxy"}).ok();
  }

  // GET `path` on the metrics endpoint: the status code (0 when nothing answered) and the body.
  std::pair<int, std::string> http(const std::string& path) {
    auto out =
        lab_->run(lab_->server_ns(), {"curl", "-s", "-w", "\n%{http_code}",
                                      "http://127.0.0.1:" + std::to_string(metrics_port_) + path});
    auto nl = out.out.rfind('\n');
    if (nl == std::string::npos) return {0, out.out};
    return {std::atoi(out.out.c_str() + nl + 1), out.out.substr(0, nl)};
  }

  // A sample value from the exposition text, -1 if absent.
  static double sample(const std::string& text, const std::string& series) {
    size_t at = 0;
    while ((at = text.find(series + " ", at)) != std::string::npos) {
      if (at == 0 || text[at - 1] == '\n') return std::stod(text.substr(at + series.size() + 1));
      at += series.size();
    }
    return -1;
  }

  SendSummary send(const SendSpec& spec) {
    auto r = rl::testing::send(*lab_, 0, spec);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().str());
    return r.ok() ? *r : SendSummary{};
  }

  // What a UDP socket behind rld received while `spec` was sent: the sink listens on
  // spec.dport and stops `idle_ms` after the last datagram, or after `seconds`.
  struct Delivery {
    SendSummary sent;
    SinkSummary got;
  };
  Result<Delivery> deliver(const SendSpec& spec, double seconds = 10, uint32_t idle_ms = 800) {
    auto sink = start_sink(*lab_, 0, {.port = spec.dport, .seconds = seconds, .idle_ms = idle_ms});
    if (!sink) return sink.error();
    Delivery d;
    d.sent = send(spec);
    auto got = finish_sink(*sink, std::chrono::seconds(10));
    if (!got) return got.error();
    d.got = std::move(*got);
    return d;
  }
  // How many datagrams of `spec` got through; ~0 if the sink failed.
  uint64_t received(const SendSpec& spec, double seconds = 3) {
    auto d = deliver(spec, seconds);
    EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().str());
    return d.ok() ? d->got.received : ~0ULL;
  }
  // How many of 20 datagrams from `src` got through: a rule of burst 5 or less admits its burst
  // to a fresh key and nothing to one whose bucket is empty.
  uint64_t through(const std::string& src) {
    return received({.src = src, .count = 20, .rate = 2000});
  }

  // A wrapper (rld_wrapper_, or before a command run behind nsenter --net) that gives the
  // command what a Kubernetes container that is not privileged sees: /proc/sys read-only, and
  // the network namespace's /proc/sys/net/netfilter mounted read-write at `bound` (an existing
  // directory), as the DaemonSets' hostPath volume does; netfilter_sysctl_dir names `bound`.
  static std::vector<std::string> container_sysctls(const std::string& bound) {
    const std::string script =
        "mount --bind /proc/sys/net/netfilter \"$0\" && mount -o bind,ro /proc/sys /proc/sys "
        "&& exec \"$@\"";
    return {"unshare", "--mount", "--propagation", "private", "sh", "-c", script, bound};
  }

  LabOptions lab_options_;  // set in a derived fixture's constructor to shape the lab
  // Runs rld inside the server namespace (env, setpriv): set before start_rld().
  std::vector<std::string> rld_wrapper_;
  std::unique_ptr<Lab> lab_;
  std::unique_ptr<Process> rld_;
  std::filesystem::path dir_;
  std::string pin_root_;
  uint16_t metrics_port_ = 0;
  std::string key_capacity_ = "65536";
};

}  // namespace rl::testing
