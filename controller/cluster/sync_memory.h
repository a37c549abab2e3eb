// SPDX-License-Identifier: GPL-2.0-only
// How the sync path's memory is kept between syncs.
#pragma once

namespace rl::cluster {

// A sync of N active keys builds buffers of some tens of bytes per key every interval: the
// grouped batch, hiredis's command, the replies. glibc maps blocks that large with mmap and
// returns freed heap tops to the kernel, so every sync would fault all of its pages in again:
// 40-50 ms of a 100,000-key sync on a VM, a third of its wall time (docs/cluster.md,
// "Measured"). This keeps freed memory in the process instead, at the cost of holding on to
// the largest sync's buffers (a few MB per 100,000 keys). Process-wide: rld calls it when it
// starts syncing.
void keep_sync_buffers_mapped();

}  // namespace rl::cluster
