// SPDX-License-Identifier: GPL-2.0-only
// rld as systemd runs it: the notify protocol (READY after attach and policy, never for a start
// that fails, RELOADING/READY around reloads, STATUS= as readiness changes, the watchdog,
// STOPPING) on a socket the test owns, journald priorities when
// stderr is the journal's stream, and rld working with only the capabilities and no-new-privs
// of packaging/rld.service.
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <chrono>
#include <regex>
#include <set>

#include "common/cli_exit.h"
#include "policy_text.h"
#include "rld_fixture.h"

namespace rl::testing {
namespace {

const std::string kRule = udp9_policy("1/min", 5);

// The datagram socket systemd would listen on; rld finds it through NOTIFY_SOCKET.
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof(a.sun_path), "%s", path.c_str());
    ::unlink(path.c_str());
    ok_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  }
  ~NotifySocket() {
    if (fd_ >= 0) ::close(fd_);
    ::unlink(path_.c_str());
  }
  bool ok() const { return ok_; }

  // The next message, "" after `timeout` without one.
  std::string next(std::chrono::milliseconds timeout) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1) return "";
    char buf[4096];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }

  // Messages until one contains `needle` (returned), skipping watchdog pings; "" on timeout.
  std::string until(const std::string& needle, std::chrono::milliseconds timeout,
                    std::vector<std::string>* seen = nullptr) {
    auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      std::string m = next(std::max(left, 1ms));
      if (m.empty()) return "";
      if (m == "WATCHDOG=1") continue;
      if (seen) seen->push_back(m);
      if (m.find(needle) != std::string::npos) return m;
    }
    return "";
  }

 private:
  std::string path_;
  int fd_ = -1;
  bool ok_ = false;
};

class SystemdTest : public RldTest {
 protected:
  std::string notify_path() const { return (dir_ / "notify.sock").string(); }

  // CapabilityBoundingSet= of the shipped unit, in setpriv's syntax: "-all,+bpf,+net_admin".
  static std::string unit_capabilities() {
    std::ifstream in(RL_UNIT_PATH);
    std::string line, caps = "-all";
    while (std::getline(in, line)) {
      if (line.rfind("CapabilityBoundingSet=", 0) != 0) continue;
      std::istringstream words(line.substr(line.find('=') + 1));
      for (std::string w; words >> w;) {
        for (auto& c : w) c = static_cast<char>(std::tolower(c));
        caps += ",+" + w.substr(w.rfind("cap_", 0) == 0 ? 4 : 0);
      }
    }
    return caps;
  }
};

TEST_F(SystemdTest, NotifiesReadyReloadingWatchdogAndStopping) {
  write_policy("a.yaml", kRule);
  NotifySocket notify(notify_path());
  ASSERT_TRUE(notify.ok()) << std::strerror(errno);
  rld_wrapper_ = {"env", "NOTIFY_SOCKET=" + notify_path(), "WATCHDOG_USEC=3000000"};
  start_rld();

  std::vector<std::string> seen;
  std::string ready = notify.until("READY=1", 10s, &seen);
  ASSERT_FALSE(ready.empty()) << "no READY from rld";
  EXPECT_EQ(seen.size(), 1u) << "READY is the first state rld reports; got " << seen.front();
  EXPECT_NE(ready.find("STATUS=enforcing on 1 interfaces, 1 rules"), std::string::npos) << ready;
  // Everything rld logs before READY is on stderr by the time READY arrives.
  std::string err = rld_->err();
  EXPECT_NE(err.find("msg=attached"), std::string::npos) << err;
  EXPECT_NE(err.find("msg=\"policy applied\""), std::string::npos) << err;

  // The watchdog is pinged well inside WATCHDOG_USEC (3 s): count pings over 3.5 s.
  int pings = 0;
  for (auto end = std::chrono::steady_clock::now() + 3500ms;
       std::chrono::steady_clock::now() < end;)
    if (notify.next(500ms) == "WATCHDOG=1") pings++;
  EXPECT_GE(pings, 3) << "at least one ping a second";

  // A policy change on disk, then SIGHUP: each reload is bracketed by RELOADING and READY.
  uint64_t gen = ctl({"status"})["generation"];
  write_policy("b.yaml",
               "rules:\n  - name: tcp80\n    match: {protocol: tcp, port: 80}\n"
               "    limit: {rate: 5/s}\n");
  seen.clear();
  ASSERT_FALSE(notify.until("RELOADING=1", 10s, &seen).empty()) << "no RELOADING for inotify";
  EXPECT_NE(seen.back().find("MONOTONIC_USEC="), std::string::npos) << seen.back();
  EXPECT_EQ(notify.until("READY=1", 10s), "READY=1");
  wait_reload(gen);

  rld_->signal(SIGHUP);
  ASSERT_FALSE(notify.until("RELOADING=1", 10s).empty()) << "no RELOADING for SIGHUP";
  EXPECT_EQ(notify.until("READY=1", 10s), "READY=1");

  rld_->signal(SIGTERM);
  EXPECT_EQ(notify.until("STOPPING=1", 10s), "STOPPING=1");
  auto out = rld_->wait(10s);
  EXPECT_TRUE(out.ok()) << out.describe();
}

// A first start whose policy does not load never reports READY: it exits 6, so systemd marks
// the unit failed. A start that adopts a pinned rule set reports READY (it enforces, and a start
// that never became ready would be killed) with a STATUS= that says it is degraded.
TEST_F(SystemdTest, NoReadyForAnInvalidFirstPolicyAndADegradedStatusWhenAdopting) {
  write_policy("a.yaml", "rules:\n  - name: typo\n    limit: {rate: 10/s, burts: 3}\n");
  NotifySocket notify(notify_path());
  ASSERT_TRUE(notify.ok()) << std::strerror(errno);
  rld_wrapper_ = {"env", "NOTIFY_SOCKET=" + notify_path()};
  auto failed = run(rld_argv(), 30s);
  EXPECT_EQ(failed.code, kExitNotConfigured) << failed.describe();
  EXPECT_NE(failed.err.find("a.yaml:3:"), std::string::npos) << failed.err;
  std::vector<std::string> seen;
  EXPECT_EQ(notify.until("READY=1", 500ms, &seen), "") << "READY from a start that failed";

  write_policy("a.yaml", kRule);
  start_rld();
  ASSERT_FALSE(notify.until("READY=1", 10s).empty());
  rld_->signal(SIGKILL);
  rld_->wait(5s);
  write_policy("b.yaml", "rules:\n  - name: broken\n    match: {protocol: udp}\n");
  start_rld();
  std::string ready = notify.until("READY=1", 10s);
  EXPECT_NE(ready.find("STATUS=NOT READY: degraded: the policy in "), std::string::npos) << ready;
  // Fixed: STATUS= follows within the housekeeping second.
  uint64_t gen = ctl({"status"})["generation"];
  std::filesystem::remove(dir_ / "policies" / "b.yaml");
  wait_reload(gen);
  EXPECT_EQ(notify.until("STATUS=enforcing on 1 interfaces, 1 rules", 5s),
            "STATUS=enforcing on 1 interfaces, 1 rules");
}

// A configured interface that does not exist yet (a VLAN, a bond, a late NIC) is waited for:
// STATUS= says so, the watchdog keeps being pinged, and READY follows once it appears and rld
// attached to it.
TEST_F(SystemdTest, AnInterfaceThatAppearsLateIsWaitedForThenAttached) {
  write_policy("a.yaml", kRule);
  NotifySocket notify(notify_path());
  ASSERT_TRUE(notify.ok()) << std::strerror(errno);
  rld_wrapper_ = {"env", "NOTIFY_SOCKET=" + notify_path(), "WATCHDOG_USEC=3000000"};
  rld_extra_args_ = {"--interface", "rlwait0", "--interface-wait-seconds", "30"};
  auto p = Process::spawn(rld_argv());
  ASSERT_TRUE(p.ok()) << p.error().str();
  rld_ = std::make_unique<Process>(std::move(*p));
  ASSERT_TRUE(rld_->wait_for("waiting for interfaces to appear", 10s)) << rld_->err();
  EXPECT_NE(rld_->err().find("interfaces=rlwait0"), std::string::npos) << rld_->err();

  // Two seconds without the interface: waiting, pinging, not ready.
  std::vector<std::string> seen;
  int pings = 0;
  for (auto end = std::chrono::steady_clock::now() + 2s; std::chrono::steady_clock::now() < end;)
    if (std::string m = notify.next(200ms); m == "WATCHDOG=1")
      pings++;
    else if (!m.empty())
      seen.push_back(m);
  EXPECT_GE(pings, 1) << "the watchdog is pinged while rld waits";
  bool said = false;
  for (const auto& m : seen) {
    EXPECT_EQ(m.find("READY=1"), std::string::npos) << "READY before the interface: " << m;
    said = said || m.find("STATUS=waiting for rlwait0") != std::string::npos;
  }
  EXPECT_TRUE(said) << "no STATUS=waiting for rlwait0";
  EXPECT_TRUE(rld_->running()) << rld_->err();

  auto made = lab_->run(lab_->server_ns(), {"ip", "link", "add", "rlwait0", "type", "veth", "peer",
                                            "name", "rlwait0p"});
  ASSERT_TRUE(made.ok()) << made.describe();
  ASSERT_TRUE(lab_->run(lab_->server_ns(), {"ip", "link", "set", "rlwait0", "up"}).ok());
  std::string ready = notify.until("READY=1", 10s);
  ASSERT_FALSE(ready.empty()) << "no READY once the interface appeared:\n" << rld_->err();
  EXPECT_NE(ready.find("STATUS=enforcing on 2 interfaces, 1 rules"), std::string::npos) << ready;
  ASSERT_TRUE(rld_->wait_for("rld running", 5s)) << rld_->err();
  Json st = ctl({"status"});
  EXPECT_TRUE(st["ready"].get<bool>()) << st.dump();
  bool attached = false;
  for (const auto& i : st["interfaces"])
    attached = attached || (i["name"] == "rlwait0" && i["mode"] != "none");
  EXPECT_TRUE(attached) << st.dump();
  auto shown = lab_->run(lab_->server_ns(), {"ip", "link", "show", "rlwait0"});
  EXPECT_NE(shown.out.find("xdp"), std::string::npos) << shown.out;
}

// One that never appears fails the start once the bound passes, naming it; no READY.
TEST_F(SystemdTest, AnInterfaceThatNeverAppearsFailsTheStartAfterTheBound) {
  write_policy("a.yaml", kRule);
  NotifySocket notify(notify_path());
  ASSERT_TRUE(notify.ok()) << std::strerror(errno);
  rld_wrapper_ = {"env", "NOTIFY_SOCKET=" + notify_path()};
  rld_extra_args_ = {"--interface", "rlwait1", "--interface-wait-seconds", "2"};
  auto t0 = std::chrono::steady_clock::now();
  auto out = run(rld_argv(), 30s);
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(out.code, 1) << out.describe();
  EXPECT_NE(out.err.find("interface rlwait1 did not appear within 2 s (interface_wait_seconds)"),
            std::string::npos)
      << out.err;
  EXPECT_GE(took, 2s);
  EXPECT_LT(took, 15s);
  std::vector<std::string> seen;
  EXPECT_EQ(notify.until("READY=1", 500ms, &seen), "") << "READY from a start that failed";
  bool said = false;
  for (const auto& m : seen)
    said = said || m.find("STATUS=waiting for rlwait1") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST_F(SystemdTest, LinesCarryJournalPrioritiesWhenStderrIsTheJournal) {
  // A deny entry and a broken policy give info, warning and error lines.
  write_policy("a.yaml", kRule);
  // JOURNAL_STREAM names stderr's device and inode, as systemd sets it for the journal's stream.
  rld_wrapper_ = {"sh", "-c", "JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2) exec \"$@\"",
                  "sh"};
  start_rld();
  uint64_t gen = ctl({"status"})["generation"];
  write_policy("b.yaml", "rules:\n  - name: broken\n    match: {protocol: udp}\n");
  wait_reload(gen, /*ok=*/false);
  rld_->stop();
  std::string err = rld_->err();
  std::istringstream lines(err);
  int info = 0, warn_or_error = 0;
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(line, m, std::regex("^<([0-7])>ts=\\S+ level=(\\w+) ")))
        << "a line without a priority prefix: " << line;
    std::string level = m[2];
    std::string want = level == "info" ? "6" : level == "warn" ? "4" : level == "error" ? "3" : "7";
    EXPECT_EQ(m[1], want) << line;
    (level == "info" ? info : warn_or_error)++;
  }
  EXPECT_GT(info, 0) << err;
  EXPECT_GT(warn_or_error, 0) << "the broken policy is reported as a warning or error:\n" << err;

  // Anywhere else (here: JOURNAL_STREAM names another file) the lines stay plain logfmt.
  rld_wrapper_ = {"env", "JOURNAL_STREAM=1:1"};
  start_rld();
  rld_->stop();
  EXPECT_EQ(rld_->err().rfind("ts=", 0), 0u) << rld_->err();
}

TEST_F(SystemdTest, WorksWithOnlyTheUnitsCapabilities) {
  std::string caps = unit_capabilities();
  ASSERT_NE(caps, "-all") << "no CapabilityBoundingSet= in " << RL_UNIT_PATH;
  write_policy("a.yaml", kRule);
  // As systemd starts it: the unit's bounding set (root keeps only these) and no-new-privs.
  rld_wrapper_ = {"setpriv", "--bounding-set=" + caps, "--inh-caps=-all", "--no-new-privs"};
  start_rld();
  auto status = rld_->err();
  EXPECT_EQ(ctl({"status"})["interfaces"].size(), 1u);
  EXPECT_EQ(ctl({"status"})["event_loop"], "fifo 1") << "CAP_SYS_NICE raises the event loop";
  EXPECT_EQ(received({.src = "198.18.1.1", .count = 50, .rate = 1000}), 5u)
      << "the burst, then nothing";

  // The capability set in force is the unit's, read from the kernel while rld runs.
  std::ifstream st("/proc/" + std::to_string(rld_->pid()) + "/status");
  std::string line, eff;
  while (std::getline(st, line))
    if (line.rfind("CapEff:", 0) == 0) eff = line.substr(line.find_first_not_of(" \t", 7));
  auto decoded = run({"capsh", "--decode=" + eff});
  ASSERT_TRUE(decoded.ok()) << decoded.describe();
  // capsh prints "0x...=cap_net_admin,cap_bpf"; the unit's set is "-all,+net_admin,+bpf".
  auto names = [](const std::string& list, const std::string& prefix) {
    std::set<std::string> out;
    std::istringstream in(list);
    for (std::string w; std::getline(in, w, ',');) {
      w.erase(w.find_last_not_of('\n') + 1);
      if (w.rfind(prefix, 0) == 0) out.insert(w.substr(prefix.size()));
    }
    return out;
  };
  EXPECT_EQ(names(decoded.out.substr(decoded.out.find('=') + 1), "cap_"), names(caps, "+"))
      << "CapEff " << eff;

  // A reload and a runtime entry work too: the map writes need no more than load did.
  uint64_t gen = ctl({"status"})["generation"];
  write_policy("b.yaml",
               "rules:\n  - name: tcp80\n    match: {protocol: tcp, port: 80}\n"
               "    limit: {rate: 5/s}\n");
  wait_reload(gen);
  ctl({"deny", "add", "198.18.2.2"});
  EXPECT_EQ(received({.src = "198.18.2.2", .count = 20, .rate = 1000}), 0u);
  // A connection limit: conntrack's table and its events need no more either.
  gen = ctl({"status"})["generation"];
  write_policy("c.yaml",
               "rules:\n  - name: ssh\n    match: {port: 22}\n    limit: {connections: 2}\n");
  wait_reload(gen);
  EXPECT_TRUE(lab_->run(lab_->server_ns(), {"nft", "list", "table", "inet", "rl_conntrack"}).ok());
  auto out = rld_->stop();
  EXPECT_TRUE(out.ok()) << out.describe();
}

}  // namespace
}  // namespace rl::testing
