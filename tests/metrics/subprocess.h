// Child processes and scratch directories for tests that drive real programs (promtool, the
// Prometheus server, metrics_fixture_server). Both clean up in their destructors, so a failing
// assertion leaves nothing behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace rl::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
 public:
  static Result<TempDir> create(const std::string& prefix);
  TempDir(TempDir&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  TempDir& operator=(TempDir&&) = delete;
  TempDir(const TempDir&) = delete;
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

class Process {
 public:
  // Runs argv[0] (a path, not looked up in PATH) with stdin from `stdin_path` ("" = /dev/null)
  // and stdout and stderr into `output_path`. The child is killed if this process dies first
  // (PR_SET_PDEATHSIG), so even a test killed by ctest's timeout leaves no server running.
  static Result<Process> spawn(const std::vector<std::string>& argv, const std::string& stdin_path,
                               const std::string& output_path);
  Process(Process&& o) noexcept : pid_(o.pid_), status_(o.status_) { o.pid_ = -1; }
  Process& operator=(Process&&) = delete;
  Process(const Process&) = delete;
  ~Process() { stop(); }

  // The exit status (as from waitpid) if the child ended within `timeout`.
  std::optional<int> wait_for(std::chrono::milliseconds timeout);
  bool running() { return !wait_for(std::chrono::milliseconds(0)); }
  // SIGTERM, up to 5 s to exit, then SIGKILL; always reaps the child.
  void stop();

 private:
  explicit Process(pid_t pid) : pid_(pid) {}
  pid_t pid_;
  std::optional<int> status_;
};

// Runs a program to completion (bounded by `timeout`, then killed) and returns its exit status
// with stdout and stderr.
struct RunResult {
  int exit_code = -1;  // -1 if killed by a signal or the timeout
  std::string output;
};
Result<RunResult> run(const std::vector<std::string>& argv, const std::string& stdin_path,
                      const TempDir& scratch, std::chrono::milliseconds timeout);

std::string read_text(const std::string& path);
Status write_text(const std::string& path, const std::string& text);

// A loopback port that was free a moment ago. Another process can take it before the caller
// binds it, so callers retry on failure.
Result<uint16_t> free_loopback_port();

}  // namespace rl::testing
