/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A rule's own limit for a packet: its key found (or inserted, or refused a slot by a budget) in
 * the key table and judged. The parts live one concern to a header: algo.h (the algorithms),
 * key_table.h (the table), judge.h (a judgement on a slot), budget.h (new-source budgets).
 */
#ifndef RL_BPF_LIMITER_H
#define RL_BPF_LIMITER_H

#include "budget.h"
#include "connections.h"

/* A packet's facts for rl_limit, and what it tells back. Scalars only: a global function may
 * take a pointer to such a struct (and at most five arguments). */
struct rl_limit_info {
	struct rl_key key;    /* in: the packet's key (rl_key_build) */
	struct rl_key shared; /* RL_KEY_UNADMITTED: the key that judged an unadmitted packet */
	__u64 now;	      /* in */
	__u64 bytes;	      /* in */
	__u32 ridx;	      /* in: the rule's index in rl_rules */
	__u32 inserted;
	__u64 hash; /* in: rl_key_hash of key; out: of the key whose state judged the packet */
	__u32 overflow;
	__u32 unadmitted;
	__s32 found; /* rl_limit_known's lookup, for rl_limit: RL_SET_UNSEEN or RL_SET_FULL */
};

#define RL_LIMIT_SLOW (-1) /* rl_limit_known: rl_limit must judge the packet */

/* Rule r's own limit for a key the table holds (every packet of a source but its first), inlined
 * into the program: RL_LIMIT_* as rl_limit returns, or RL_LIMIT_SLOW when the scan of the key's
 * set does not find it (a new key, a way being claimed, a table rld has not published), and the
 * global rl_limit takes the packet on from info->hash and info->found: the known key's packet
 * makes no call, which is dear on CPUs whose returns go through a return thunk.
 * info->hash is the key's hash on entry: the caller has it from the key it built, or from the
 * CPU's memo of its last match (memo.h). A refusal also reads the key's state word into *seen,
 * after the judgement, for the memo's refusal (memo.h). */
static __always_inline int rl_limit_known(const struct rl_rule *r, struct rl_limit_info *info,
					  __u64 *seen)
{
	__u64 h = info->hash;
	__u32 set_idx = 0, tag = 0;
	int found;
	struct rl_set *set =
	    rl_key_set(h, r->flags & RL_RULE_F_NEW_SOURCES, &set_idx, &tag, &found);
	info->found = found;
	if (!set)
		return RL_LIMIT_SLOW;
	int w = rl_set_scan(set, tag);
	if (w < 0)
		return RL_LIMIT_SLOW;
	struct rl_slot *s = &set->way[w & (RL_WAYS - 1)];
	int res = rl_judge_known(s, r, info->now, info->bytes);
	if (res == RL_LIMIT_OVER || res == RL_LIMIT_BLOCKED)
		*seen = rl_refused_word(s, tag);
	return res;
}

/* Judge one packet against rule r's own limit; info holds the packet's key (rl_key_build), its
 * hash and its facts, and what rl_limit_known found. A global function: verified once rather
 * than on every path through the parser and the classifier. */
__attribute__((noinline)) int rl_limit(const struct rl_rule *r, const struct rl_pkt *p,
				       struct rl_limit_info *info, struct rl_unadmitted_seen *seen)
{
	if (!r || !p || !info || !seen)
		return RL_LIMIT_EXHAUSTED;
	/* A connection limit's key is never in the table, so rl_limit_known sends its SYNs here. */
	if (r->algo == RL_ALGO_CONNECTIONS)
		return rl_conn_judge(r, p, info->hash);
	__u64 now = info->now;
	__u64 h = info->hash;
	int budgeted = r->flags & RL_RULE_F_NEW_SOURCES;
	/* A key the summary ruled out is not looked up again. */
	int found = info->found;
	struct rl_slot *s = 0;
	if (!budgeted || found != RL_SET_UNSEEN)
		s = rl_key_slot(h, now, !budgeted, &found);
	if (!s && budgeted) {
		__u32 ridx = info->ridx;
		const struct rl_rule *nb = bpf_map_lookup_elem(&rl_new_sources, &ridx);
		/* A key the summary rules out takes a token before its set is read, so a set with
		 * no room is found only by the claim: the token then goes back, and the budget
		 * grants exactly what keys took in. */
		struct rl_slot *bs = 0;
		if (nb && (found == RL_SET_ROOM || found == RL_SET_UNSEEN))
			bs = rl_new_source_token(nb, p, now, seen);
		if (bs) {
			s = rl_key_slot(h, now, 1, &found);
			/* The token goes back when it took no key in: no room, or the key was there
			 * (another CPU inserted it since, or the summary did not show it yet). The
			 * count after it tells every CPU's memo that the budget's word went down
			 * (memo.h): rare, one a token that found no way. */
			if ((!s || found < RL_WAYS) && rl_refund(bs, nb, now, 0))
				__sync_fetch_and_add(&rl_key_resets, 1);
		}
		if (!s) {
			/* No token, or no room: the rule's limit on the shared key decides. */
			struct rl_key *sk = &info->shared;
			if (nb)
				rl_key_build(sk, nb, p);
			else
				sk->rule_id = r->id;
			sk->kind = RL_KEY_UNADMITTED;
			/* The prefix length, so that a report of the key says which prefix it is.
			 */
			if (nb && nb->key_kind == RL_KEY_SRC_PREFIX)
				sk->dport = p->family == 4 ? nb->v4_prefix : nb->v6_prefix;
			h = rl_key_hash(sk, rl_hash_seed);
			info->hash = h;
			info->unadmitted = 1;
			s = rl_key_slot(h, now, 1, &found);
		}
	}
	if (!s) {
		s = rl_overflow_slot(r, p);
		if (!s)
			return RL_LIMIT_EXHAUSTED;
		info->overflow = 1;
	}
	info->inserted = found >= RL_WAYS;
	int res = rl_judge_slot(s, r, now, info->bytes);
	/* No token from the budget (seen), and the shared key refused: the memo may keep both. */
	if (seen->seen) {
		if (info->unadmitted && !info->overflow &&
		    (res == RL_LIMIT_OVER || res == RL_LIMIT_BLOCKED))
			seen->shared_word = rl_refused_word(s, rl_key_tag(h));
		else
			seen->seen = 0;
	}
	return res;
}

/* Give rule r's own limit back what it took for a packet that a stacked limit refused: the key
 * that judged it (info->hash) is found again. One judged by an overflow bucket is not given back
 * (strict). */
__attribute__((noinline)) int rl_limit_refund(const struct rl_rule *r, struct rl_limit_info *info)
{
	if (!r || !info || info->overflow)
		return 0;
	int found;
	struct rl_slot *s = rl_key_slot(info->hash, info->now, 0, &found);
	return s ? rl_refund(s, r, info->now, info->bytes) : 0;
}

#endif /* RL_BPF_LIMITER_H */
