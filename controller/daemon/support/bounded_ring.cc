// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/support/bounded_ring.h"

#include <cerrno>

namespace rl::daemon {
namespace {

// Returned by the record callback to end ring_buffer__consume early. libbpf (1.1 and later)
// stores the consumer position past the record first, so nothing is read twice or lost.
constexpr int kBatchFull = -EAGAIN;

}  // namespace

BoundedRing::BoundedRing(int map_fd, uint32_t batch, Handler fn)
    : batch_(batch), fn_(std::move(fn)) {
  rb_ = ring_buffer__new(map_fd, &BoundedRing::on_record, this, nullptr);
}

BoundedRing::~BoundedRing() {
  if (rb_) ring_buffer__free(rb_);
}

int BoundedRing::epoll_fd() const { return rb_ ? ring_buffer__epoll_fd(rb_) : -1; }

bool BoundedRing::poll() {
  if (!rb_) return false;
  taken_ = 0;
  // Without a bound, consume keeps going for as long as the producer keeps up with it, which a
  // flood does.
  return ring_buffer__consume(rb_) == kBatchFull;
}

int BoundedRing::on_record(void* ctx, void* data, size_t size) {
  auto* self = static_cast<BoundedRing*>(ctx);
  self->fn_(data, size);
  return ++self->taken_ >= self->batch_ ? kBatchFull : 0;
}

}  // namespace rl::daemon
