/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The data path's clocks, both CLOCK_MONOTONIC in ns. The precise clock costs a clock-source
 * read per packet (about 17 ns under kvm-clock); the coarse one is the timekeeper's last tick
 * (jiffy resolution, a few ns). The compiler gives a rule the precise clock only when its bucket
 * holds less than a few jiffies of tokens: there, tokens credited a tick late could be lost
 * against the burst cap. With a larger bucket, reading time up to one tick late only delays
 * credit that is then still there: the long-run rate is exact and never exceeded.
 *
 * Tests set rl_clock_override_ns (through the skeleton's mmapped .bss) to drive limiters
 * deterministically; it is zero in production.
 */
#ifndef RL_BPF_CLOCK_H
#define RL_BPF_CLOCK_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

volatile __u64 rl_clock_override_ns = 0;

static __always_inline __u64 rl_now_precise(void)
{
	__u64 t = rl_clock_override_ns;
	return t ? t : bpf_ktime_get_ns();
}

static __always_inline __u64 rl_now_coarse(void)
{
	__u64 t = rl_clock_override_ns;
	return t ? t : bpf_ktime_get_coarse_ns();
}

#endif /* RL_BPF_CLOCK_H */
