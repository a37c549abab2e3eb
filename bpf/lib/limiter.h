/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Per-key limiters and the key table.
 *
 * Concurrency. Any CPU may process any key at any time (RSS spreads one source over several
 * queues when it varies ports; XDP runs on every receive queue in parallel). Each algorithm keeps
 * its whole state in one 64-bit word and changes it only with compare-and-swap from the value it
 * read, so two CPUs that admit packets of the same key at the same instant are serialised by the
 * CAS: one wins, the other re-reads and decides again on the new state. The admitted count is
 * therefore exactly what the formula allows, whatever the interleaving. A CPU that loses the CAS
 * RL_CAS_RETRIES times in a row (another CPU won each time, so the key is making progress) drops
 * the packet and counts RL_GC_CAS_EXHAUSTED: under contention the error is on the strict side.
 *
 * Key table. rl_keys is a set-associative array: the key hash picks a set of RL_WAYS slots and
 * the hash itself is the slot's tag. Claiming a slot for a new key costs one CAS on a cache line
 * the lookup has already read, so a flood of new sources pays little more than known ones.
 * A slot is reusable only once its state is equivalent to a fresh key's (its idle tick passed and
 * no block in force): evicting it loses nothing. When every way of a set is busy the new key is not
 * inserted: it is judged by its rule's overflow bucket for its source prefix (rl_overflow), so a
 * flood can neither push out keys that are being limited nor pass unlimited.
 *
 * New-source budgets. A rule with RL_RULE_F_NEW_SOURCES lets a key that is not in the table claim
 * a slot only with a token from its budget (rl_new_sources: a token bucket per rule or per source
 * prefix, itself a key in this table). A new key without a token creates no state: the packet is
 * judged by the rule's own limit on one shared RL_KEY_UNADMITTED key per rule or prefix. So what a
 * flood of never-repeating sources gets past the rule is bounded by the budget plus that one
 * bucket, whatever the number of sources, and known keys keep their own buckets. Such a rule
 * looks its key up without inserting it, so the key table's summary (rl_abi.h) answers first: a
 * new source costs its packet a line of the summary, which stays cached, instead of its set's
 * line from memory, which was half of the packet's time in such a flood
 * (bench/results/2026-11-24-key-summary-ab.md). The budget is a GCRA word like any other, so CPUs
 * racing for tokens get exactly what the formula allows. A CPU that takes a token and then finds
 * its key inserted by another CPU (the same new key on two CPUs) has spent a token for nothing: the
 * error is on the strict side. One that finds no way free for its key gives the token back
 * (rl_refund).
 */
#ifndef RL_BPF_LIMITER_H
#define RL_BPF_LIMITER_H

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
 * unblock), raised after the reset's stores (bpf_datapath.cc's reset_key, through the skeleton's
 * mmapped .bss), and a new-source budget's token given back (rl_limit), raised after the refund's
 * CAS. A memo's refusal is good only under the count it was read under (memo.h). */
volatile __u32 rl_key_resets = 0;

enum rl_limit_result {
	RL_LIMIT_ADMIT = 0,
	RL_LIMIT_OVER = 1,
	RL_LIMIT_BLOCKED = 2,
	RL_LIMIT_EXHAUSTED = 3,
};

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

/* ---- Algorithms: each returns RL_LIMIT_ADMIT, _OVER, _BLOCKED or _EXHAUSTED, sets *idle_at ----
 */

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

/* idle only steers slot reuse. Two CPUs may store it in either order; the smaller value can let
 * the slot be reclaimed before its state is fresh, which loses at most the debt of that one key
 * (it restarts with a full bucket). Blocks are not lost that way: reuse also checks the state. */
static __always_inline void rl_slot_idle_raise(struct rl_slot *s, __u64 idle_at)
{
	__u32 tick = rl_idle_tick_ceil(idle_at);
	if ((__s32)(tick - RL_READ_ONCE(s->idle)) > 0)
		RL_WRITE_ONCE(s->idle, tick);
}

/* Whether r's limit is judged by GCRA: every algorithm but the two windows. rl_run_algo and
 * rl_judge_known's inlined first attempt both ask this. */
static __always_inline int rl_algo_gcra(const struct rl_rule *r)
{
	return r->algo != RL_ALGO_FIXED_WINDOW && r->algo != RL_ALGO_SLIDING_WINDOW;
}

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
 * frees a way (key_sets.cc). `residue` is the state read before the CAS; a way freed otherwise
 * (by an older rld) is cleared after it, by a CAS that leaves alone a state a packet of the new
 * key has already moved on: that packet was judged on the residue, once. The print follows the
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
	__u32 line = set_idx / RL_SUMMARY_SETS;
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
		__u8 *print = &sum->print[set_idx % RL_SUMMARY_SETS][victim & (RL_WAYS - 1)];
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
		if (sum &&
		    !rl_prints_match(RL_READ_ONCE(*(__u32 *)sum->print[idx % RL_SUMMARY_SETS]),
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
 * here, as rl_set_find's first scan would find it, without the call: a BPF-to-BPF call and its
 * frame were 1% to 7% of the drop path on live frames
 * (bench/results/2026-11-23-live-by-source-line.md). rl_set_find scans again for the rest: a new
 * key, a way being claimed. The summary is not asked here: a key's print follows its tag
 * (rl_way_take), and a lookup here must find a key another CPU has just inserted (a stacked limit's
 * refund of a packet judged on it, a budget's second look). */
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

/* Judge a packet of `bytes` at `now` on slot s by r's algorithm, and start r's block when it
 * refuses. Inlined into rl_limit, a global function verified once; stacked limits, and the
 * packets rl_judge_known cannot judge alone, call the global rl_judge below. */
static __always_inline int rl_judge_slot(struct rl_slot *s, const struct rl_rule *r, __u64 now,
					 __u64 bytes)
{
	return rl_block_if_over(s, r, now, rl_run_algo(s, r, now, bytes));
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
	return rl_judge_slot(s, r, now, bytes);
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
	return rl_judge(s, r, now, bytes);
}

#define RL_LIMIT_SLOW (-1) /* rl_limit_known: rl_limit must judge the packet */

/* Rule r's own limit for a key the table holds (every packet of a source but its first), inlined
 * into the program: RL_LIMIT_* as rl_limit returns, or RL_LIMIT_SLOW when the scan of the key's
 * set does not find it (a new key, a way being claimed, a table rld has not published), and the
 * global rl_limit takes the packet on from info->hash and info->found. On CPUs whose returns go
 * through a return thunk, the call to rl_limit cost about 7 ns a packet
 * (bench/results/2026-11-24-no-call-known-key-ab.md). info->hash is the key's hash on entry: the
 * caller has it from the key it built, or from the CPU's memo of its last match (memo.h). A
 * refusal also reads the key's state word into *seen, after the judgement, for the memo's refusal
 * (memo.h). */
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

/* Give back what an admitted packet of `bytes` took from a key's state, because a later limit of
 * its rule refused the packet (stacked.h). GCRA moves the arrival time back by the packet's cost,
 * a window takes its cost off the current count; a state another packet has since moved on is
 * still right after it (the refund removes exactly this packet's share). A block in force, or a
 * window that has passed, holds nothing to return. CPUs racing on the word retry the CAS; one
 * that runs out of retries leaves the token spent (strict). */
__attribute__((noinline)) int rl_refund(struct rl_slot *s, const struct rl_rule *r, __u64 now,
					__u64 bytes)
{
	if (!s || !r)
		return 0;
	__u64 units = rl_cost_units(r, bytes);
	for (int i = 0; i < RL_CAS_RETRIES; i++) {
		__u64 old = RL_READ_ONCE(s->state), next;
		if (old & RL_STATE_BLOCKED)
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

/* One token from the new-source budget nb for the packet's source: the budget is the key
 * (rule, RL_KEY_NEW_BUDGET, source masked to the budget's prefix) judged by nb's token bucket.
 * Returns the budget's slot when it gave a token, so that a token the key could not use goes
 * back (rl_refund); NULL when it gave none. A budget whose set is full gives no token (strict).
 * Every packet of a spoofed flood asks the budget, so it is judged as a known key is, GCRA's
 * first attempt without a call (rl_judge_known): the call's return was about 6 ns of that
 * packet's path on a CPU whose returns go through a return thunk
 * (bench/results/2026-11-24-bench-xdp-new-source-budget.md). */
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

/* Judge one packet against rule r's own limit; info holds the packet's key (rl_key_build), its
 * hash and its facts, and what rl_limit_known found. A global function: verified once rather
 * than on every path through the parser and the classifier. */
__attribute__((noinline)) int rl_limit(const struct rl_rule *r, const struct rl_pkt *p,
				       struct rl_limit_info *info, struct rl_unadmitted_seen *seen)
{
	if (!r || !p || !info || !seen)
		return RL_LIMIT_EXHAUSTED;
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
