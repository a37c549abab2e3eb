/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The limit algorithms, each on one 64-bit state word (abi/rl_limiter_state.h).
 *
 * Concurrency. Any CPU may process any key at any time (RSS spreads one source over several
 * queues when it varies ports; XDP runs on every receive queue in parallel). Each algorithm
 * changes its word only with compare-and-swap from the value it read, so two CPUs that admit
 * packets of the same key at the same instant are serialised by the CAS: one wins, the other
 * re-reads and decides again on the new state. The admitted count is therefore exactly what the
 * formula allows, whatever the interleaving. A CPU that loses the CAS RL_CAS_RETRIES times in a
 * row (another CPU won each time, so the key is making progress) drops the packet and counts
 * RL_GC_CAS_EXHAUSTED: under contention the error is on the strict side.
 */
#ifndef RL_BPF_ALGO_H
#define RL_BPF_ALGO_H

#include "rl_abi.h"
#include "rl_limiter_state.h"
#include "once.h"

enum rl_limit_result {
	RL_LIMIT_ADMIT = 0,
	RL_LIMIT_OVER = 1,
	RL_LIMIT_BLOCKED = 2,
	RL_LIMIT_EXHAUSTED = 3,
};

/* Each algorithm returns RL_LIMIT_ADMIT, _OVER, _BLOCKED or _EXHAUSTED and sets *idle_at. */

static __always_inline __u64 rl_cost_units(const struct rl_rule *r, __u64 bytes)
{
	if (r->cost_unit == RL_COST_PACKETS)
		return 1;
	if (r->algo == RL_ALGO_TOKEN_BUCKET)
		return bytes;
	return (bytes + (1ULL << r->cost_shift) - 1) >> r->cost_shift;
}

/* The algorithm's view of a state word read at `now`: a block in force returns 1; a block that
 * has ended reads as the fresh state 0. The caller still CASes from the word it read, so a block
 * written by another CPU in between makes the CAS fail and the packet is judged again. */
static __always_inline int rl_state_view(__u64 word, __u64 now, __u64 *st)
{
	*st = (word & RL_STATE_BLOCKED) ? 0 : word;
	return rl_state_blocked(word, now);
}

/* GCRA: state is the theoretical arrival time. A packet of cost c is admitted iff
 * max(tat, now) + c*T - now <= burst*T; then tat' = max(tat, now) + c*T. Over-limit packets do
 * not change the state. Any tat <= now is a full bucket, so the zero state is a fresh key.
 * rl_gcra_judge is that test on a state word, which it does not change: RL_LIMIT_BLOCKED,
 * RL_LIMIT_OVER, or RL_LIMIT_ADMIT with *tat the arrival time the admission leaves; *st is the
 * state the word reads as. rl_gcra_try judges the key's word and moves it on; the memo's refusal
 * (memo.h) judges a word it kept. */
static __always_inline int rl_gcra_judge(__u64 word, __u64 cost, __u64 burst_ns, __u64 now,
					 __u64 *st, __u64 *tat)
{
	if (rl_state_view(word, now, st))
		return RL_LIMIT_BLOCKED;
	__u64 base = *st > now ? *st : now;
	*tat = base + cost;
	return *tat - now > burst_ns ? RL_LIMIT_OVER : RL_LIMIT_ADMIT;
}

/* One attempt: RL_LIMIT_EXHAUSTED when another CPU changed the word between the read and the
 * CAS, and the packet must be judged again on the new word. */
static __always_inline int rl_gcra_try(__u64 *state, __u64 cost, __u64 burst_ns, __u64 now,
				       __u64 *idle_at)
{
	__u64 old = RL_READ_ONCE(*state), st = 0, tat = 0;
	int res = rl_gcra_judge(old, cost, burst_ns, now, &st, &tat);
	if (res == RL_LIMIT_OVER)
		*idle_at = st;
	if (res != RL_LIMIT_ADMIT)
		return res;
	if (__sync_val_compare_and_swap(state, old, tat) == old) {
		*idle_at = tat;
		return RL_LIMIT_ADMIT;
	}
	return RL_LIMIT_EXHAUSTED;
}

/* GCRA's cost of `units`: units * T, T in RL_FP_SHIFT-bit fixed point. */
static __always_inline __u64 rl_gcra_cost(__u64 units, __u64 interval_fp)
{
	return (units * interval_fp) >> RL_FP_SHIFT;
}

static __always_inline int rl_gcra(__u64 *state, __u64 interval_fp, __u64 burst_ns, __u64 now,
				   __u64 units, __u64 *idle_at)
{
	__u64 cost = rl_gcra_cost(units, interval_fp);
	for (int i = 0; i < RL_CAS_RETRIES; i++) {
		int res = rl_gcra_try(state, cost, burst_ns, now, idle_at);
		if (res != RL_LIMIT_EXHAUSTED)
			return res;
	}
	return RL_LIMIT_EXHAUSTED;
}

/* Fixed window (state word in abi/rl_abi.h): a state from another window counts 0. */

static __always_inline int rl_fixed_window(__u64 *state, const struct rl_rule *r, __u64 now,
					   __u64 units, __u64 *idle_at)
{
	__u64 win = now / r->window_ns;
	*idle_at = (win + 1) * r->window_ns;
	for (int i = 0; i < RL_CAS_RETRIES; i++) {
		__u64 old = RL_READ_ONCE(*state), st;
		if (rl_state_view(old, now, &st))
			return RL_LIMIT_BLOCKED;
		__u64 count = rl_fw_count(st, win);
		if (count + units > r->limit)
			return RL_LIMIT_OVER;
		__u64 next = rl_fw_state(win, count + units);
		if (__sync_val_compare_and_swap(state, old, next) == old)
			return RL_LIMIT_ADMIT;
	}
	return RL_LIMIT_EXHAUSTED;
}

/* Sliding window (two weighted windows; state word in abi/rl_abi.h):
 * estimate = previous * (window - elapsed) / window + current, the weight in RL_FP_SHIFT-bit
 * fixed point. The compiler keeps limit within RL_SW_COUNT_MAX, so current never overflows its
 * field. */

static __always_inline int rl_sliding_window(__u64 *state, const struct rl_rule *r, __u64 now,
					     __u64 units, __u64 *idle_at)
{
	__u64 win = now / r->window_ns;
	__u64 elapsed = now - win * r->window_ns;
	__u64 weight = rl_sw_weight(elapsed, r->window_ns);
	*idle_at = (win + 2) * r->window_ns;
	for (int i = 0; i < RL_CAS_RETRIES; i++) {
		__u64 old = RL_READ_ONCE(*state), st;
		if (rl_state_view(old, now, &st))
			return RL_LIMIT_BLOCKED;
		__u64 prev, cur;
		rl_sw_counts(st, win, &prev, &cur);
		__u64 estimate = rl_sw_estimate(prev, cur, weight);
		if (estimate + units > r->limit)
			return RL_LIMIT_OVER;
		__u64 next = rl_sw_state(win, prev, cur + units);
		if (__sync_val_compare_and_swap(state, old, next) == old)
			return RL_LIMIT_ADMIT;
	}
	return RL_LIMIT_EXHAUSTED;
}

/* Whether r's limit is judged by GCRA: every algorithm but the windows, the log and a connection
 * limit (whose keys never reach a slot). rl_run_algo and rl_judge_known's inlined first attempt
 * both ask this. Written as what it is not: the verifier prunes this form's paths better than
 * `algo == RL_ALGO_TOKEN_BUCKET`, which costs it about 20,000 more processed instructions. */
static __always_inline int rl_algo_gcra(const struct rl_rule *r)
{
	return r->algo != RL_ALGO_FIXED_WINDOW && r->algo != RL_ALGO_SLIDING_WINDOW &&
	       r->algo != RL_ALGO_SLIDING_LOG && r->algo != RL_ALGO_CONNECTIONS;
}

#endif /* RL_BPF_ALGO_H */
