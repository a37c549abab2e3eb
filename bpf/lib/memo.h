/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The last match, per CPU. A packet whose parsed headers equal those of the packet its CPU judged
 * before, in every field the rule set in force reads, takes that packet's outcome of the source
 * lists and the rule lookup, and its key and hash, instead of working them out again. Packets of
 * a flood from one source, and of one flow on its receive queue, come one after another on a CPU.
 *
 * Exact, not a cache that may be stale: the outcome depends only on those headers and the
 * generation's tables, and rld never writes the generation in force; it moves
 * rl_control.active_gen on by one per switch, so the epoch (the whole word) names one rule set.
 * The fields compared are struct rl_pkt's first group (the source only under a family with
 * source prefixes) and each field of the second group that a rule of the set names. The runtime
 * lists, and everything after the rule lookup, are read anew for every packet.
 *
 * Concurrency: none. The memo is in the CPU's scratch (scratch.h), used by one run at a time.
 */
#ifndef RL_BPF_MEMO_H
#define RL_BPF_MEMO_H

#include "limiter.h"
#include "parse.h"
#include "rl_abi.h"

/* The outcomes before a rule: the source lists decided, or nothing matched; and no outcome. A
 * rule's outcome is its position (0 to max_rules - 1). */
#define RL_MEMO_UNDECIDED (-1)
#define RL_MEMO_ALLOW	  (-2)
#define RL_MEMO_DENY	  (-3)
#define RL_MEMO_MISS	  (-4) /* rl_memo_outcome: the headers or the rule set differ */

/* What a miss costs is kept small, for a flood of sources that never repeat, where under a family
 * with source prefixes every packet misses. The headers are not copied: the CPU's scratch holds
 * two parsed packets, and each packet parses into the one the memo does not hold
 * (rl_memo_parse_into). The compare's first branch, on the source address, turns such a packet
 * away. Remembering its outcome is four stores. The rule's key and its hash are kept by the first
 * packet that repeats the headers from their source (rl_memo_keep_key), not by every packet that
 * might. */
struct rl_memo {
	__u32 epoch;	   /* rl_control.active_gen when the outcome was found */
	__s32 outcome;	   /* RL_MEMO_* or the rule's position */
	__u32 at;	   /* which of the scratch's two packets holds the headers it is for */
	__u32 keyed;	   /* key and hash hold the rule's key for these headers */
	__u64 hash;	   /* rl_key_hash of key */
	struct rl_key key; /* the rule's key */
	__u32 refused;	   /* state holds the key's state word, read after a refusal */
	__u32 resets;	   /* rl_key_resets, read before that word */
	__u64 state;
};

/* struct rl_pkt's groups (parse.h), in 32-bit words: words 0 to 9 are read by every rule set, 10
 * and 11 field by field, 12 by none. */
#define RL_MEMO_WHOLE_WORDS 10
_Static_assert(__builtin_offsetof(struct rl_pkt, sport) == 4 * RL_MEMO_WHOLE_WORDS,
	       "rl_pkt's first group is words 0 to 9");
_Static_assert(__builtin_offsetof(struct rl_pkt, l3_len) / 4 == 10 &&
		   __builtin_offsetof(struct rl_pkt, tcp_flags) / 4 == 11 &&
		   __builtin_offsetof(struct rl_pkt, tcp_new) / 4 == 11 &&
		   __builtin_offsetof(struct rl_pkt, ttl) / 4 == 11,
	       "rl_pkt's second group is words 10 and 11");
_Static_assert(__builtin_offsetof(struct rl_pkt, l3_off) == 48 && sizeof(struct rl_pkt) == 52,
	       "rl_pkt's third group is word 12");

/* All ones over `len` bytes from byte `at` of a 32-bit word, in memory order. */
static __always_inline __u32 rl_memo_bytes(__u32 at, __u32 len)
{
	__u32 ones = len >= 4 ? ~0u : (1u << (8 * len)) - 1;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return ones << (8 * at);
#else
	return ones << (8 * (4 - at - len));
#endif
}

/* Field f's bytes within its word of struct rl_pkt. */
#define RL_MEMO_FIELD(f)                                                                           \
	rl_memo_bytes(__builtin_offsetof(struct rl_pkt, f) & 3, sizeof(((struct rl_pkt *)0)->f))

/* Which of the two parsed packets the next packet may overwrite. */
static __always_inline __u32 rl_memo_parse_into(const struct rl_memo *m)
{
	return (m->at ^ 1) & 1;
}

/* Whether p and q come from one source address. */
static __always_inline int rl_memo_same_source(const struct rl_pkt *p, const struct rl_pkt *q)
{
	const __u32 *a = (const __u32 *)p, *b = (const __u32 *)q;
	return !((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]));
}

/* The memo's outcome if p's headers are q's, the memo's, in every field the rule set reads, else
 * RL_MEMO_MISS (a zeroed memo matches no packet: its family is 0, a parsed packet's 4 or 6). The
 * source address first, with a branch of its own: it differs for every packet of a spoofed flood,
 * which a family with source prefixes then turns away. Then the rest of the first group, and of
 * the second only the fields the rule set's rules name: gc is the generation's config, the same for
 * every packet of one epoch. */
static __always_inline int rl_memo_outcome(const struct rl_memo *m, __u32 epoch,
					   const struct rl_gen_config *gc, const struct rl_pkt *p,
					   const struct rl_pkt *q)
{
	const __u32 *a = (const __u32 *)p, *b = (const __u32 *)q;
	if (!rl_memo_same_source(p, q) && gc->min_len[(p->family == 6) & 1])
		return RL_MEMO_MISS;
	__u32 d = m->epoch ^ epoch;
#pragma unroll
	for (int i = 4; i < RL_MEMO_WHOLE_WORDS; i++)
		d |= a[i] ^ b[i];
	__u32 dims = gc->dims_used;
	__u32 named10 = (gc->sport_used ? RL_MEMO_FIELD(sport) : 0) |
			((dims & RL_DIM_LENGTH) ? RL_MEMO_FIELD(l3_len) : 0);
	__u32 named11 = ((dims & RL_DIM_TCP_FLAGS) ? RL_MEMO_FIELD(tcp_flags) : 0) |
			((dims & RL_DIM_NEW_CONN) ? RL_MEMO_FIELD(tcp_new) : 0) |
			((dims & RL_DIM_TTL) ? RL_MEMO_FIELD(ttl) : 0);
	d |= ((a[10] ^ b[10]) & named10) | ((a[11] ^ b[11]) & named11);
	return d ? RL_MEMO_MISS : m->outcome;
}

/* Remember the outcome for the headers in the scratch's packet `at`. */
static __always_inline void rl_memo_keep(struct rl_memo *m, __u32 epoch, __u32 at, __s32 outcome)
{
	m->epoch = epoch;
	m->outcome = outcome;
	m->at = at;
	m->keyed = 0;
	m->refused = 0;
}

/* Remember the rule's key and its hash for the memo's headers (a packet from their source). */
static __always_inline void rl_memo_keep_key(struct rl_memo *m, const struct rl_key *k, __u64 hash)
{
	__builtin_memcpy(&m->key, k, sizeof(*k));
	m->hash = hash;
	m->keyed = 1;
	m->refused = 0;
}

/* Rule r's refusal of a packet of `bytes` at `now` on a state word the memo kept, read after a
 * refusal: RL_LIMIT_BLOCKED or RL_LIMIT_OVER, or RL_LIMIT_SLOW where the key's slot must judge
 * (the word admits it, or its refusal would start r's block). */
static __always_inline int rl_memo_judge(__u64 word, const struct rl_rule *r, __u64 now,
					 __u64 bytes)
{
	__u64 cost = rl_gcra_cost(rl_cost_units(r, bytes), r->interval_fp), st, tat;
	int res = rl_gcra_judge(word, cost, r->burst_ns, now, &st, &tat);
	if (res == RL_LIMIT_BLOCKED || (res == RL_LIMIT_OVER && !r->block_ns))
		return res;
	return RL_LIMIT_SLOW;
}

/* The memo's refusal: a refused packet of the memo's key leaves the key's state word, and the
 * packets after it from the memo's source that GCRA would refuse on that word are refused without
 * the key's set, its scan or a judgement (the limiter's part of such a packet's path: a flood from
 * one source, or a few, is nearly all such packets).
 *
 * Exact, because for a rule that keeps it the word only grows: an admission moves the arrival
 * time on (on any CPU), a refusal leaves it, and a block ends only when its time has passed. GCRA
 * refuses on a larger word whatever it refuses on a smaller one, so the key's word now refuses
 * every packet the remembered word refuses. What would lower the word is ruled out:
 * - a rule with stacked limits gives its first limit back what a later one refused (stacked.h): not
 *   remembered; nor the windows, whose count restarts with each window;
 * - a rule with a block writes the block on its first over-limit packet: that packet goes on to the
 *   slot (the block's word is remembered from the next one);
 * - the slot goes to another key only once the key is idle, after its arrival time, which a
 *   remembered OVER never outlives; a packet too large for the burst is refused on any word, and
 *   the word read after such a refusal is kept only while the way still holds the key's tag
 *   (rl_limit_known);
 * - rld's reset of a key (rlctl unblock): it raises rl_key_resets after the reset's stores, and the
 *   memo read the count before the word, so a word read before a reset is never taken after it.
 * A split of the table copies the larger word (key_sets.cc). A packet that reads the count just
 * before rld raises it is refused as it would have been an instant earlier. x86 keeps the two reads
 * in order (loads are not reordered with loads) and the volatile reads keep the compiler from
 * swapping them; a CPU that reorders loads would need a load-acquire of the count. */
static __always_inline int rl_memo_refusal(const struct rl_memo *m, const struct rl_rule *r,
					   __u64 now, __u64 bytes)
{
	if (!m->refused || m->resets != rl_key_resets)
		return RL_LIMIT_SLOW;
	return rl_memo_judge(m->state, r, now, bytes);
}

/* Whether rule r's refusals may be remembered (rl_memo_refusal). */
static __always_inline int rl_memo_refusals_kept(const struct rl_rule *r)
{
	return rl_algo_gcra(r) && !r->more_limits;
}

/* Remember the memo's key's state word `state`, read after a refusal under rl_key_resets
 * `resets`. */
static __always_inline void rl_memo_keep_refusal(struct rl_memo *m, __u64 state, __u32 resets)
{
	m->state = state;
	m->resets = resets;
	m->refused = 1;
}

/* The memo's unadmitted refusal. Under a spoofed flood against a rule with a new-source budget,
 * once the budget is spent, every packet comes from a source the table does not hold (the summary
 * says so), finds no token and is refused by the rule's shared key: a new source each time, so the
 * memo's key and its refusal (above) never repeat, but the budget's key and the shared key do,
 * for a budget of key: rule. The CPU keeps both words, read after such a refusal, and a packet of
 * the same rule set and rule that the summary rules out, and that both words still refuse (no
 * token on the budget's, the packet's own cost on the shared key's), is refused without the two
 * keys' hashes, sets and judgements (the call to rl_limit). Exact, by rl_memo_refusal's argument
 * for each word, with one addition: the budget's word also goes down when a token that found no way
 * is given back, and rl_limit raises rl_key_resets after that refund, as rld after a reset. A
 * budget of key: source_prefix has a word per prefix and is judged each time. */
struct rl_memo_unadmitted {
	__u32 epoch;			 /* rl_control.active_gen when kept */
	__u32 ridx;			 /* the rule's index in rl_rules */
	__u32 resets;			 /* rl_key_resets, read before the words */
	__u32 kept;			 /* the rest holds a refusal */
	struct rl_unadmitted_seen words; /* the budget's and the shared key's */
	__u64 hash;			 /* rl_key_hash of shared */
	struct rl_key shared;		 /* the rule's shared key */
};

/* The memo's unadmitted refusal of a packet the summary ruled out, for rule r (rl_rules[ridx])
 * under epoch: RL_LIMIT_OVER or RL_LIMIT_BLOCKED with info's shared key, its hash and the
 * unadmitted mark filled as rl_limit fills them; or RL_LIMIT_SLOW. */
static __always_inline int rl_memo_unadmitted_refusal(const struct rl_memo_unadmitted *u,
						      __u32 epoch, __u32 ridx,
						      const struct rl_rule *r, __u64 now,
						      __u64 bytes, struct rl_limit_info *info)
{
	if (!u->kept || u->epoch != epoch || u->ridx != ridx || u->resets != rl_key_resets)
		return RL_LIMIT_SLOW;
	__u64 st, tat;
	if (rl_gcra_judge(u->words.budget_word, u->words.token_cost, u->words.budget_burst_ns, now,
			  &st, &tat) == RL_LIMIT_ADMIT)
		return RL_LIMIT_SLOW; /* a token for this source */
	int res = rl_memo_judge(u->words.shared_word, r, now, bytes);
	if (res != RL_LIMIT_SLOW) {
		__builtin_memcpy(&info->shared, &u->shared, sizeof(info->shared));
		info->hash = u->hash;
		info->unadmitted = 1;
	}
	return res;
}

/* Keep what rl_limit saw (u->words, filled) of rule ridx's unadmitted refusal under epoch, read
 * under rl_key_resets `resets`, with info's shared key and its hash. */
static __always_inline void rl_memo_keep_unadmitted(struct rl_memo_unadmitted *u, __u32 epoch,
						    __u32 ridx, __u32 resets,
						    const struct rl_limit_info *info)
{
	u->epoch = epoch;
	u->ridx = ridx;
	u->resets = resets;
	u->hash = info->hash;
	__builtin_memcpy(&u->shared, &info->shared, sizeof(u->shared));
	u->kept = 1;
}

#endif /* RL_BPF_MEMO_H */
