// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The floor for any per-source limiter on a real interface: parse Ethernet and IP far enough to
 * read the source address, then drop. Reading the address is the first touch of the frame's
 * headers, the cache miss every limiter pays on live traffic; rl_drop never touches the frame. */
#include "ref_source.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Folded from every source read, so the compiler cannot drop the reads. */
__u32 sources_seen = 0;

SEC("xdp")
int rl_src_drop(struct xdp_md *ctx)
{
	int words = 0;
	const __u32 *a = ref_source(ctx, &words);

	if (!a)
		return XDP_DROP;
	__u32 src = words == 1 ? a[0] : a[0] ^ a[1] ^ a[2] ^ a[3];
	/* A plain store on this CPU's line; no atomic, no map lookup. */
	sources_seen ^= src;
	return XDP_DROP;
}
