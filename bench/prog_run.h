// SPDX-License-Identifier: GPL-2.0-only
// What the BPF_PROG_TEST_RUN benchmarks measure with: ns per run of a program on one frame, the
// empty XDP program every figure is set beside, and the kernel's own accounting of a map's memory.
#pragma once

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "rl_empty.skel.h"

namespace rl::bench {

// Median over `rounds` of ns per run, `repeat` runs a round. The kernel's own figure
// (o.duration) is a whole number of ns, too coarse next to a 4 ns floor, so the call is timed
// from here: one syscall's overhead spread over millions of runs is below 0.001 ns.
inline double ns_per_run(int prog_fd, const std::vector<uint8_t>& frame, uint32_t repeat,
                         int rounds) {
  std::vector<double> v;
  for (int r = 0; r < rounds; r++) {
    LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame.data(),
                .data_size_in = static_cast<uint32_t>(frame.size()),
                .repeat = static_cast<int>(repeat));
    timespec t0{}, t1{};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (bpf_prog_test_run_opts(prog_fd, &o) != 0) {
      std::perror("BPF_PROG_TEST_RUN");
      std::exit(1);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    v.push_back(((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / repeat);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The empty XDP program (bench/bpf/rl_empty.bpf.c), loaded; the process exits when it cannot be.
class EmptyProgram {
 public:
  EmptyProgram() : skel_(rl_empty__open_and_load()) {
    if (!skel_) {
      std::perror("load rl_empty");
      std::exit(1);
    }
  }
  ~EmptyProgram() { rl_empty__destroy(skel_); }
  EmptyProgram(const EmptyProgram&) = delete;
  EmptyProgram& operator=(const EmptyProgram&) = delete;
  int fd() const { return bpf_program__fd(skel_->progs.rl_empty); }

 private:
  rl_empty* skel_;
};

// The kernel's own accounting of a map's memory (/proc/self/fdinfo "memlock").
inline uint64_t memlock(int fd) {
  FILE* f = std::fopen(("/proc/self/fdinfo/" + std::to_string(fd)).c_str(), "r");
  if (!f) return 0;
  char line[256];
  uint64_t v = 0;
  while (std::fgets(line, sizeof(line), f))
    if (std::sscanf(line, "memlock: %lu", &v) == 1) break;
  std::fclose(f);
  return v;
}

}  // namespace rl::bench
