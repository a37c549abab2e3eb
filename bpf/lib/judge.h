/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Judging a packet on a key's slot: the rule's algorithm, its block, and the refund of what a
 * packet took when a later limit refused it.
 */
#ifndef RL_BPF_JUDGE_H
#define RL_BPF_JUDGE_H

#include "algo.h"
#include "key_table.h"

static __always_inline int rl_run_algo(struct rl_slot *s, const struct rl_rule *r, __u64 now,
				       __u64 bytes)
{
	__u64 units = rl_cost_units(r, bytes);
	__u64 idle_at = 0;
	int res;
	if (rl_algo_gcra(r))
		res = rl_gcra(&s->state, r->interval_fp, r->burst_ns, now, units, &idle_at);
	else if (r->algo == RL_ALGO_FIXED_WINDOW)
		res = rl_fixed_window(&s->state, r, now, units, &idle_at);
	else
		res = rl_sliding_window(&s->state, r, now, units, &idle_at);
	if (res == RL_LIMIT_ADMIT)
		rl_slot_idle_raise(s, idle_at);
	return res;
}

/* The state word of slot s, read after a refusal, while s still holds the key with tag `tag`: a
 * key refused while idle (a packet larger than its burst) may lose its way to another key, whose
 * claim resets the word before it writes the new tag. Otherwise the fresh word 0, which refuses
 * only what every word refuses. */
static __always_inline __u64 rl_refused_word(const struct rl_slot *s, __u32 tag)
{
	__u64 word = RL_READ_ONCE(s->state);
	return RL_READ_ONCE(s->tag) == tag ? word : 0;
}

/* Start r's block on slot s when r refused a packet (res); returns res.
 * The block replaces the state with a plain store. A CPU that read the state before it and
 * admits a packet by CAS either lands first (the block then overwrites it: that packet was
 * within the limit when judged) or fails and sees the block. Racing CPUs that both block
 * write nearly the same value; either is a correct block period starting at its packet.
 * When the block ends the key starts fresh (docs/policies.md). */
static __always_inline int rl_block_if_over(struct rl_slot *s, const struct rl_rule *r, __u64 now,
					    int res)
{
	if (res == RL_LIMIT_OVER && r->block_ns) {
		__u64 until = now + r->block_ns;
		RL_WRITE_ONCE(s->state, RL_STATE_BLOCKED | until);
		rl_slot_idle_raise(s, until);
	}
	return res;
}

/* Sliding log (state word and its helpers in abi/rl_limiter_state.h): at most r->limit packets
 * in any window, packets only. The whole log is one word, so the CAS that admits a packet adds
 * its entry and drops the oldest at once: two CPUs admitting on the same key are serialised
 * like the other algorithms, and no window ever holds more than the limit. A global function,
 * verified once, that starts the rule's block itself: every caller of rl_judge calls it instead
 * (rl_judge_call), so that it adds no stack frame below rl_judge's. */
__attribute__((noinline)) int rl_sliding_log(struct rl_slot *s, const struct rl_rule *r, __u64 now)
{
	if (!s || !r)
		return RL_LIMIT_EXHAUSTED;
	int res = RL_LIMIT_EXHAUSTED;
	/* Rolled, and the ticks worked out again in each attempt: the fewer values live across the
	 * attempts, the less the arithmetic spills into the stack its callers leave. */
#pragma clang loop unroll(disable)
	for (int i = 0; i < RL_CAS_RETRIES; i++) {
		__u64 old = RL_READ_ONCE(s->state), st;
		if (rl_state_view(old, now, &st)) {
			res = RL_LIMIT_BLOCKED;
			break;
		}
		__u32 shift = r->cost_shift & 63;
		__u64 ticks = rl_sl_ticks(r->window_ns, shift);
		if (!rl_sl_room(st, r->limit, ticks, now >> shift)) {
			res = RL_LIMIT_OVER;
			break;
		}
		__u64 next = rl_sl_add(st, r->limit, ticks, rl_sl_ticks(now, shift));
		if (__sync_val_compare_and_swap(&s->state, old, next) == old) {
			rl_slot_idle_raise(s, now + r->window_ns + (2ULL << shift));
			return RL_LIMIT_ADMIT;
		}
	}
	return rl_block_if_over(s, r, now, res);
}

/* A global (non-inlined) function: the verifier checks it once, on its own, instead of once per
 * path that reaches it, which keeps the program well within the verifier's budget of processed
 * instructions. It sees its pointers as possibly NULL memory of the pointee's size, hence the
 * checks. */
__attribute__((noinline)) int rl_judge(struct rl_slot *s, const struct rl_rule *r, __u64 now,
				       __u64 bytes)
{
	if (!s || !r)
		return RL_LIMIT_EXHAUSTED;
	return rl_block_if_over(s, r, now, rl_run_algo(s, r, now, bytes));
}

/* rl_judge, or rl_sliding_log for the algorithm rl_judge leaves to it. */
static __always_inline int rl_judge_call(struct rl_slot *s, const struct rl_rule *r, __u64 now,
					 __u64 bytes)
{
	if (r->algo == RL_ALGO_SLIDING_LOG)
		return rl_sliding_log(s, r, now);
	return rl_judge(s, r, now, bytes);
}

/* Judge a packet of `bytes` at `now` on slot s by r's algorithm, and start r's block when it
 * refuses. Inlined into rl_limit, a global function verified once; stacked limits and the
 * packets rl_judge_known cannot judge alone call the global rl_judge above (rl_judge_call). */
static __always_inline int rl_judge_slot(struct rl_slot *s, const struct rl_rule *r, __u64 now,
					 __u64 bytes)
{
	if (r->algo == RL_ALGO_SLIDING_LOG)
		return rl_sliding_log(s, r, now);
	return rl_block_if_over(s, r, now, rl_run_algo(s, r, now, bytes));
}

/* rl_judge_slot for a packet rl_limit_known judges inline, and for a new-source budget's token:
 * GCRA's first attempt, which decides nearly every packet, without a call; the windows, and a
 * CAS lost to another CPU, call rl_judge (whose loop judges again from a fresh read of the
 * word). */
static __always_inline int rl_judge_known(struct rl_slot *s, const struct rl_rule *r, __u64 now,
					  __u64 bytes)
{
	if (rl_algo_gcra(r)) {
		__u64 idle_at = 0;
		__u64 cost = rl_gcra_cost(rl_cost_units(r, bytes), r->interval_fp);
		int res = rl_gcra_try(&s->state, cost, r->burst_ns, now, &idle_at);
		if (res != RL_LIMIT_EXHAUSTED) {
			if (res == RL_LIMIT_ADMIT)
				rl_slot_idle_raise(s, idle_at);
			return rl_block_if_over(s, r, now, res);
		}
	}
	return rl_judge_call(s, r, now, bytes);
}

/* Give back what an admitted packet of `bytes` took from a key's state, because a later limit of
 * its rule refused the packet (stacked.h). GCRA moves the arrival time back by the packet's cost,
 * a window takes its cost off the current count; a state another packet has since moved on is
 * still right after it (the refund removes exactly this packet's share). A block in force, or a
 * window that has passed, holds nothing to return. A sliding log keeps its entry: which entry
 * was this packet's is not in the word once another CPU added one, and keeping it is strict.
 * CPUs racing on the word retry the CAS; one that runs out of retries leaves the token spent
 * (strict). */
__attribute__((noinline)) int rl_refund(struct rl_slot *s, const struct rl_rule *r, __u64 now,
					__u64 bytes)
{
	if (!s || !r)
		return 0;
	__u64 units = rl_cost_units(r, bytes);
	for (int i = 0; i < RL_CAS_RETRIES; i++) {
		__u64 old = RL_READ_ONCE(s->state), next;
		if ((old & RL_STATE_BLOCKED) || r->algo == RL_ALGO_SLIDING_LOG)
			return 0;
		if (r->algo == RL_ALGO_TOKEN_BUCKET) {
			__u64 cost = rl_gcra_cost(units, r->interval_fp);
			next = old > cost ? old - cost : 0;
		} else if (r->algo == RL_ALGO_FIXED_WINDOW) {
			__u64 widx = (now / r->window_ns) & RL_FW_IDX_MASK;
			if ((old >> RL_FW_COUNT_BITS) != widx || (old & RL_FW_COUNT_MAX) < units)
				return 0;
			next = old - units;
		} else {
			__u64 widx = (now / r->window_ns) & RL_SW_IDX_MASK;
			if ((old >> RL_SW_IDX_SHIFT) != widx || (old & RL_SW_COUNT_MAX) < units)
				return 0;
			next = old - units;
		}
		if (__sync_val_compare_and_swap(&s->state, old, next) == old)
			return 1;
	}
	return 0;
}

#endif /* RL_BPF_JUDGE_H */
