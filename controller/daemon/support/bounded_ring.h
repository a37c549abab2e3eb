// SPDX-License-Identifier: GPL-2.0-only
// A BPF ring buffer read in bounded batches: poll() hands at most `batch` records to the
// handler and returns, so that a ring a flood keeps full cannot hold the event loop (it goes
// back to signals and the control socket, then reads on).
#pragma once

#include <bpf/libbpf.h>

#include <cstddef>
#include <cstdint>
#include <functional>

namespace rl::daemon {

class BoundedRing {
 public:
  using Handler = std::function<void(const void* data, size_t size)>;

  BoundedRing(int map_fd, uint32_t batch, Handler fn);
  ~BoundedRing();
  BoundedRing(const BoundedRing&) = delete;
  BoundedRing& operator=(const BoundedRing&) = delete;

  int epoll_fd() const;  // -1 if the ring could not be opened
  // Consumes at most `batch` records; true when it stopped there (more may be waiting).
  bool poll();

 private:
  static int on_record(void* ctx, void* data, size_t size);

  ring_buffer* rb_ = nullptr;
  uint32_t batch_;
  uint32_t taken_ = 0;
  Handler fn_;
};

}  // namespace rl::daemon
