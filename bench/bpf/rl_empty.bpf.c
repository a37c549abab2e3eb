// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The floor for benchmarks: an XDP program that does nothing but pass. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int rl_empty(struct xdp_md *ctx)
{
	return XDP_PASS;
}
