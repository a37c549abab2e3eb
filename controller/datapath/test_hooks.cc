// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/test_hooks.h"

#include <atomic>

#include "datapath/bpf_datapath.h"
#include "rl_xdp.skel.h"

namespace rl {

Result<DatapathTestHooks::RunResult> DatapathTestHooks::run(const std::vector<uint8_t>& frame,
                                                            uint32_t repeat,
                                                            std::vector<uint8_t>* out) const {
  // Room for what the program may grow the frame to (a SYN-ACK's options).
  std::vector<uint8_t> buf(out ? frame.size() + 256 : 0);
  LIBBPF_OPTS(
      bpf_test_run_opts, opts, .data_in = frame.data(), .data_out = out ? buf.data() : nullptr,
      .data_size_in = static_cast<uint32_t>(frame.size()),
      .data_size_out = static_cast<uint32_t>(buf.size()), .repeat = static_cast<int>(repeat));
  if (bpf_prog_test_run_opts(dp_->prog_fd(), &opts) != 0) return errno_error("BPF_PROG_TEST_RUN");
  if (out) {
    buf.resize(opts.data_size_out);
    *out = std::move(buf);
  }
  return RunResult{opts.retval, opts.duration};
}

void DatapathTestHooks::set_clock(uint64_t ns) const {
  std::atomic_ref<__u64>(dp_->loaded_.skel->bss->rl_clock_override_ns).store(ns);
}

rl_decision DatapathTestHooks::last_decision() const { return dp_->loaded_.skel->bss->rl_trace; }

}  // namespace rl
