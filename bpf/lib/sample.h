/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Traffic sampling for `rlctl top --by traffic`: 1 in 2^rl_traffic_sample_shift packets of a
 * matched rule is written to rl_samples with the rule's key, its length and its verdict. rld
 * keeps the heavy hitters of the samples (controller/daemon/heavy_hitters.h) and scales them up.
 *
 * Concurrency and cost:
 * - The choice is bpf_get_prandom_u32(): the kernel's per-CPU PRNG state, so a packet that is
 *   not sampled writes no memory another CPU reads (no shared counter, no cache line bouncing).
 *   It ignores the packet's content, so every packet has the same chance 2^-k whatever its
 *   source or rate, and an attacker cannot steer which packets are sampled; the estimates
 *   (samples * 2^k) are unbiased. Only the low k bits are compared.
 * - A sampled packet reserves a record in rl_samples. The reservation takes the ring's producer
 *   lock, shared by all CPUs: that is one lock per 2^k packets, not per packet. A full ring
 *   (rld behind) fails the reservation at once; the sample is counted in RL_GC_TRAFFIC_SHED, a
 *   per-CPU counter, and the packet goes on. Nothing waits for rld.
 * - The record is filled before bpf_ringbuf_submit(), which publishes it with release
 *   ordering; rld (libbpf's consumer) reads it only after seeing it committed.
 * - The submit does not wake rld until RL_SAMPLES_WAKEUP_BYTES wait in the ring. The kernel's
 *   default wakes the reader whenever it had caught up, which a quick reader always has: one
 *   wake-up (an irq_work and a context switch, microseconds) per sample cost 10 to 20 ns per
 *   packet at 1 in 1,024 (docs/benchmarks.md). rld reads the ring on every turn of its loop
 *   anyway, at least once a second, and before it answers `rlctl top --by traffic`.
 * - With the shift 0 (the default) the whole thing is removed by the verifier: a load-time
 *   constant, as rl_trace_decisions is.
 */
#ifndef RL_BPF_SAMPLE_H
#define RL_BPF_SAMPLE_H

#include "maps.h"
#include "stats.h"
#include "rl_abi.h"

/* Load-time setting (rld's traffic_sample_shift): sample 1 in 2^k packets, 0 = off. */
const volatile __u32 rl_traffic_sample_shift = 0;

/* Writes the sample; out of line so that the program's several verdicts share one copy (the
 * verifier checks it once). A global function sees k as possibly NULL. */
__attribute__((noinline)) int rl_traffic_write(const struct rl_key *k, __u32 bytes, __u32 verdict)
{
	if (!k)
		return 0;
	struct rl_traffic_sample *s = bpf_ringbuf_reserve(&rl_samples, sizeof(*s), 0);
	if (!s) {
		rl_count(RL_GC_TRAFFIC_SHED, bytes);
		return 0;
	}
	__builtin_memcpy(&s->key, k, sizeof(s->key));
	s->bytes = bytes;
	s->verdict = (__u8)verdict;
	s->pad[0] = s->pad[1] = s->pad[2] = 0;
	__u64 waiting = bpf_ringbuf_query(&rl_samples, BPF_RB_AVAIL_DATA);
	bpf_ringbuf_submit(s, waiting >= RL_SAMPLES_WAKEUP_BYTES ? BPF_RB_FORCE_WAKEUP
								 : BPF_RB_NO_WAKEUP);
	rl_count(RL_GC_TRAFFIC_SAMPLED, bytes);
	return 1;
}

/* Called with the verdict of a packet that matched a rule, once its key is built; returns the
 * verdict. */
static __always_inline int rl_traffic(const struct rl_key *k, __u64 bytes, int verdict)
{
	if (rl_traffic_sample_shift &&
	    !(bpf_get_prandom_u32() & ((1u << rl_traffic_sample_shift) - 1)))
		rl_traffic_write(k, (__u32)bytes, (__u32)verdict);
	return verdict;
}

#endif /* RL_BPF_SAMPLE_H */
