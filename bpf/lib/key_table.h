/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The key table. rl_keys is a set-associative array: the key hash picks a set of RL_WAYS slots
 * and the hash itself is the slot's tag. Claiming a slot for a new key costs one CAS on a cache
 * line the lookup has already read, so a flood of new sources pays little more than known ones.
 * A slot is reusable only once its state is equivalent to a fresh key's (its idle tick passed and
 * no block in force): evicting it loses nothing. When every way of a set is busy the new key is
 * not inserted: it is judged by its rule's overflow bucket for its source prefix (rl_overflow), so
 * a flood can neither push out keys that are being limited nor pass unlimited.
 */
#ifndef RL_BPF_KEY_TABLE_H
#define RL_BPF_KEY_TABLE_H

#include "maps.h"
#include "rl_key.h"
#include "parse.h"
#include "rl_hash.h"
#include "rl_limiter_state.h"
#include "once.h"

/* rl_set_low_bits of the key table's capacity; the loader sets it with the map size. */
const volatile __u32 rl_key_low_bits = RL_KEY_SETS_MIN_LOG2;
/* The key hash's secret (rl_hash.h); the loader sets it with the key table it belongs to. */
const volatile __u64 rl_hash_seed = 0;

/* How many times a key's state word went down other than by time: rld's reset of a key (rlctl
 * unblock), raised after the reset's stores (bpf_key_table.cc's reset_key, through the skeleton's
 * mmapped .bss), and a new-source budget's token given back (rl_limit), raised after the refund's
 * CAS. A memo's refusal is good only under the count it was read under (memo.h). */
volatile __u32 rl_key_resets = 0;

/* ---- Keys ---- */

static __always_inline void rl_key_build(struct rl_key *k, const struct rl_rule *r,
					 const struct rl_pkt *p)
{
	rl_key_fill(k, r, p->family, p->saddr, p->daddr, p->l4_index,
		    p->port_kind == RL_PORT_KIND_TCP || p->port_kind == RL_PORT_KIND_UDP);
}

/* The overflow key: the rule and the source's RL_OVERFLOW_*_PREFIX. */
static __always_inline void rl_overflow_key(struct rl_key *k, const struct rl_rule *r,
					    const struct rl_pkt *p)
{
	k->rule_id = r->id;
	k->kind = RL_KEY_OVERFLOW;
	k->family = p->family;
	__builtin_memcpy(k->addr, p->saddr, sizeof(k->addr));
	rl_mask_addr(k->addr, p->family,
		     p->family == 4 ? RL_OVERFLOW_V4_PREFIX : RL_OVERFLOW_V6_PREFIX);
}

/* idle only steers slot reuse. Two CPUs may store it in either order; the smaller value can let
 * the slot be reclaimed before its state is fresh, which loses at most the debt of that one key
 * (it restarts with a full bucket). Blocks are not lost that way: reuse also checks the state. */
static __always_inline void rl_slot_idle_raise(struct rl_slot *s, __u64 idle_at)
{
	__u32 tick = rl_idle_tick_ceil(idle_at);
	if ((__s32)(tick - RL_READ_ONCE(s->idle)) > 0)
		RL_WRITE_ONCE(s->idle, tick);
}

/* ---- Slots ---- */

/* Take a slot whose tag was `seen` (another key's) for the key with tag t. The slot is reset while
 * its tag is RL_TAG_CLAIMING, so no CPU can use the new key's slot before its state is the fresh
 * zero. A key-table slot also gets its print in the summary (`print`, NULL for an overflow slot)
 * before its tag: a CPU that reads the print before that store judges its packet as one that came
 * just before the key was inserted, which it is. Two CPUs never write one print at once: only the
 * CPU whose CAS took the way does. A free way is taken by rl_way_take instead. */
static __always_inline int rl_slot_claim(struct rl_slot *s, __u32 seen, __u32 t, __u8 *print)
{
	if (__sync_val_compare_and_swap(&s->tag, seen, RL_TAG_CLAIMING) != seen)
		return 0;
	RL_WRITE_ONCE(s->state, 0);
	RL_WRITE_ONCE(s->idle, 0);
	if (print)
		RL_WRITE_ONCE(*print, rl_tag_print(t));
	/* The CAS orders the resets and the print before the tag store (full barrier on every
	 * JIT). */
	__sync_val_compare_and_swap(&s->tag, RL_TAG_CLAIMING, t);
	return 1;
}

/* Take the free way s for the key with tag t, by one CAS of its tag: no phase in which the
 * way is taken but holds no key, so two CPUs inserting one new key cannot both miss it and take
 * two ways, however long either is held up (an interrupt, the hypervisor taking its vCPU). A free
 * way's state is already a fresh key's: it is zero in a new table, and rld zeroes it before it
 * frees a way (key_sets.cc). `residue` is the state read before the CAS; a way freed with its
 * state left (pins of an older layout, controller/datapath/compat.h) is cleared after it, by a
 * CAS that leaves alone a state a packet of the new key has already moved on: that packet was
 * judged on the residue, once. The print follows the
 * tag, so a CPU may see the key before its print: a lookup that screens with the summary then
 * misses it for that moment, and a budget's token taken for it goes back (rl_limit). */
static __always_inline int rl_way_take(struct rl_slot *s, __u32 t, __u8 *print)
{
	__u64 residue = RL_READ_ONCE(s->state);
	if (__sync_val_compare_and_swap(&s->tag, RL_TAG_FREE, t) != RL_TAG_FREE)
		return 0;
	if (residue)
		__sync_val_compare_and_swap(&s->state, residue, 0);
	RL_WRITE_ONCE(*print, rl_tag_print(t));
	return 1;
}

/* The summary line of set set_idx (rl_abi.h). */
static __always_inline struct rl_set_summary *rl_summary_of(__u32 set_idx)
{
	__u32 line = rl_summary_line(set_idx);
	return bpf_map_lookup_elem(&rl_key_summary, &line);
}

/* How many times rl_set_find scans a set while one of its ways is being claimed. Only a way taken
 * from another key (a full set's reusable way) or one rld is moving a key into has that phase; a
 * free way is taken in one step (rl_way_take). A claim is a few stores, but the line they go to
 * bounces between the claiming CPU and the scanning ones; a scan that gives up takes another way,
 * and if the claim was for the same new key, that key has two buckets until one goes idle (at most
 * one bucket's worth lenient, for that key). */
#define RL_CLAIM_SCANS 8

/* rl_set_find's results other than a way index. */
#define RL_SET_ROOM (-1) /* the key is not in the set and a way is free or reusable */
#define RL_SET_FULL (-2) /* the key is not in the set and every way is busy */
#define RL_SET_UNSEEN                                                                              \
	(-3) /* the key is not in the set, told by the summary: the set itself was not read */

/* Find the key with tag `tag` in its set: its way index, or with `claim` a free or reusable way
 * claimed for it (way | RL_WAYS), or RL_SET_ROOM (without `claim`) or RL_SET_FULL. A free way is
 * taken before a reusable one, so a key that went idle keeps its slot while its set has room; of
 * the reusable ways, the one whose key went idle first. A key that was active a moment ago (a
 * known source sending within its limit, whose bucket refills between its packets) thus outlives
 * in its set the keys of a flood that sent once, and keeps its slot when a new-source budget
 * would refuse it a new one. The tags are compared first, on their own: a known key's packet
 * reads no slot's state but its own.
 * Two CPUs inserting the same new key end up in the same slot: both aim at the set's first free
 * way, and the one whose CAS fails finds the key on its next scan. A CPU that sees a way being
 * claimed from another key scans again (up to RL_CLAIM_SCANS), because the claim may be for its
 * own key.
 * A global function, like rl_judge below: verified once, whatever the number of callers. */
__attribute__((noinline)) int rl_set_find(struct rl_set *set, __u32 set_idx, __u32 tag, __u64 now,
					  int claim)
{
	if (!set)
		return RL_SET_FULL;
	/* A claim writes the way's print: without the summary's line, no claim. */
	struct rl_set_summary *sum = claim ? rl_summary_of(set_idx) : 0;
	if (claim && !sum)
		return RL_SET_FULL;
	for (int attempt = 0; attempt < RL_CLAIM_SCANS; attempt++) {
		__u32 tags[RL_WAYS];
#pragma unroll
		for (int w = 0; w < RL_WAYS; w++) {
			tags[w] = RL_READ_ONCE(set->way[w].tag);
			if (tags[w] == tag)
				return w;
		}
		int free = -1, reusable = -1, claiming = 0;
		__u32 reusable_tag = 0, reusable_idle = 0;
#pragma unroll
		for (int w = 0; w < RL_WAYS; w++) {
			struct rl_slot *s = &set->way[w];
			__u32 t = tags[w];
			if (t == RL_TAG_CLAIMING) {
				claiming = 1;
			} else if (t == RL_TAG_FREE) {
				if (free < 0)
					free = w;
			} else {
				/* Idle ticks compare modulo 2^32, as rl_idle_passed does. */
				__u32 idle = RL_READ_ONCE(s->idle);
				if (rl_idle_passed(idle, now) &&
				    !rl_state_blocked(RL_READ_ONCE(s->state), now) &&
				    (reusable < 0 || (__s32)(idle - reusable_idle) < 0)) {
					reusable = w;
					reusable_tag = t;
					reusable_idle = idle;
				}
			}
		}
		if (claiming && attempt < RL_CLAIM_SCANS - 1)
			continue;
		int victim = free >= 0 ? free : reusable;
		if (victim < 0)
			return RL_SET_FULL;
		/* sum is NULL exactly without `claim`; the test on sum itself is what lets the
		 * verifier, which does not link the two, accept the print's store. */
		if (!sum)
			return RL_SET_ROOM;
		/* The claim's CAS expects the tag this scan read: a way another CPU has taken since
		 * fails it, and the packet is judged on the next attempt's scan. */
		struct rl_slot *s = &set->way[victim & (RL_WAYS - 1)];
		__u8 *print = &sum->print[rl_summary_row(set_idx)][victim & (RL_WAYS - 1)];
		if (free >= 0 ? rl_way_take(s, tag, print)
			      : rl_slot_claim(s, reusable_tag, tag, print))
			return victim | RL_WAYS;
	}
	return RL_SET_FULL;
}

/* The set of the key with hash h (*set_idx) and its tag (*tag), or NULL while rld has not
 * published the table. The sets in use are read once per lookup. rld raises the count while
 * packets run on other CPUs; a packet that read the count before a split looks in the set the
 * key had before it, where the key stays until every such packet has finished (key_sets.cc).
 * With `screen` (the first look of a rule with a new-source budget), the summary answers first: a
 * key not in the table (every packet of a flood of new sources under a budget) then costs a line
 * that stays cached, a sixteenth of the table, not the set's own line from memory; *found is
 * then RL_SET_UNSEEN and the set NULL. */
static __always_inline struct rl_set *rl_key_set(__u64 h, int screen, __u32 *set_idx, __u32 *tag,
						 int *found)
{
	__u32 zero = 0;
	struct rl_control *ctl = bpf_map_lookup_elem(&rl_control, &zero);
	*found = RL_SET_FULL;
	if (!ctl)
		return 0;
	*tag = rl_key_tag(h);
	__u32 active = RL_READ_ONCE(ctl->key_sets_active);
	if (!active)
		return 0;
	__u32 idx = rl_set_index(rl_set_wide(*tag, h, rl_key_low_bits), active);
	*set_idx = idx;
	if (screen) {
		struct rl_set_summary *sum = rl_summary_of(idx);
		if (sum && !rl_prints_match(RL_READ_ONCE(*(__u32 *)sum->print[rl_summary_row(idx)]),
					    rl_tag_print(*tag))) {
			*found = RL_SET_UNSEEN;
			return 0;
		}
	}
	return bpf_map_lookup_elem(&rl_keys, &idx);
}

/* The way of the set that holds `tag`, by a scan of the four tags, or -1. */
static __always_inline int rl_set_scan(struct rl_set *set, __u32 tag)
{
#pragma unroll
	for (int w = 0; w < RL_WAYS; w++)
		if (RL_READ_ONCE(set->way[w].tag) == tag)
			return w;
	return -1;
}

/* The slot of the key with hash h in rl_keys, or NULL; *found gets rl_set_find's result.
 * A known key (every packet of a source but its first) is found by a scan of the set's tags
 * here, as rl_set_find's first scan would find it, without the cost of a BPF-to-BPF call and
 * its frame on the hot path. rl_set_find scans again for the rest: a new key, a way being claimed.
 * The summary is not asked here: a key's print follows its tag (rl_way_take), and a lookup here
 * must find a key another CPU has just inserted (a stacked limit's refund of a packet judged on it,
 * a budget's second look). */
static __always_inline struct rl_slot *rl_key_slot(__u64 h, __u64 now, int claim, int *found)
{
	__u32 set_idx = 0, tag = 0;
	struct rl_set *set = rl_key_set(h, 0, &set_idx, &tag, found);
	if (!set)
		return 0;
	int w = rl_set_scan(set, tag);
	if (w >= 0) {
		*found = w;
		return &set->way[w & (RL_WAYS - 1)];
	}
	*found = rl_set_find(set, set_idx, tag, now, claim);
	if (*found < 0)
		return 0;
	return &set->way[*found & (RL_WAYS - 1)];
}

/* The overflow bucket for key k of rule r when k's set is full: the rule and the source's
 * RL_OVERFLOW_*_PREFIX. Two prefixes (or rules) that collide in rl_overflow take the slot from each
 * other; the loser restarts fresh, so collisions err on the lenient side for overflow keys only. */
static __always_inline struct rl_slot *rl_overflow_slot(const struct rl_rule *r,
							const struct rl_pkt *p)
{
	struct rl_key ok = {};
	rl_overflow_key(&ok, r, p);
	__u64 oh = rl_key_hash(&ok, rl_hash_seed);
	__u32 otag = rl_key_tag(oh);
	__u32 oidx = (__u32)oh & (RL_OVERFLOW_SLOTS - 1);
	struct rl_slot *s = bpf_map_lookup_elem(&rl_overflow, &oidx);
	if (!s)
		return 0;
	__u32 t = RL_READ_ONCE(s->tag);
	if (t != otag && (t == RL_TAG_CLAIMING || !rl_slot_claim(s, t, otag, 0)))
		return 0;
	return s;
}

#endif /* RL_BPF_KEY_TABLE_H */
