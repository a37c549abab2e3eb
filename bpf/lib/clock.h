/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The data path's clocks, both CLOCK_MONOTONIC in ns. The precise clock costs a clock-source
 * read per packet (about 17 ns under kvm-clock); the coarse one is the last tick's time (jiffy
 * resolution). The compiler gives a rule the precise clock only when its bucket holds less than
 * a few jiffies of tokens: there, tokens credited a tick late could be lost against the burst
 * cap. With a larger bucket, reading time up to one tick late only delays credit that is then
 * still there: the long-run rate is exact and never exceeded.
 *
 * The coarse clock is jiffies scaled to ns: bpf_jiffies64() is inlined by the verifier into one
 * load, where bpf_ktime_get_coarse_ns() is a call into the kernel. On CPUs whose returns go
 * through a return thunk (the SRSO and retbleed mitigations of AMD Zen), each call's return
 * mispredicts, and that helper cost 4% to 10% of rl's receive CPU on live frames
 * (bench/results/2026-11-24-call-return-thunk.md). The kernel advances jiffies by whole ticks of
 * CLOCK_MONOTONIC (tick_do_update_jiffies64), so jiffies * tick + base is the time of the last
 * tick's boundary, where bpf_ktime_get_coarse_ns() returns the time that tick was handled: both up
 * to a tick behind real time. The loader measures tick (clock_getres of CLOCK_MONOTONIC_COARSE) and
 * base (the precise time and jiffies read together, rl_xdp.bpf.c's rl_clock) and writes them before
 * the program is attached, so no packet reads them while they change; a program loaded without them
 * (rl_jiffy_ns zero) calls the helper.
 *
 * Tests set rl_clock_override_ns (through the skeleton's mmapped .bss) to drive limiters
 * deterministically; it is zero in production.
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
