/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Address helpers shared by the classifier and the limiter. */
#ifndef RL_BPF_ADDR_H
#define RL_BPF_ADDR_H

#include <linux/types.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

/* Clear the host bits below `prefix` (addresses in network order, IPv4 in addr[0]). */
static __always_inline void rl_mask_addr(__u32 addr[4], __u8 family, __u32 prefix)
{
	__u32 words = family == 4 ? 1 : 4;
#pragma unroll
	for (__u32 i = 0; i < 4; i++) {
		__u32 bits;
		if (i >= words) {
			addr[i] = 0;
			continue;
		}
		bits = prefix > i * 32 ? prefix - i * 32 : 0;
		if (bits >= 32)
			continue;
		addr[i] &= bits ? bpf_htonl(~0u << (32 - bits)) : 0;
	}
}

#endif /* RL_BPF_ADDR_H */
