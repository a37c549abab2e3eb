// SPDX-License-Identifier: GPL-2.0-only
// The oldest kernel rld runs on. At load rld runs a BPF_PROG_TYPE_SYSCALL program (the clock
// probe in bpf/progs/rl_xdp.bpf.c), which Linux 5.14 introduced; on an older kernel the load
// fails deep inside libbpf with an error that names none of this, so rld checks first.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace rl::daemon {

struct KernelVersion {
  int major = 0, minor = 0;
};

inline constexpr KernelVersion kKernelFloor{5, 14};

// "6.1.0-18-amd64", "5.14.0-284.el9.x86_64", "5.15": the leading major.minor; nullopt when the
// release does not start with one.
std::optional<KernelVersion> parse_kernel_release(std::string_view release);

// OK when `release` is at least kKernelFloor; otherwise an error naming the floor, why, and the
// release. A release rld cannot read is let through: the load says what is wrong then.
Status check_kernel_release(std::string_view release);

// check_kernel_release of the running kernel (uname).
Status check_kernel_floor();

}  // namespace rl::daemon
