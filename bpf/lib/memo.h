/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The last match, per CPU. A packet whose parsed headers are those of the packet its CPU judged
 * before, under the same rule set, takes that packet's outcome of the source lists and the rule
 * lookup, and the rule's key and its hash, instead of working them out again: the source filter,
 * the class tables, the rule bitmaps and the hash (docs/benchmarks.md, "The last match"). Packets
 * of a flood from one source, and of one flow on its receive queue, come one after another on a
 * CPU; a flood of sources that never repeat pays the compare of the source address and the store of
 * the new outcome.
 *
 * Exact, not a cache that may be stale: the outcome is a function of the headers (struct rl_pkt,
 * every field, compared whole) and of the generation's tables alone, and rld never writes the
 * tables of the generation in force. It writes the other one and then moves rl_control.active_gen
 * on by one (bpf_datapath.cc), so the epoch, the whole word and not its generation bit, names one
 * rule set: after two switches the same generation holds another. The runtime lists change while
 * packets run, so they are asked before the memo, on every packet; what follows the rule lookup
 * (the rule, its limiter, the key's state) is read anew too.
 *
 * Concurrency: none. The memo is in the CPU's scratch (scratch.h), which one run of the program
 * at a time uses on that CPU, and other CPUs keep their own.
 */
#ifndef RL_BPF_MEMO_H
#define RL_BPF_MEMO_H

#include "parse.h"
#include "rl_abi.h"

/* The outcomes before a rule: the source lists decided, or nothing matched; and no outcome. A
 * rule's outcome is its position (0 to RL_MAX_RULES - 1). */
#define RL_MEMO_UNDECIDED (-1)
#define RL_MEMO_ALLOW	  (-2)
#define RL_MEMO_DENY	  (-3)
#define RL_MEMO_MISS	  (-4) /* rl_memo_outcome: the headers or the rule set differ */

/* What a miss costs is kept small, for a flood of sources that never repeat, where every packet
 * misses. The headers are not copied: the CPU's scratch holds two parsed packets, and each packet
 * parses into the one the memo does not hold (rl_memo_parse_into). The compare's first branch, on
 * the source address, turns such a packet away. Remembering its outcome is four stores. The
 * rule's key and its hash are kept by the first packet that repeats the headers
 * (rl_memo_keep_key), not by every packet that might. */
struct rl_memo {
	__u32 epoch;	   /* rl_control.active_gen when the outcome was found */
	__s32 outcome;	   /* RL_MEMO_* or the rule's position */
	__u32 at;	   /* which of the scratch's two packets holds the headers it is for */
	__u32 keyed;	   /* key and hash hold the rule's key for these headers */
	__u64 hash;	   /* rl_key_hash of key */
	struct rl_key key; /* the rule's key */
	__u32 pad;
};

_Static_assert(sizeof(struct rl_pkt) % 4 == 0, "rl_memo_outcome compares 32-bit words");

/* Which of the two parsed packets the next packet may overwrite. */
static __always_inline __u32 rl_memo_parse_into(const struct rl_memo *m)
{
	return (m->at ^ 1) & 1;
}

/* The memo's outcome if p's headers are q's, the memo's, under the same rule set, else
 * RL_MEMO_MISS (a zeroed memo matches no packet: its family is 0, a parsed packet's 4 or 6). The
 * source address first, with a branch of its own: it differs for every packet of a spoofed
 * flood. */
static __always_inline int rl_memo_outcome(const struct rl_memo *m, __u32 epoch,
					   const struct rl_pkt *p, const struct rl_pkt *q)
{
	const __u32 *a = (const __u32 *)p, *b = (const __u32 *)q;
	if ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]) | (m->epoch ^ epoch))
		return RL_MEMO_MISS;
	__u32 d = 0;
#pragma unroll
	for (int i = 4; i < (int)(sizeof(*p) / 4); i++)
		d |= a[i] ^ b[i];
	return d ? RL_MEMO_MISS : m->outcome;
}

/* Remember the outcome for the headers in the scratch's packet `at`. */
static __always_inline void rl_memo_keep(struct rl_memo *m, __u32 epoch, __u32 at, __s32 outcome)
{
	m->epoch = epoch;
	m->outcome = outcome;
	m->at = at;
	m->keyed = 0;
}

/* Remember the rule's key and its hash for the memo's headers. */
static __always_inline void rl_memo_keep_key(struct rl_memo *m, const struct rl_key *k, __u64 hash)
{
	__builtin_memcpy(&m->key, k, sizeof(*k));
	m->hash = hash;
	m->keyed = 1;
}

#endif /* RL_BPF_MEMO_H */
