/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * New-source budgets. A rule with RL_RULE_F_NEW_SOURCES lets a key that is not in the table claim
 * a slot only with a token from its budget (rl_new_sources: a token bucket per rule or per source
 * prefix, itself a key in the key table). A new key without a token creates no state: the packet
 * is judged by the rule's own limit on one shared RL_KEY_UNADMITTED key per rule or prefix. So
 * what a flood of never-repeating sources gets past the rule is bounded by the budget plus that
 * one bucket, whatever the number of sources, and known keys keep their own buckets. Such a rule
 * looks its key up without inserting it, so the key table's summary answers first: a new source
 * costs its packet a line of the summary, which stays cached, instead of its set's line from
 * memory.
 *
 * Concurrency. The budget is a GCRA word like any other, so CPUs racing for tokens get exactly
 * what the formula allows. A CPU that takes a token and then finds its key inserted by another
 * CPU (the same new key on two CPUs) has spent a token for nothing: the error is on the strict
 * side. One that finds no way free for its key gives the token back (rl_refund).
 */
#ifndef RL_BPF_BUDGET_H
#define RL_BPF_BUDGET_H

#include "judge.h"

/* What rl_limit saw of a refused packet that its rule's budget (of key: rule) gave no token and
 * the rule's shared key refused, for the CPU's memo (memo.h): both state words, read after their
 * refusals while their ways still held their keys (else 0, which refuses only what every word
 * refuses), and what a token costs the budget. `seen` says the call filled the rest. */
struct rl_unadmitted_seen {
	__u64 budget_word;
	__u64 token_cost; /* GCRA's cost of one token, ns */
	__u64 budget_burst_ns;
	__u64 shared_word;
	__u32 seen;
	__u32 pad;
};

/* One token from the new-source budget nb for the packet's source: the budget is the key
 * (rule, RL_KEY_NEW_BUDGET, source masked to the budget's prefix) judged by nb's token bucket.
 * Returns the budget's slot when it gave a token, so that a token the key could not use goes
 * back (rl_refund); NULL when it gave none. A budget whose set is full gives no token (strict).
 * Every packet of a spoofed flood asks the budget, so it is judged as a known key is, GCRA's
 * first attempt without a call (rl_judge_known): a call's return is dear on CPUs whose returns
 * go through a return thunk. */
static __always_inline struct rl_slot *rl_new_source_token(const struct rl_rule *nb,
							   const struct rl_pkt *p, __u64 now,
							   struct rl_unadmitted_seen *seen)
{
	struct rl_key bk = {};
	rl_key_build(&bk, nb, p);
	bk.kind = RL_KEY_NEW_BUDGET;
	int found;
	__u64 h = rl_key_hash(&bk, rl_hash_seed);
	struct rl_slot *s = rl_key_slot(h, now, 1, &found);
	if (!s)
		return 0;
	int res = rl_judge_known(s, nb, now, 0);
	if (res == RL_LIMIT_ADMIT)
		return s;
	/* One budget for the whole rule: every new source's packet asks this word. */
	if (res == RL_LIMIT_OVER && nb->key_kind == RL_KEY_RULE && rl_algo_gcra(nb)) {
		seen->budget_word = rl_refused_word(s, rl_key_tag(h));
		seen->token_cost = rl_gcra_cost(rl_cost_units(nb, 0), nb->interval_fp);
		seen->budget_burst_ns = nb->burst_ns;
		seen->seen = 1;
	}
	return 0;
}

#endif /* RL_BPF_BUDGET_H */
