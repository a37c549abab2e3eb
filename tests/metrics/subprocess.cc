#include "subprocess.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace rl::testing {

Result<TempDir> TempDir::create(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/" + prefix + "XXXXXX";
  if (!mkdtemp(tmpl.data())) return errno_error("mkdtemp " + tmpl);
  return TempDir(tmpl);
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

Result<Process> Process::spawn(const std::vector<std::string>& argv, const std::string& stdin_path,
                               const std::string& output_path) {
  if (argv.empty()) return Error{EINVAL, "spawn: empty argv"};
  // Everything the child needs is prepared before fork: between fork and exec only
  // async-signal-safe calls are allowed.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const char* in_path = stdin_path.empty() ? "/dev/null" : stdin_path.c_str();
  int in = open(in_path, O_RDONLY | O_CLOEXEC);
  if (in < 0) return errno_error("open " + std::string(in_path));
  int out = open(output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) {
    int e = errno;
    close(in);
    return errno_error("open " + output_path, e);
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent died before prctl took effect
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    execv(args[0], args.data());
    _exit(127);
  }
  int e = errno;
  close(in);
  close(out);
  if (pid < 0) return errno_error("fork", e);
  return Process(pid);
}

std::optional<int> Process::wait_for(std::chrono::milliseconds timeout) {
  if (status_ || pid_ < 0) return status_;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int st = 0;
    pid_t r = waitpid(pid_, &st, WNOHANG);
    if (r == pid_ || (r < 0 && errno != EINTR)) {
      status_ = r == pid_ ? st : -1;
      return status_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void Process::stop() {
  if (pid_ < 0 || status_) return;
  kill(pid_, SIGTERM);
  if (wait_for(std::chrono::seconds(5))) return;
  kill(pid_, SIGKILL);
  wait_for(std::chrono::seconds(5));
}

Result<RunResult> run(const std::vector<std::string>& argv, const std::string& stdin_path,
                      const TempDir& scratch, std::chrono::milliseconds timeout) {
  std::string out_path = scratch.path() + "/run.out";
  auto p = Process::spawn(argv, stdin_path, out_path);
  if (!p) return p.error();
  RunResult r;
  std::optional<int> st = p->wait_for(timeout);
  if (!st) {
    p->stop();
    r.output = read_text(out_path);
    return Error{ETIMEDOUT, argv[0] + " did not finish: " + r.output};
  }
  if (WIFEXITED(*st)) r.exit_code = WEXITSTATUS(*st);
  r.output = read_text(out_path);
  return r;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Status write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) return Error{0, "cannot write " + path};
  return Status::Ok();
}

Result<uint16_t> free_loopback_port() {
  int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return errno_error("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) < 0 ||
      getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len) < 0) {
    int e = errno;
    close(s);
    return errno_error("bind 127.0.0.1:0", e);
  }
  close(s);
  return uint16_t(ntohs(addr.sin_port));
}

}  // namespace rl::testing
