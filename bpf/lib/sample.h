/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Traffic sampling for `rlctl top --by traffic`: on average 1 in 2^rl_traffic_sample_shift packets
 * of a matched rule is written to rl_samples with the rule's key, its length and its verdict. rld
 * keeps the heavy hitters of the samples (controller/daemon/heavy_hitters.h) and scales them up.
 *
 * Concurrency and cost:
 * - Which packets: each CPU counts down the matched packets to its next sample (sample_left in
 *   its rl_scratch, a line every packet already writes), and after each sample draws the next
 *   gap at random, uniform over 1 .. 2^(k+1) - 1 (mean 2^k), as sFlow agents draw theirs. So a
 *   packet that is not sampled decrements a word no other CPU reads; bpf_get_prandom_u32() (a
 *   helper call, 14 to 16 ns a packet on a CPU whose returns go through a return thunk,
 *   bench/results/2026-11-24-traffic-sampling.md) runs once per sample, not per packet. The count
 *   ignores the packet's content and the gap is unknown outside the kernel, so a sender cannot
 *   steer which of its packets are sampled, and samples * 2^k stays an unbiased estimate of a key's
 *   packets. CPUs sample their own streams independently: the program runs to completion on its CPU
 *   (scratch.h), so the count is never read and written by two runs at once.
 * - A sampled packet reserves a record in rl_samples. The reservation takes the ring's producer
 *   lock, shared by all CPUs: that is one lock per 2^k packets, not per packet. A full ring
 *   (rld behind) fails the reservation at once; the sample is counted in RL_GC_TRAFFIC_SHED, a
 *   per-CPU counter, and the packet goes on. Nothing waits for rld.
 * - The record is filled before bpf_ringbuf_submit(), which publishes it with release
 *   ordering; rld (libbpf's consumer) reads it only after seeing it committed.
 * - The submit does not wake rld until RL_SAMPLES_WAKEUP_BYTES wait in the ring. The kernel's
 *   default wakes the reader whenever it had caught up, which a quick reader always has: one
 *   wake-up (an irq_work and a context switch, microseconds) per sample cost 10 to 20 ns per
 *   packet at 1 in 1,024 (bench/results/2026-11-24-traffic-sampling.md). rld reads the ring on
 *   every turn of its loop anyway, at least once a second, and before it answers `rlctl top --by
 *   traffic`.
 * - With the shift 0 (the default) the whole thing is removed by the verifier: a load-time
 *   constant, as rl_trace_decisions is.
 */
#ifndef RL_BPF_SAMPLE_H
#define RL_BPF_SAMPLE_H

#include "maps.h"
#include "stats.h"
#include "scratch.h"
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

/* The next gap's count, uniform over 0 .. 2^(k+1) - 2 (the gap is one more), by a multiply
 * rather than a division. */
static __always_inline __u32 rl_sample_gap(void)
{
	__u64 span = (2ULL << rl_traffic_sample_shift) - 1;
	return (__u32)(((__u64)bpf_get_prandom_u32() * span) >> 32);
}

/* Called with the verdict of a packet that matched a rule, once its key is built; returns the
 * verdict. */
static __always_inline int rl_traffic(const struct rl_key *k, __u64 bytes, int verdict)
{
	if (!rl_traffic_sample_shift)
		return verdict;
	__u32 zero = 0;
	struct rl_scratch *sc = bpf_map_lookup_elem(&rl_scratch, &zero);
	if (!sc)
		return verdict;
	__u32 left = sc->sample_left;
	if (left) {
		sc->sample_left = left - 1;
		return verdict;
	}
	sc->sample_left = rl_sample_gap();
	rl_traffic_write(k, (__u32)bytes, (__u32)verdict);
	return verdict;
}

#endif /* RL_BPF_SAMPLE_H */
