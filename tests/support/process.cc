// SPDX-License-Identifier: GPL-2.0-only
#include "process.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

namespace rl::testing {
namespace {

std::string read_all(int fd) {
  std::string s;
  if (fd < 0) return s;
  char buf[4096];
  off_t at = 0;
  // pread: the child shares the file offset, so reading from our own position would race it.
  for (ssize_t n; (n = pread(fd, buf, sizeof(buf), at)) > 0; at += n) s.append(buf, n);
  return s;
}

int decode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

std::string Output::describe() const {
  std::string s = "exit " + std::to_string(code);
  if (timed_out) s += " (timed out)";
  if (!err.empty()) s += ", stderr: " + err;
  if (!out.empty()) s += ", stdout: " + out;
  return s;
}

Result<Process> Process::spawn(const std::vector<std::string>& argv,
                               const std::string& stdin_path) {
  if (argv.empty()) return Error{0, "spawn: empty argv"};
  Process p;
  p.out_fd_ = memfd_create("rl-test-out", MFD_CLOEXEC);
  p.err_fd_ = memfd_create("rl-test-err", MFD_CLOEXEC);
  const std::string in = stdin_path.empty() ? "/dev/null" : stdin_path;
  int in_fd = open(in.c_str(), O_RDONLY | O_CLOEXEC);
  if (p.out_fd_ < 0 || p.err_fd_ < 0 || in_fd < 0) {
    Error e = errno_error("spawn " + argv[0] + ": stdin " + in + " or output files");
    if (in_fd >= 0) close(in_fd);
    return e;
  }
  // Everything the child touches is prepared before fork: after it only async-signal-safe calls.
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = getpid();

  pid_t pid = fork();
  if (pid < 0) {
    Error e = errno_error("fork for " + argv[0]);
    close(in_fd);
    return e;
  }
  if (pid == 0) {
    setpgid(0, 0);
    // Dies with the test process even if that one is killed outright.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGPIPE, SIGINT, SIGTERM}) ::signal(sig, SIG_DFL);  // ignored ones survive exec
    dup2(in_fd, 0);
    dup2(p.out_fd_, 1);
    dup2(p.err_fd_, 2);
    execvp(args[0], args.data());
    const char msg[] = "exec failed\n";
    (void)!write(2, msg, sizeof(msg) - 1);
    _exit(127);
  }
  close(in_fd);
  setpgid(pid, pid);  // also here, so the group exists before spawn() returns
  p.pid_ = pid;
  p.pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (p.pidfd_ < 0) return errno_error("pidfd_open");  // p's destructor kills the child
  return p;
}

Process::Process(Process&& o) noexcept { *this = std::move(o); }

Process& Process::operator=(Process&& o) noexcept {
  if (this != &o) {
    kill_and_reap();
    close_fds();
    pid_ = std::exchange(o.pid_, -1);
    pidfd_ = std::exchange(o.pidfd_, -1);
    out_fd_ = std::exchange(o.out_fd_, -1);
    err_fd_ = std::exchange(o.err_fd_, -1);
    status_ = std::exchange(o.status_, std::nullopt);
  }
  return *this;
}

Process::~Process() {
  kill_and_reap();
  close_fds();
}

void Process::close_fds() {
  for (int* fd : {&pidfd_, &out_fd_, &err_fd_})
    if (*fd >= 0) close(std::exchange(*fd, -1));
}

void Process::kill_and_reap() {
  if (pid_ <= 0 || status_) return;
  // The unreaped leader keeps its PID (and so the group id) reserved: no stray kill possible.
  kill(-pid_, SIGKILL);
  int st = 0;
  while (waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
  }
  status_ = st;
}

bool Process::running() {
  if (pid_ <= 0 || status_) return false;
  int st = 0;
  if (waitpid(pid_, &st, WNOHANG) == pid_) {
    status_ = st;
    return false;
  }
  return true;
}

void Process::signal(int sig) const {
  if (pid_ > 0 && !status_) kill(-pid_, sig);
}

Output Process::collect() {
  Output o;
  o.code = status_ ? decode(*status_) : -1;
  o.out = read_all(out_fd_);
  o.err = read_all(err_fd_);
  return o;
}

Output Process::wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return Output{};
  bool timed_out = false;
  if (!status_) {
    pollfd pfd{pidfd_, POLLIN, 0};
    int r;
    while ((r = poll(&pfd, 1, static_cast<int>(timeout.count()))) < 0 && errno == EINTR) {
    }
    timed_out = r == 0;
    kill_and_reap();  // a no-op kill on a finished process: its leader is a zombie until reaped
  }
  Output o = collect();
  o.timed_out = timed_out;
  return o;
}

Output Process::stop(int sig, std::chrono::milliseconds grace) {
  signal(sig);
  Output o = wait(grace);
  o.timed_out = false;  // stopping was the point; a kill after the grace shows in code
  return o;
}

std::string Process::out() const { return read_all(out_fd_); }
std::string Process::err() const { return read_all(err_fd_); }

bool Process::wait_for(std::string_view needle, std::chrono::milliseconds timeout, bool in_stderr) {
  auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if ((in_stderr ? err() : out()).find(needle) != std::string::npos) return true;
    if (!running() || std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(5ms);
  }
}

Output run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
           const std::string& stdin_path) {
  auto p = Process::spawn(argv, stdin_path);
  if (!p) {
    Output o;
    o.err = p.error().str();
    return o;
  }
  return p->wait(timeout);
}

}  // namespace rl::testing
