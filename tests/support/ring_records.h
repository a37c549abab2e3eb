// SPDX-License-Identifier: GPL-2.0-only
// The records waiting in one of the program's ring buffers (offender reports, traffic samples),
// read the way rld reads them, for the tests that check what the program wrote there.
#pragma once

#include <bpf/libbpf.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

namespace rl::testing {

// Every record in the ring buffer at `fd`, oldest first; the ring is empty afterwards. A record
// shorter than T is not one the program writes, and is left out.
template <class T>
std::vector<T> drain_ring(int fd) {
  std::vector<T> got;
  auto cb = [](void* ctx, void* data, size_t size) -> int {
    if (size >= sizeof(T)) static_cast<std::vector<T>*>(ctx)->push_back(*static_cast<T*>(data));
    return 0;
  };
  ring_buffer* rb = ring_buffer__new(fd, cb, &got, nullptr);
  EXPECT_NE(rb, nullptr);
  if (rb) {
    ring_buffer__consume(rb);
    ring_buffer__free(rb);
  }
  return got;
}

}  // namespace rl::testing
