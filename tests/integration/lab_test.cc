// SPDX-License-Identifier: GPL-2.0-only
// The lab itself, end to end: namespaces, veths and addresses come up; spoofed-source traffic
// from rlsend reaches the server's counters and sockets; rlsend refuses what it must refuse and
// stops by itself; and nothing is left behind, whichever way a test ends.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <net/if.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "lab.h"
#include "netns.h"
#include "traffic.h"

namespace rl::testing {
namespace {

bool ns_exists(const std::string& name) {
  auto all = Lab::list_namespaces();
  return std::find(all.begin(), all.end(), name) != all.end();
}

// Whether the host namespace has an interface whose name carries the lab's random suffix.
bool host_has_link_with(const std::string& suffix) {
  return run({"ip", "-o", "link", "show"}).out.find(suffix) != std::string::npos;
}

// Running, as opposed to gone or a zombie nobody has reaped yet.
bool running(pid_t pid) {
  FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (f == nullptr) return false;
  char state = 0;
  int matched = std::fscanf(f, "%*d (%*[^)]) %c", &state);
  std::fclose(f);
  return matched == 1 && state != 'Z' && state != 'X';
}

class LabTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "the lab needs root (network namespaces): run the tests as root";
  }
};

TEST_F(LabTest, BuildsIsolatedNamespacesWithAddresses) {
  Lab lab;
  ASSERT_EQ(lab.servers(), 1u);
  for (const auto& ns : lab.namespaces()) EXPECT_TRUE(ns_exists(ns)) << ns;
  const Pair& p = lab.pair();
  EXPECT_LE(p.client.ifname.size(), 15u);
  EXPECT_GT(p.server.ifindex, 0);
  EXPECT_EQ(p.server.mac.size(), 17u);

  auto addrs = lab.run(p.server.ns, {"ip", "-o", "addr", "show", "dev", p.server.ifname});
  ASSERT_TRUE(addrs.ok()) << addrs.describe();
  EXPECT_NE(addrs.out.find(p.server.ipv4 + "/30"), std::string::npos) << addrs.out;
  EXPECT_NE(addrs.out.find(p.server.ipv6 + "/64"), std::string::npos) << addrs.out;
  EXPECT_EQ(addrs.out.find("tentative"), std::string::npos) << addrs.out;

  for (const auto& ns : lab.namespaces()) {
    // Only lo and the lab's veths, and no way out: nothing routes to the internet.
    auto links = lab.run(ns, {"ip", "-o", "link", "show"});
    EXPECT_EQ(std::count(links.out.begin(), links.out.end(), '\n'), 2) << links.out;
    EXPECT_FALSE(lab.run(ns, {"ip", "route", "get", "8.8.8.8"}).ok()) << ns;
    EXPECT_FALSE(lab.run(ns, {"ip", "-6", "route", "get", "2001:4860::1"}).ok()) << ns;
  }
  EXPECT_TRUE(lab.run(lab.client_ns(), {"ip", "route", "get", p.server.ipv4}).ok());
  EXPECT_FALSE(host_has_link_with(lab.tag().substr(lab.tag().find('-') + 1)));
}

TEST_F(LabTest, SpoofedIpv4SourcesReachTheServerSocket) {
  Lab lab;
  auto sink = start_sink(lab, 0, {.port = 9000, .seconds = 15, .expect = 1000});
  ASSERT_TRUE(sink) << sink.error().str();
  auto before = lab.server_stats();
  ASSERT_TRUE(before) << before.error().str();

  auto sent =
      send(lab, 0, {.src = "198.18.200.0/24", .sources = 100, .dport = 9000, .count = 1000});
  ASSERT_TRUE(sent) << sent.error().str();
  EXPECT_EQ(sent->sent, 1000u);
  EXPECT_EQ(sent->errors, 0u);

  auto got = finish_sink(*sink, std::chrono::seconds(20));
  ASSERT_TRUE(got) << got.error().str();
  EXPECT_EQ(got->received, 1000u);
  ASSERT_EQ(got->sources.size(), 100u);
  EXPECT_EQ(got->sources.begin()->first, "198.18.200.1");
  for (const auto& [src, n] : got->sources) EXPECT_EQ(n, 10u) << src;

  auto after = lab.server_stats();
  ASSERT_TRUE(after) << after.error().str();
  // At least what was sent, plus at most a few of the kernel's own (MLD reports after link up).
  EXPECT_GE(after->rx_packets - before->rx_packets, 1000u);
  EXPECT_LE(after->rx_packets - before->rx_packets, 1010u);
}

TEST_F(LabTest, SpoofedIpv6SourcesReachTheServerSocket) {
  Lab lab;
  auto sink = start_sink(lab, 0, {.port = 9001, .seconds = 15, .expect = 1000});
  ASSERT_TRUE(sink) << sink.error().str();
  auto before = lab.server_stats();
  ASSERT_TRUE(before) << before.error().str();

  auto sent =
      send(lab, 0, {.src = "2001:db8:c8::/64", .sources = 100, .dport = 9001, .count = 1000});
  ASSERT_TRUE(sent) << sent.error().str();
  EXPECT_EQ(sent->sent, 1000u);

  auto got = finish_sink(*sink, std::chrono::seconds(20));
  ASSERT_TRUE(got) << got.error().str();
  EXPECT_EQ(got->received, 1000u);
  ASSERT_EQ(got->sources.size(), 100u);
  EXPECT_EQ(got->sources.count("2001:db8:c8::64"), 1u);  // the 100th source
  for (const auto& [src, n] : got->sources) EXPECT_EQ(n, 10u) << src;

  auto after = lab.server_stats();
  ASSERT_TRUE(after) << after.error().str();
  // At least what was sent, plus at most a few of the kernel's own (MLD reports after link up).
  EXPECT_GE(after->rx_packets - before->rx_packets, 1000u);
  EXPECT_LE(after->rx_packets - before->rx_packets, 1010u);
}

TEST_F(LabTest, OtherProtocolsAndSizesReachTheServerInterface) {
  Lab lab;
  auto before = lab.server_stats();
  ASSERT_TRUE(before) << before.error().str();
  const std::vector<SendSpec> specs = {
      {.src = "198.18.1.0/24", .sources = 5, .proto = "tcp", .syn = true, .count = 50},
      {.src = "198.18.1.9", .proto = "icmp", .count = 50},
      {.src = "2001:db8:1::/64", .sources = 5, .proto = "tcp", .count = 50},
      {.src = "2001:db8:1::9", .proto = "icmp", .size = 1000, .count = 50},
      {.src = "198.18.1.10", .size = 1514, .count = 50},
      {.src = "198.18.1.11", .vlan = 100, .count = 50},
  };
  for (const auto& spec : specs) {
    auto sent = send(lab, 0, spec);
    ASSERT_TRUE(sent) << spec.src << " " << spec.proto << ": " << sent.error().str();
    EXPECT_EQ(sent->sent, 50u);
  }
  auto after = lab.server_stats();
  ASSERT_TRUE(after) << after.error().str();
  EXPECT_GE(after->rx_packets - before->rx_packets, 50u * specs.size());
  EXPECT_GE(after->rx_bytes - before->rx_bytes, 50u * (1514 + 1000));
}

TEST_F(LabTest, SeveralServersEachGetTheirOwnTraffic) {
  Lab lab(LabOptions{.servers = 3});
  ASSERT_EQ(lab.servers(), 3u);
  std::vector<Process> sinks;
  for (size_t i = 0; i < 3; i++) {
    if (i > 0) {
      EXPECT_NE(lab.pair(i).server.ipv4, lab.pair(0).server.ipv4);
    }
    auto sink = start_sink(lab, i, {.port = 9000, .seconds = 15, .idle_ms = 500});
    ASSERT_TRUE(sink) << sink.error().str();
    sinks.push_back(std::move(*sink));
  }
  for (size_t i = 0; i < 3; i++) {
    auto sent = send(lab, i, {.src = "198.18.7.0/24", .dport = 9000, .count = 100 * (i + 1)});
    ASSERT_TRUE(sent) << sent.error().str();
  }
  for (size_t i = 0; i < 3; i++) {
    auto got = finish_sink(sinks[i], std::chrono::seconds(20));
    ASSERT_TRUE(got) << got.error().str();
    EXPECT_EQ(got->received, 100 * (i + 1)) << "server " << i;
  }
}

TEST_F(LabTest, ScopedNetnsEntersAServerNamespaceAndComesBack) {
  Lab lab;
  const Endpoint& server = lab.pair().server;
  {
    auto in = ScopedNetns::enter(server.ns);
    ASSERT_TRUE(in) << in.error().str();
    EXPECT_EQ(static_cast<int>(if_nametoindex(server.ifname.c_str())), server.ifindex);
  }
  EXPECT_EQ(if_nametoindex(server.ifname.c_str()), 0u);
}

class LabCleanup : public LabTest {};

TEST_F(LabCleanup, DestructorRemovesNamespacesLinksAndProcesses) {
  std::vector<std::string> names;
  std::string suffix;
  pid_t stray_pid = 0;
  {
    Lab lab(LabOptions{.servers = 2});
    names = lab.namespaces();
    suffix = lab.tag().substr(lab.tag().find('-') + 1);
    // A daemon in its own session, beyond any Process's group: the lab itself must kill it.
    // The shell waits until the daemon leads its own session: the shell's exit kills its group.
    auto stray = lab.exec_in(lab.server_ns(1),
                             "setsid sleep 30 >/dev/null 2>&1 & p=$!; for i in $(seq 1000); do "
                             "[ \"$(cut -d' ' -f6 /proc/$p/stat)\" = $p ] && break; done; echo $p");
    ASSERT_TRUE(stray.ok()) << stray.describe();
    stray_pid = std::stoi(stray.out);
    ASSERT_TRUE(running(stray_pid));
  }
  ASSERT_EQ(names.size(), 3u);
  for (const auto& ns : names) EXPECT_FALSE(ns_exists(ns)) << ns;
  EXPECT_FALSE(host_has_link_with(suffix));
  for (int i = 0; i < 100 && running(stray_pid); i++) usleep(10'000);
  EXPECT_FALSE(running(stray_pid));
}

TEST_F(LabCleanup, FailedAssertionMidTestStillCleansUp) {
  std::vector<std::string> names;
  pid_t sink_pid = 0;
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    [&] {
      Lab lab;
      names = lab.namespaces();
      auto sink = start_sink(lab, 0, {.port = 9000, .seconds = 30});
      ASSERT_TRUE(sink);
      sink_pid = sink->pid();
      ASSERT_TRUE(false) << "a test failing halfway";
    }();
  }
  ASSERT_EQ(failures.size(), 1);
  EXPECT_TRUE(failures.GetTestPartResult(0).fatally_failed());
  ASSERT_FALSE(names.empty());
  for (const auto& ns : names) EXPECT_FALSE(ns_exists(ns)) << ns;
  EXPECT_FALSE(running(sink_pid)) << "the sink outlived its Process";
}

TEST_F(LabCleanup, ExceptionMidTestStillCleansUp) {
  std::vector<std::string> names;
  try {
    Lab lab;
    names = lab.namespaces();
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  ASSERT_FALSE(names.empty());
  for (const auto& ns : names) EXPECT_FALSE(ns_exists(ns)) << ns;
}

TEST_F(LabCleanup, ReapsWhatACrashedRunLeftBehind) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A run that dies without its destructors: the namespaces stay.
    close(fds[0]);
    auto lab = Lab::create({.reap_stale = false});
    std::string names;
    if (lab)
      for (const auto& ns : lab->namespaces()) names += ns + "\n";
    (void)!write(fds[1], names.data(), names.size());
    _exit(lab ? 0 : 1);
  }
  close(fds[1]);
  std::string names;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;) names.append(buf, n);
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  std::vector<std::string> left;
  for (size_t at = 0, nl; (nl = names.find('\n', at)) != std::string::npos; at = nl + 1)
    left.push_back(names.substr(at, nl - at));
  ASSERT_EQ(left.size(), 2u);
  // Another test process may reap them first; either way they must end up gone.
  auto reaped = Lab::reap_stale();
  ASSERT_TRUE(reaped) << reaped.error().str();
  for (const auto& ns : left) EXPECT_FALSE(ns_exists(ns)) << ns;
}

class LabRlsend : public LabTest {
 protected:
  // rlsend from the client towards the server, with the given addresses.
  Output rlsend(const Lab& lab, const std::string& src, const std::string& dst,
                std::vector<std::string> extra = {}) {
    auto argv = rlsend_argv(lab.pair(), {.src = src, .dst = dst, .count = 10});
    argv.insert(argv.end(), extra.begin(), extra.end());
    return lab.run(lab.client_ns(), argv);
  }
};

TEST_F(LabRlsend, RefusesAddressesOutsideTheLabRanges) {
  Lab lab;
  const std::string ok4 = lab.pair().server.ipv4, ok6 = lab.pair().server.ipv6;
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"10.0.0.1", ok4},         {"8.8.8.8", ok4},           {"198.18.0.1", "10.0.0.1"},
      {"198.18.0.1", "8.8.8.8"}, {"2001:4860::1", ok6},      {"2001:db8::1", "2001:4860::1"},
      {"198.16.0.0/14", ok4},    {"198.18.0.0/14", ok4},     {"2001:db8::/31", ok6},
      {"198.20.0.1", ok4},       {"::ffff:198.18.0.1", ok6}, {"192.0.2.9", ok4},
      {"3fff:0:ff::9", ok6},
  };
  for (const auto& [src, dst] : refused) {
    Output out = rlsend(lab, src, dst);
    EXPECT_EQ(out.code, 2) << src << " -> " << dst << ": " << out.describe();
    EXPECT_NE(out.err.find("--"), std::string::npos) << out.err;
  }
  Output out = rlsend(lab, "8.8.8.8", ok4);
  EXPECT_NE(out.err.find("outside the lab ranges"), std::string::npos) << out.err;
}

TEST_F(LabRlsend, RefusesToRunInTheHostNamespace) {
  Lab lab;
  auto argv = rlsend_argv(lab.pair(), {.src = "198.18.0.1", .count = 1});
  // An interface the host namespace has: the refusal must not hinge on a failed lookup.
  auto iface = std::find(argv.begin(), argv.end(), "--iface");
  ASSERT_NE(iface, argv.end());
  iface[1] = "lo";
  Output out = run(argv);
  EXPECT_EQ(out.code, 2) << out.describe();
  EXPECT_NE(out.err.find("lab namespace"), std::string::npos) << out.err;
}

TEST_F(LabRlsend, RefusesUnboundedOrInvalidArguments) {
  Lab lab;
  const std::string dst = lab.pair().server.ipv4;
  const std::vector<std::vector<std::string>> bad = {
      {"--max-seconds", "61"}, {"--max-seconds", "0"}, {"--count", "0"},    {"--count", "-1"},
      {"--sources", "300"},    {"--dport", "65536"},   {"--proto", "sctp"}, {"--syn"},
      {"--vlan", "4095"},      {"--size", "59"},       {"--size", "9000"},  {"--dst-mac", "zz:zz"},
  };
  for (const auto& extra : bad) {
    // The source prefix is a /24, so --sources 300 cannot fit.
    auto argv = rlsend_argv(lab.pair(), {.src = "198.18.9.0/24", .dst = dst, .count = 10});
    argv.insert(argv.end(), extra.begin(), extra.end());
    Output out = lab.run(lab.client_ns(), argv);
    EXPECT_EQ(out.code, 2) << extra[0] << ": " << out.describe();
  }
  // And --count is required: no unbounded default.
  Output out =
      lab.run(lab.client_ns(), {RL_RLSEND_PATH, "--iface", lab.pair().client.ifname, "--dst-mac",
                                lab.pair().server.mac, "--src", "198.18.0.1", "--dst", dst});
  EXPECT_EQ(out.code, 2) << out.describe();
}

TEST_F(LabRlsend, StopsAtMaxSecondsAndPacesToRate) {
  Lab lab;
  auto argv = rlsend_argv(
      lab.pair(), {.src = "198.18.3.1", .count = 1'000'000, .rate = 1000, .max_seconds = 0.5});
  Output out = lab.run(lab.client_ns(), argv);
  EXPECT_EQ(out.code, 3) << out.describe();  // stopped before --count
  auto s = parse_send_summary(out.out);
  ASSERT_TRUE(s) << s.error().str();
  // The pacing shows in the count's upper bound and the paced run's least time; the other
  // bounds leave room for a sender that a busy machine stalls.
  EXPECT_LE(s->seconds, 1.0);
  EXPECT_GE(s->sent, 300u);
  EXPECT_LE(s->sent, 510u);

  auto paced = send(lab, 0, {.src = "198.18.3.1", .count = 200, .rate = 1000});
  ASSERT_TRUE(paced) << paced.error().str();
  EXPECT_EQ(paced->sent, 200u);
  EXPECT_GE(paced->seconds, 0.19);
  EXPECT_LE(paced->seconds, 1.0);
}

}  // namespace
}  // namespace rl::testing
