/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Stacked limits: a rule with more_limits > 0 admits a packet only if every one of its limits
 * does (a per-source limit and a per-/24 one, say). The rule's own limit is judged first
 * (rl_limit), then limits 1.. from rl_limits, in order; the first refusal stops the walk and every
 * limit that had admitted the packet gets its tokens back (rl_refund), so a dropped packet costs
 * no limit anything.
 *
 * Concurrency. Each limit is judged and committed by its own CAS, exactly as a single limit is:
 * no limit ever admits more than its formula allows, whatever the interleaving. A packet that a
 * later limit refuses holds the earlier limits' tokens from its commit until its refund, a few
 * hundred nanoseconds; a packet of the same key on another CPU that is judged in between sees
 * those tokens taken. The error is therefore on the strict side only, and bounded by the packets
 * in flight on the other CPUs at that instant. With one CPU, or when no refusal overlaps another
 * CPU's packet, the result is exactly that of judging all limits first and committing only if all
 * admit (the reference model's semantics).
 */
#ifndef RL_BPF_STACKED_H
#define RL_BPF_STACKED_H

#include "limiter.h"
#include "override.h"
#include "stats.h"

/* What rl_more_limits needs and tells about a packet (a global function takes 5 arguments). */
struct rl_stack_ctx {
	__u64 now;
	__u64 bytes;
	__u32 ridx;	/* the rule's index in rl_rules */
	__u32 by;	/* out: the refusing limit (1..), 0 if all admitted */
	__u64 hash;	/* out: the refusing limit's key hash */
	__u32 overflow; /* out: the refusing limit's key was judged by an overflow bucket */
	__u32 inserted; /* out: keys inserted */
};

/* Limit i + 1 of the rule at c->ridx: judge the packet by it (claiming its key's slot if new);
 * a refusal reports the limit's key and says how it was judged in c. A global function, like
 * the two below: each is verified once, and each keeps its keys on a stack frame of its own. */
__attribute__((noinline)) int rl_stacked_judge(const struct rl_pkt *p, struct rl_stack_ctx *c,
					       __u32 i)
{
	if (!p || !c)
		return RL_LIMIT_EXHAUSTED;
	__u32 idx = rl_stacked_index(c->ridx, i % (RL_MAX_LIMITS - 1));
	const struct rl_rule *lim = bpf_map_lookup_elem(&rl_limits, &idx);
	__u32 zero = 0;
	struct rl_scratch *sc = bpf_map_lookup_elem(&rl_scratch, &zero);
	if (!lim || !sc)
		return RL_LIMIT_EXHAUSTED;
	/* The key in the CPU's scratch: this frame's room is the judgement's below it. */
	struct rl_key *k = &sc->stacked_key;
	__builtin_memset(k, 0, sizeof(*k));
	rl_key_build(k, lim, p);
	__u64 h = rl_key_hash(k, rl_hash_seed);
	int found, overflow = 0, res;
	if (lim->algo == RL_ALGO_CONNECTIONS) {
		res = rl_conn_judge(lim, p, h);
	} else {
		struct rl_slot *s = rl_key_slot(h, c->now, 1, &found);
		c->inserted += found >= RL_WAYS;
		if (!s) {
			s = rl_overflow_slot(lim, p);
			overflow = 1;
		}
		/* An operator's override of this limit for the source judges the key instead. */
		const struct rl_rule *ov = rl_override_of(lim, p, c->now);
		if (!s)
			res = RL_LIMIT_EXHAUSTED;
		else if (ov) /* its rate may need the precise clock where the rule's does not */
			res = rl_judge_call(s, ov,
					    (ov->flags & RL_RULE_F_PRECISE_CLOCK) ? rl_now_precise()
										  : c->now,
					    c->bytes);
		else
			res = rl_judge_call(s, lim, c->now, c->bytes);
	}
	if (res != RL_LIMIT_ADMIT) {
		c->hash = h;
		c->overflow = overflow;
		rl_offender(lim, k, h, c->now, res == RL_LIMIT_BLOCKED);
	}
	return res;
}

/* Give limit i + 1 back what it took for the packet. Its key is found again, not claimed; a key
 * that was judged by an overflow bucket is not given back (strict). */
__attribute__((noinline)) int rl_stacked_refund(const struct rl_pkt *p, struct rl_stack_ctx *c,
						__u32 i)
{
	if (!p || !c)
		return 0;
	__u32 idx = rl_stacked_index(c->ridx, i % (RL_MAX_LIMITS - 1));
	const struct rl_rule *lim = bpf_map_lookup_elem(&rl_limits, &idx);
	if (!lim)
		return 0;
	struct rl_key k = {};
	rl_key_build(&k, lim, p);
	int found;
	struct rl_slot *s = rl_key_slot(rl_key_hash(&k, rl_hash_seed), c->now, 0, &found);
	if (!s)
		return 0;
	/* The limit that took the tokens: an override replaced since gives back by its successor's
	 * rate, an error of one packet's cost at most. */
	const struct rl_rule *ov = rl_override_of(lim, p, c->now);
	return ov ? rl_refund(s, ov, c->now, c->bytes) : rl_refund(s, lim, c->now, c->bytes);
}

/* Judge limits 1..more_limits of rule r for a packet its own limit admitted. Returns
 * RL_LIMIT_ADMIT, or the first refusal's result after giving back what limits 1.. took (the
 * caller gives back limit 0's). */
__attribute__((noinline)) int rl_more_limits(const struct rl_rule *r, const struct rl_pkt *p,
					     struct rl_stack_ctx *c)
{
	if (!r || !p || !c)
		return RL_LIMIT_EXHAUSTED;
	__u32 n = r->more_limits;
	int res = RL_LIMIT_ADMIT;
	__u32 i;
	for (i = 0; i < RL_MAX_LIMITS - 1 && i < n; i++) {
		res = rl_stacked_judge(p, c, i);
		if (res != RL_LIMIT_ADMIT) {
			c->by = i + 1;
			break;
		}
	}
	if (res != RL_LIMIT_ADMIT)
		for (__u32 j = 0; j < RL_MAX_LIMITS - 1 && j < i; j++)
			rl_stacked_refund(p, c, j);
	return res;
}

/* Count a packet of a rule with stacked limits against the limit that refused it. */
static __always_inline void rl_count_limit(__u32 stats_slot, __u32 limit, __u64 bytes)
{
	__u32 idx = rl_limit_stats_index(stats_slot, limit & (RL_MAX_LIMITS - 1));
	struct rl_counter *c = bpf_map_lookup_elem(&rl_limit_stats, &idx);
	if (c) {
		c->pkts++;
		c->bytes += bytes;
	}
}

#endif /* RL_BPF_STACKED_H */
