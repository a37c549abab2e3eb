/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Cluster rules: the kernel enforces the fleet's decisions and counts what it admits; rld does
 * the Redis round trips. No packet ever waits for Redis.
 *
 * Counting is in two stages. A key far below its share of the fleet limit is counted in the
 * light stage's sketch (rl_cluster_sketch.h), which rld never reads: it costs Redis nothing. Once
 * its estimate reaches the rule's light threshold, the key is promoted to rl_cluster_admitted and
 * counted exactly from then on.
 *
 * Concurrency. rl_cluster_admitted is per CPU: each CPU adds to its own value with a plain
 * store, and rld sums the values when it reads (a read may miss increments still in flight on
 * another CPU; they are seen at the next read, never lost). Two CPUs may promote one key at
 * once: each inserts its own CPU's value, so both counts are kept (the second insert of a per-CPU
 * hash entry only replaces that CPU's value). The sketch's own races are in its header.
 * rl_cluster_over is written only by rld; a packet reads one entry and compares its expiry.
 */
#ifndef RL_BPF_CLUSTER_H
#define RL_BPF_CLUSTER_H

#include "maps.h"
#include "rl_hash.h"
#include "stats.h"

/* Whether the fleet has used up this key's cluster limit. */
static __always_inline int rl_cluster_over_limit(const struct rl_key *k, __u64 now)
{
	struct rl_cluster_over *o = bpf_map_lookup_elem(&rl_cluster_over, k);
	return o && o->until_ns > now;
}

/* The light stage: what to start the key's exact count at, or 0 while it stays light. The
 * key's count before this packet was at most light - 1 (it would have been promoted otherwise),
 * so the start is at most that plus this packet, and at least the truth (the estimate is). */
static __always_inline __u64 rl_cluster_light_count(const struct rl_rule *r, const struct rl_key *k,
						    __u64 now, __u64 units)
{
	__u32 slot = r->stats_slot;
	struct rl_cluster_light *l = bpf_map_lookup_elem(&rl_cluster_light, &slot);
	if (!l || l->light <= 1 || !l->window_ns)
		return units;
	__u64 h = rl_key_hash(k, ~rl_hash_seed);
	__u32 b = rl_sketch_bucket_of(h);
	struct rl_sketch_bucket *bucket = bpf_map_lookup_elem(&rl_cluster_sketch, &b);
	if (!bucket)
		return units;
	__u32 u = units < RL_SKETCH_SATURATED ? (__u32)units : RL_SKETCH_SATURATED;
	__u32 est = rl_sketch_add(bucket, h, now, l->window_ns, u);
	if (!est)
		return units; /* the bucket is another CPU's for now: count exactly */
	if (est < l->light)
		return 0;
	__u64 most = (__u64)l->light - 1 + units;
	return est < most ? est : most;
}

/* Count an admitted packet of a cluster key; every (share_mask + 1) packets on this CPU, ask rld
 * for an early sync, so a key that races through its share of the fleet limit is reported well
 * before the next timer. */
static __always_inline void rl_cluster_admitted_add(const struct rl_rule *r, const struct rl_key *k,
						    __u64 now, __u64 units)
{
	__u64 *v = bpf_map_lookup_elem(&rl_cluster_admitted, k);
	__u64 total, before;
	if (v) {
		before = *v;
		total = before + units;
		*v = total;
	} else {
		total = rl_cluster_light_count(r, k, now, units);
		if (!total)
			return;
		before = 0;
		bpf_map_update_elem(&rl_cluster_admitted, k, &total, BPF_ANY);
	}
	__u64 step = ~(__u64)r->cluster_share_mask;
	if ((total & step) == (before & step))
		return; /* did not cross a multiple of the share */
	struct rl_event *ev = bpf_ringbuf_reserve(&rl_events, sizeof(*ev), 0);
	if (!ev)
		return;
	__builtin_memset(ev, 0, sizeof(*ev));
	ev->kind = RL_EVENT_CLUSTER_SYNC;
	ev->rule_id = r->id;
	bpf_ringbuf_submit(ev, 0);
}

#endif /* RL_BPF_CLUSTER_H */
