// SPDX-License-Identifier: GPL-2.0-only
#include "cluster/sync_memory.h"

#include <malloc.h>

namespace rl::cluster {

void keep_sync_buffers_mapped() {
  // Fixed thresholds also turn off glibc's own adjustment of them. 32 MiB is the largest
  // mmap threshold glibc accepts on 64-bit; blocks above it are rare enough to map each time.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

}  // namespace rl::cluster
