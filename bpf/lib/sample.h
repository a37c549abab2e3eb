/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Traffic sampling for `rlctl top --by traffic`: on average 1 in 2^rl_traffic_sample_shift packets
 * of a matched rule is written to rl_samples with the rule's key, its length and its verdict. rld
 * keeps the heavy hitters of the samples (heavy_hitters.h) and scales them up. With the shift 0
 * (the default) the verifier removes all of it.
 *
 * Concurrency:
 * - Each CPU counts down its matched packets to its next sample (sample_left in its scratch) and
 *   then draws the next gap at random, uniform over 1 .. 2^(k+1) - 1, as sFlow agents do: no CPU
 *   reads another's count, the random helper runs once per sample, and a sender cannot steer
 *   which packets are sampled, so samples * 2^k stays an unbiased estimate.
 * - A sample takes the ring's producer lock, shared by all CPUs, once per 2^k packets. A full
 *   ring fails at once (RL_GC_TRAFFIC_SHED) and the packet goes on: nothing waits for rld.
 * - The record is filled before bpf_ringbuf_submit(), which publishes it with release ordering.
 *   The submit wakes rld only once RL_SAMPLES_WAKEUP_BYTES wait: a wake-up per sample costs every
 *   packet, and rld reads the ring on every turn of its loop anyway.
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
