// SPDX-License-Identifier: GPL-2.0-only
// jit_lines --prog-id ID: where a loaded program's source lines landed in its JIT image
// (jit_lines.h), for scripts/profile-lines.py to charge perf's samples of a running program to
// source lines: rld's program on live traffic (scripts/bench-live.sh, RL_BENCH_PERF_DIR).
#include <bpf/bpf.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "jit_lines.h"

int main(int argc, char** argv) {
  if (argc != 3 || std::strcmp(argv[1], "--prog-id") != 0) {
    std::fprintf(stderr, "usage: %s --prog-id ID\n", argv[0]);
    return 2;
  }
  char* end = nullptr;
  const unsigned long id = std::strtoul(argv[2], &end, 10);
  if (!*argv[2] || *end || id == 0 || id > UINT32_MAX) {
    std::fprintf(stderr, "jit_lines: %s is not a program id\n", argv[2]);
    return 2;
  }
  const int fd = bpf_prog_get_fd_by_id(static_cast<uint32_t>(id));
  if (fd < 0) {
    std::perror("jit_lines: bpf_prog_get_fd_by_id");
    return 1;
  }
  auto lines = rl::bench::jit_lines(fd);
  ::close(fd);
  if (!lines) {
    std::fprintf(stderr, "jit_lines: %s\n", lines.error().str().c_str());
    return 1;
  }
  std::fputs(rl::bench::format_jit_lines(*lines).c_str(), stdout);
  return 0;
}
