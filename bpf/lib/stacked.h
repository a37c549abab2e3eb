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

/* Judge limits 1..more_limits of rule r for a packet its own limit admitted. Returns
 * RL_LIMIT_ADMIT, or the first refusal's result after giving back what limits 1.. took (the
 * caller gives back limit 0's). A global function: verified once. */
__attribute__((noinline)) int rl_more_limits(const struct rl_rule *r, const struct rl_pkt *p,
					     struct rl_stack_ctx *c)
{
	if (!r || !p || !c)
		return RL_LIMIT_EXHAUSTED;
	struct rl_slot *taken[RL_MAX_LIMITS - 1] = {};
	const struct rl_rule *lims[RL_MAX_LIMITS - 1] = {};
	int res = RL_LIMIT_ADMIT;
#pragma unroll
	for (int i = 0; i < RL_MAX_LIMITS - 1; i++) {
		if (i >= r->more_limits)
			break;
		__u32 idx = c->ridx * (RL_MAX_LIMITS - 1) + i;
		const struct rl_rule *lim = bpf_map_lookup_elem(&rl_limits, &idx);
		if (!lim) {
			res = RL_LIMIT_EXHAUSTED;
			break;
		}
		struct rl_key k = {};
		rl_key_build(&k, lim, p);
		__u64 h = rl_key_hash(&k, rl_hash_seed);
		int found;
		struct rl_slot *s = rl_key_slot(h, c->now, 1, &found);
		c->inserted += found >= RL_WAYS;
		int overflow = 0;
		if (!s) {
			s = rl_overflow_slot(lim, p);
			overflow = 1;
		}
		res = s ? rl_judge(s, lim, c->now, c->bytes) : RL_LIMIT_EXHAUSTED;
		if (res != RL_LIMIT_ADMIT) {
			c->by = i + 1;
			c->hash = h;
			c->overflow = overflow;
			rl_offender(lim, &k, h, c->now, res == RL_LIMIT_BLOCKED);
			break;
		}
		taken[i] = s;
		lims[i] = lim;
	}
	if (res != RL_LIMIT_ADMIT) {
#pragma unroll
		for (int i = 0; i < RL_MAX_LIMITS - 1; i++)
			if (taken[i] && lims[i])
				rl_refund(taken[i], lims[i], c->now, c->bytes);
	}
	return res;
}

/* Count a packet of a rule with stacked limits against the limit that refused it. */
static __always_inline void rl_count_limit(__u32 stats_slot, __u32 limit, __u64 bytes)
{
	__u32 idx =
	    (stats_slot & (RL_MAX_RULE_IDS - 1)) * RL_MAX_LIMITS + (limit & (RL_MAX_LIMITS - 1));
	struct rl_counter *c = bpf_map_lookup_elem(&rl_limit_stats, &idx);
	if (c) {
		c->pkts++;
		c->bytes += bytes;
	}
}

#endif /* RL_BPF_STACKED_H */
