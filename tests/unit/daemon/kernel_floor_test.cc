// SPDX-License-Identifier: GPL-2.0-only
// The kernel floor rld checks at start: the release's major.minor against 5.14.
#include <gtest/gtest.h>

#include "daemon/service/kernel_floor.h"

namespace rl::daemon {
namespace {

TEST(KernelFloor, ParsesTheLeadingMajorMinor) {
  auto v = parse_kernel_release("6.1.0-18-amd64");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 6);
  EXPECT_EQ(v->minor, 1);
  v = parse_kernel_release("5.14.0-284.11.1.el9_2.x86_64");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 5);
  EXPECT_EQ(v->minor, 14);
  v = parse_kernel_release("5.15");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->minor, 15);
  EXPECT_FALSE(parse_kernel_release(""));
  EXPECT_FALSE(parse_kernel_release("6"));
  EXPECT_FALSE(parse_kernel_release("6."));
  EXPECT_FALSE(parse_kernel_release("linux-6.1"));
}

TEST(KernelFloor, ComparesMinorsAsNumbers) {
  EXPECT_TRUE(check_kernel_release("5.14.0").ok());
  EXPECT_TRUE(check_kernel_release("5.15.0-91-generic").ok());
  EXPECT_TRUE(check_kernel_release("6.0.0").ok()) << "a later major, whatever its minor";
  EXPECT_TRUE(check_kernel_release("6.18.44").ok());
  EXPECT_TRUE(check_kernel_release("10.1").ok());
  EXPECT_FALSE(check_kernel_release("5.13.19").ok());
  EXPECT_FALSE(check_kernel_release("5.4.0-150-generic").ok()) << "5.4 < 5.14, not 5.40";
  EXPECT_FALSE(check_kernel_release("5.12.0").ok());
  EXPECT_FALSE(check_kernel_release("4.19.0-27-amd64").ok());
}

TEST(KernelFloor, TheErrorNamesTheFloorAndTheKernel) {
  auto s = check_kernel_release("5.10.0-28-amd64");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().str(),
            "rl needs Linux 5.14 or later (BPF_PROG_TYPE_SYSCALL); this kernel is 5.10.0-28-amd64");
}

TEST(KernelFloor, AnUnreadableReleaseIsLetThrough) {
  EXPECT_TRUE(check_kernel_release("weird").ok()) << "the load itself then says what is wrong";
}

TEST(KernelFloor, TheRunningKernelPasses) { EXPECT_TRUE(check_kernel_floor().ok()); }

}  // namespace
}  // namespace rl::daemon
