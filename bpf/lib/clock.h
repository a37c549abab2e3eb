/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The data path's clock: CLOCK_MONOTONIC in ns. Tests set rl_clock_override_ns (through the
 * skeleton's mmapped .bss) to drive limiters deterministically; it is zero in production.
 */
#ifndef RL_BPF_CLOCK_H
#define RL_BPF_CLOCK_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

volatile __u64 rl_clock_override_ns = 0;

static __always_inline __u64 rl_now(void)
{
	__u64 t = rl_clock_override_ns;
	return t ? t : bpf_ktime_get_ns();
}

#endif /* RL_BPF_CLOCK_H */
