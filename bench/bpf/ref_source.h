/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The reference programs' one read of a frame (rl_src_drop, rl_src_slot): the IP source address,
 * the first touch of the headers that every limiter pays on live traffic. */
#ifndef RL_REF_SOURCE_H
#define RL_REF_SOURCE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

/* The frame's source address as 1 (IPv4) or 4 (IPv6) words, *words set, checked against the
 * frame's end; NULL for a frame without an IPv4 or IPv6 header. */
static __always_inline const __u32 *ref_source(struct xdp_md *ctx, int *words)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > end)
		return 0;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end)
			return 0;
		*words = 1;
		return &ip->saddr;
	}
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end)
			return 0;
		*words = 4;
		return ip6->saddr.in6_u.u6_addr32;
	}
	return 0;
}

#endif /* RL_REF_SOURCE_H */
