// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The floor for drop benchmarks on a real interface: drop everything, as early as XDP can. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp")
int rl_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}
