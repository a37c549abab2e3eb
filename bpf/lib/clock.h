/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The data path's clocks, both CLOCK_MONOTONIC in ns. The precise clock costs a clock-source
 * read per packet; the coarse one is the last tick's time (jiffy resolution). The compiler gives
 * a rule the precise clock only when its bucket holds less than a few jiffies of tokens: there,
 * tokens credited a tick late could be lost against the burst cap. With a larger bucket, reading
 * time up to one tick late only delays credit that is then still there: the long-run rate is
 * exact and never exceeded.
 *
 * The coarse clock is jiffies scaled to ns: the verifier inlines bpf_jiffies64() into one load,
 * where bpf_ktime_get_coarse_ns() is a call, whose return mispredicts on CPUs with return thunks
 * (SRSO, retbleed). The kernel advances jiffies by whole ticks of CLOCK_MONOTONIC, so
 * jiffies * tick + base is the last tick's boundary. The loader measures tick and base (rl_clock
 * in rl_xdp.bpf.c) and writes them before the program is attached; a program loaded without them
 * (rl_jiffy_ns zero) calls the helper. Tests set rl_clock_override_ns to drive limiters.
 */
#ifndef RL_BPF_CLOCK_H
#define RL_BPF_CLOCK_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

volatile __u64 rl_clock_override_ns = 0;
__u64 rl_jiffy_ns = 0;	      /* one tick, in ns */
__u64 rl_jiffies_base_ns = 0; /* CLOCK_MONOTONIC at jiffies 0, modulo 2^64 */

static __always_inline __u64 rl_now_precise(void)
{
	__u64 t = rl_clock_override_ns;
	return t ? t : bpf_ktime_get_ns();
}

/* The last tick's boundary, or 0 before the loader has measured the tick. */
static __always_inline __u64 rl_jiffies_clock(void)
{
	__u64 tick = rl_jiffy_ns;
	return tick ? bpf_jiffies64() * tick + rl_jiffies_base_ns : 0;
}

static __always_inline __u64 rl_now_coarse(void)
{
	__u64 t = rl_clock_override_ns;
	if (t)
		return t;
	t = rl_jiffies_clock();
	return t ? t : bpf_ktime_get_coarse_ns();
}

#endif /* RL_BPF_CLOCK_H */
