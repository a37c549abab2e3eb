// SPDX-License-Identifier: GPL-2.0-only
// The control socket against clients that misbehave: connecting and sending nothing, sending
// half a request, or opening more connections than rld keeps. None of them may hold the event
// loop: rlctl still answers at once, and rld closes what it will not wait for. And the thread
// that answers and the metrics endpoint's run at real-time priority, the rest at the default.
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <sched.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "common/fd.h"
#include "control/client.h"
#include "rld_fixture.h"

namespace rl::testing {
namespace {

using Clock = std::chrono::steady_clock;

UniqueFd connect_to(const std::string& path) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  if (fd && ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) fd.reset();
  return fd;
}

// Milliseconds until rld closes `fd` (recv sees the end), or -1 if it stays open `within_ms`.
double ms_until_closed(int fd, int within_ms) {
  auto t = Clock::now();
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, within_ms) != 1) return -1;
  char c;
  if (::recv(fd, &c, 1, 0) != 0) return -1;
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double status_ms(const std::string& socket) {
  auto t = Clock::now();
  auto got = control::call(socket, control::request("status"), 10'000);
  EXPECT_TRUE(got && got->value("ok", false)) << (got ? got->dump() : got.error().str());
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

TEST_F(RldTest, ClientsThatSendNothingCannotHoldTheControlSocket) {
  start_rld();
  // More silent connections than rld keeps (32), one with half a request among them.
  std::vector<UniqueFd> silent;
  for (int i = 0; i < 40; i++) {
    silent.push_back(connect_to(socket_path()));
    ASSERT_TRUE(silent.back()) << "connection " << i << ": " << std::strerror(errno);
  }
  const char half[] = "{\"v\":1,\"cmd\":\"sta";
  ASSERT_EQ(::send(silent[39].get(), half, sizeof(half) - 1, MSG_NOSIGNAL),
            ssize_t(sizeof(half) - 1));

  // Each of them once held the loop for 5 s, one after the other.
  double ms = status_ms(socket_path());
  std::printf("status with 40 silent clients connected: %.1f ms\n", ms);
  EXPECT_LT(ms, 1000);
  auto out = run({RL_RLCTL_PATH, "-s", socket_path(), "status"}, 3s);
  EXPECT_TRUE(out.ok()) << out.describe();

  // The oldest made way for the newest at once; the rest end at their 5 s deadline.
  EXPECT_GE(ms_until_closed(silent[0].get(), 1000), 0) << "the oldest is closed at once";
  double left = ms_until_closed(silent[39].get(), 8000);
  std::printf("half a request closed after %.0f ms more\n", left);
  EXPECT_GE(left, 0) << "a connection without a whole request is closed at its deadline";
  for (int i = 8; i < 39; i++) EXPECT_GE(ms_until_closed(silent[i].get(), 1000), 0) << i;
  EXPECT_LT(status_ms(socket_path()), 1000);
}

// Scheduling policy and nice value of each of rld's threads (fields 41 and 19 of
// /proc/PID/task/TID/stat), by "TID name".
std::map<std::string, std::pair<int, int>> thread_scheduling(pid_t pid) {
  std::map<std::string, std::pair<int, int>> out;
  for (const auto& t :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream stat(t.path() / "stat");
    std::string text((std::istreambuf_iterator<char>(stat)), {});
    auto close = text.rfind(')');  // the name may hold spaces
    if (close == std::string::npos) continue;
    std::istringstream rest(text.substr(close + 2));
    std::vector<std::string> f{std::istream_iterator<std::string>(rest), {}};
    if (f.size() < 39) continue;
    std::string name = text.substr(text.find('(') + 1, close - text.find('(') - 1);
    // Fields from the third on: policy is field 41, nice field 19.
    out[t.path().filename().string() + " " + name] = {std::stoi(f[38]), std::stoi(f[16])};
  }
  return out;
}

TEST_F(RldTest, TheEventLoopAndTheMetricsThreadsRunAtRealTimePriority) {
  start_rld();
  EXPECT_EQ(ctl({"status"})["event_loop"], "fifo 1");
  auto threads = thread_scheduling(rld_->pid());
  ASSERT_GE(threads.size(), 3u) << "the metrics endpoint and the key counter have threads";
  int metrics = 0;
  for (const auto& [thread, sched] : threads) {
    auto [policy, nice] = sched;
    if (thread.rfind(std::to_string(rld_->pid()) + " ", 0) == 0) {
      EXPECT_EQ(policy, SCHED_FIFO) << thread;
    } else if (thread.find(" civetweb") != std::string::npos) {
      metrics++;
      EXPECT_EQ(policy, SCHED_FIFO) << thread;
    } else {
      EXPECT_EQ(policy, SCHED_OTHER) << thread;
      EXPECT_EQ(nice, 0) << thread;
    }
  }
  EXPECT_GE(metrics, 2) << "the endpoint's listener and workers";
}

}  // namespace
}  // namespace rl::testing
