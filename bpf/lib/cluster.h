/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Cluster rules: the kernel enforces the fleet's decisions and counts what it admits; rld does
 * the Redis round trips. No packet ever waits for Redis.
 *
 * Concurrency. rl_cluster_admitted is per CPU: each CPU adds to its own value with a plain
 * store, and rld sums the values when it reads (a read may miss increments still in flight on
 * another CPU; they are seen at the next read, never lost). rl_cluster_over is written only by
 * rld; a packet reads one entry and compares its expiry.
 */
#ifndef RL_BPF_CLUSTER_H
#define RL_BPF_CLUSTER_H

#include "maps.h"
#include "stats.h"

/* Whether the fleet has used up this key's cluster limit. */
static __always_inline int rl_cluster_over_limit(const struct rl_key *k, __u64 now)
{
	struct rl_cluster_over *o = bpf_map_lookup_elem(&rl_cluster_over, k);
	return o && o->until_ns > now;
}

/* Count an admitted packet of a cluster key; every (share_mask + 1) packets on this CPU, ask rld
 * for an early sync, so a key that races through its share of the fleet limit is reported well
 * before the next timer. */
static __always_inline void rl_cluster_admitted_add(const struct rl_rule *r, const struct rl_key *k,
						    __u64 units)
{
	__u64 *v = bpf_map_lookup_elem(&rl_cluster_admitted, k);
	__u64 total;
	if (v) {
		total = *v + units;
		*v = total;
	} else {
		total = units;
		bpf_map_update_elem(&rl_cluster_admitted, k, &total, BPF_ANY);
	}
	__u64 step = ~(__u64)r->cluster_share_mask;
	if ((total & step) == ((total - units) & step))
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
