// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The floor for any per-source limiter on a real interface: parse Ethernet and IP far enough to
 * read the source address, then drop. Reading the address is the first touch of the frame's
 * headers, the cache miss every limiter pays on live traffic; rl_drop never touches the frame. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Folded from every source read, so the compiler cannot drop the reads. */
__u32 sources_seen = 0;

SEC("xdp")
int rl_src_drop(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u32 src;

	if ((void *)(eth + 1) > end)
		return XDP_DROP;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end)
			return XDP_DROP;
		src = ip->saddr;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end)
			return XDP_DROP;
		src = ip6->saddr.in6_u.u6_addr32[0] ^ ip6->saddr.in6_u.u6_addr32[1] ^
		      ip6->saddr.in6_u.u6_addr32[2] ^ ip6->saddr.in6_u.u6_addr32[3];
	} else {
		return XDP_DROP;
	}
	/* A plain store on this CPU's line; no atomic, no map lookup. */
	sources_seen ^= src;
	return XDP_DROP;
}
