/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Counters and offender reports. Counters live in per-CPU arrays: each CPU adds to its own copy
 * with plain stores (no atomics on the hot path) and the controller sums the copies when it reads.
 */
#ifndef RL_BPF_STATS_H
#define RL_BPF_STATS_H

#include "maps.h"
#include "limiter.h"
#include "rl_abi.h"

static __always_inline void rl_count(__u32 idx, __u64 bytes)
{
	struct rl_counter *c = bpf_map_lookup_elem(&rl_global_stats, &idx);
	if (c) {
		c->pkts++;
		c->bytes += bytes;
	}
}

static __always_inline struct rl_rule_counters *rl_rule_counters(__u32 stats_slot)
{
	return bpf_map_lookup_elem(&rl_rule_stats, &stats_slot);
}

/* One token from the report budget shared by all keys (RL_REPORTS_PER_SEC, burst as many): a
 * GCRA word like a limiter's, so CPUs reporting at once are serialised by its CAS and never
 * exceed it together. It is taken only by a key that is due a report, a few per second each. */
static __always_inline int rl_report_token(__u64 now)
{
	const __u64 interval = 1000000000ULL / RL_REPORTS_PER_SEC;
	__u32 zero = 0;
	__u64 *tat = bpf_map_lookup_elem(&rl_report_budget, &zero);
	__u64 idle_at;
	return tat && rl_gcra(tat, interval << RL_FP_SHIFT, RL_REPORTS_PER_SEC * interval, now, 1,
			      &idle_at) == RL_LIMIT_ADMIT;
}

/* Count a key's over-limit packet and report the key, at most once per RL_REPORT_INTERVAL_TICKS
 * per key. rl_offenders is indexed by key hash; two keys sharing a slot suppress each other's
 * reports (fewer events, never more). The report CAS lets exactly one CPU report per interval.
 * The drop count is a plain increment: CPUs racing on one slot may lose counts (it ranks
 * offenders; the per-rule counters are the exact figures). */
static __always_inline void rl_offender(const struct rl_rule *r, const struct rl_key *k, __u64 hash,
					__u64 now, int blocked)
{
	__u32 idx = rl_offender_index(hash);
	struct rl_offender *o = bpf_map_lookup_elem(&rl_offenders, &idx);
	if (!o)
		return;
	o->drops++;
	if (!(r->flags & RL_RULE_F_REPORT))
		return;
	__u32 tick = (__u32)(now >> RL_TICK_SHIFT) | 1; /* 0 means never reported */
	__u32 seen = *(volatile __u32 *)&o->last_report_tick;
	if (seen && (__u32)(tick - seen) < RL_REPORT_INTERVAL_TICKS)
		return;
	if (__sync_val_compare_and_swap(&o->last_report_tick, seen, tick) != seen)
		return;
	if (!rl_report_token(now)) {
		rl_count(RL_GC_REPORTS_SHED, 0);
		return;
	}

	struct rl_event *ev = bpf_ringbuf_reserve(&rl_events, sizeof(*ev), 0);
	if (!ev) {
		rl_count(RL_GC_REPORTS_LOST, 0);
		return;
	}
	ev->ts_ns = now;
	ev->key_hash = hash;
	ev->kind = RL_EVENT_OVER_LIMIT;
	ev->rule_id = r->id;
	ev->key_kind = k->kind;
	ev->action = r->action;
	ev->blocked = blocked;
	ev->pad = 0;
	ev->dport = k->dport;
	ev->family = k->family;
	__builtin_memcpy(ev->addr, k->addr, sizeof(ev->addr));
	bpf_ringbuf_submit(ev, 0);
	rl_count(RL_GC_REPORTS, 0);
}

#endif /* RL_BPF_STATS_H */
