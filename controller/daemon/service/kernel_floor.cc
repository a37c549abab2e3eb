// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/service/kernel_floor.h"

#include <sys/utsname.h>

#include <charconv>

namespace rl::daemon {
namespace {

// A whole number at the front of `s`, consumed; nullopt without one.
std::optional<int> take_number(std::string_view& s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end == s.data()) return std::nullopt;
  s.remove_prefix(static_cast<size_t>(end - s.data()));
  return v;
}

}  // namespace

std::optional<KernelVersion> parse_kernel_release(std::string_view release) {
  auto major = take_number(release);
  if (!major || release.empty() || release.front() != '.') return std::nullopt;
  release.remove_prefix(1);
  auto minor = take_number(release);
  if (!minor) return std::nullopt;
  return KernelVersion{*major, *minor};
}

Status check_kernel_release(std::string_view release) {
  auto v = parse_kernel_release(release);
  if (!v) return {};
  if (v->major > kKernelFloor.major ||
      (v->major == kKernelFloor.major && v->minor >= kKernelFloor.minor))
    return {};
  return Error{0, "rl needs Linux " + std::to_string(kKernelFloor.major) + "." +
                      std::to_string(kKernelFloor.minor) +
                      " or later (BPF_PROG_TYPE_SYSCALL); this kernel is " + std::string(release)};
}

Status check_kernel_floor() {
  utsname u{};
  if (::uname(&u) != 0) return {};
  return check_kernel_release(u.release);
}

}  // namespace rl::daemon
