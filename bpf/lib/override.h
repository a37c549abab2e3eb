/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Runtime overrides (rl_abi.h, rlctl override): the limit a packet's source is judged by within
 * one limit of its rule, when an operator gave that source's prefix another rate.
 *
 * Concurrency. rld is the only writer. It raises a rule's count in rl_override_slots before it
 * inserts an entry and lowers it after it deletes one, so a packet that reads 0 finds no entry
 * of the rule's in the trie to miss. The trie's lookup and update run under RCU: a packet sees
 * either the entry before an update or the one after, whole; an entry replaced while a packet
 * judges by it stays readable until that packet is done. A packet judged by a replaced entry
 * judges by the limit as it was a moment before, which the key's state word admits as it would
 * have then.
 */
#ifndef RL_BPF_OVERRIDE_H
#define RL_BPF_OVERRIDE_H

#include "maps.h"
#include "once.h"
#include "parse.h"
#include "scratch.h"

/* Whether any limit of the rule at stats slot `slot` has overrides: a rule without one never asks
 * the tries. */
static __always_inline int rl_overrides_for(__u32 slot)
{
	__u32 *n = bpf_map_lookup_elem(&rl_override_slots, &slot);
	return n && RL_READ_ONCE(*n);
}

/* The override's copy of `lim` that judges packet p instead, or NULL when none is in force
 * (none, or expired at `now`). An expired entry shadows no shorter one: rld removes it within a
 * second, and until then the policy's limit judges. The key is built in the CPU's scratch, which
 * leaves the stack's room to the calls below (scratch.h). Callers use the copy only for the
 * judgement and let go of it at once, and no flag of the path remembers that the rule has
 * overrides: a pointer that may be another map's value, or a flag branched on again later, makes
 * the verifier walk what follows once per case. */
static __always_inline const struct rl_rule *rl_override_of(const struct rl_rule *lim,
							    const struct rl_pkt *p, __u64 now)
{
	if (!rl_overrides_for(lim->stats_slot))
		return 0;
	__u32 zero = 0;
	struct rl_scratch *sc = bpf_map_lookup_elem(&rl_scratch, &zero);
	if (!sc)
		return 0;
	struct rl_override *ov;
	if (p->family == 4) {
		struct rl_override4_key *k = &sc->override_key.v4;
		k->prefixlen = 64;
		k->limit_id = lim->id;
		__builtin_memcpy(k->addr, p->saddr, 4);
		ov = bpf_map_lookup_elem(&rl_override_v4, k);
	} else {
		struct rl_override6_key *k = &sc->override_key.v6;
		k->prefixlen = 160;
		k->limit_id = lim->id;
		__builtin_memcpy(k->addr, p->saddr, 16);
		ov = bpf_map_lookup_elem(&rl_override_v6, k);
	}
	if (!ov || (ov->expires_ns && ov->expires_ns <= now))
		return 0;
	return &ov->limit;
}

#endif /* RL_BPF_OVERRIDE_H */
