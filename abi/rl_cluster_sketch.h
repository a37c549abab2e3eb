/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The light stage of cluster counting, shared by the XDP program (bpf/lib/cluster.h) and the
 * controller's fake data path, so both count exactly the same way.
 *
 * A key of a cluster rule costs Redis nothing while this node admitted at most light - 1 units of
 * it in the rule's window (rl_cluster_light, written by rld from the fleet size): its packets are
 * counted in a count-min sketch whose memory is fixed, whatever the number of keys. Once a key's
 * estimate reaches light it is promoted to rl_cluster_admitted, counted exactly and synced as
 * before. A flood of new keys therefore fills neither the exact map nor Redis, and cannot evict a
 * key near its limit: such a key is in the exact map, which only keys past light enter.
 *
 * The sketch is one array of 64-byte buckets. A key's hash picks a bucket and two of its cells,
 * so a key costs one cache line. Cells only grow within an epoch, so a key's estimate (the
 * smaller of its two cells) is never below what it admitted in its window: the sketch
 * over-estimates (which promotes a key early, costing one Redis update) and never under-counts.
 *
 * Epochs. A bucket's until is the latest window end (in RL_SKETCH_TIME_SHIFT units of the data
 * path's clock) of any key counted in it since it was last reset; it only grows. A bucket is
 * reset once until has passed: every window counted in it has ended by then, so the reset loses
 * no count of a window in force, whatever the mix of windows of the rules that share it.
 *
 * Concurrency. Every CPU shares the sketch. Cells grow by atomic adds, so no increment is lost.
 * A reset is claimed by the CAS that swaps until for RL_SKETCH_RESETTING; the cells are zeroed
 * and the CAS that stores the new until orders those stores before it. A CPU that meets
 * RL_SKETCH_RESETTING, or loses a CAS on until, does not use the sketch for that packet: it
 * counts the key exactly (rl_sketch_add returns 0), which is never under-counting. A CPU that
 * read until just before another CPU found it passed adds after the reset: that over-counts the
 * new epoch, or, for its own packet at its window's very end, leaves one packet per CPU of the
 * ending window uncounted beyond light - 1.
 */
#ifndef RL_CLUSTER_SKETCH_H
#define RL_CLUSTER_SKETCH_H

#include <linux/types.h>

#ifdef __cplusplus
#define RL_SKETCH_INLINE static inline
#else
#define RL_SKETCH_INLINE static __always_inline
#endif

#define RL_SKETCH_CELLS	       15 /* per bucket, after until: 64 bytes */
#define RL_SKETCH_BUCKETS_LOG2 17 /* 8 MiB for the node, whatever its CPUs */
#define RL_SKETCH_BUCKETS      (1u << RL_SKETCH_BUCKETS_LOG2)
#define RL_SKETCH_TIME_SHIFT   20	   /* until counts 2^20 ns (about 1 ms) */
#define RL_SKETCH_RESETTING    0xffffffffu /* until while one CPU zeroes the bucket */
/* A cell this high is never added to again: it can then never wrap, and any light threshold
 * (below it) promotes its keys. */
#define RL_SKETCH_SATURATED (1u << 31)

/* rl_cluster_light[stats_slot]: a cluster rule's light stage. light 0 or 1 counts every key
 * exactly (the stage is off until rld writes it). */
struct rl_cluster_light {
	__u64 window_ns; /* the cluster limit's window: the sketch's epoch for the rule's keys */
	__u32 light;	 /* a key is promoted once its estimate in the window reaches this */
	__u32 pad;
};

struct rl_sketch_bucket {
	__u32 until;
	__u32 cells[RL_SKETCH_CELLS];
};

#define RL_SKETCH_LOAD(x) (*(volatile __u32 *)&(x))

/* The end of now's window, rounded up to until's units (never RL_SKETCH_RESETTING). */
RL_SKETCH_INLINE __u32 rl_sketch_until(__u64 now, __u64 window_ns)
{
	__u64 end = (now / window_ns + 1) * window_ns;
	__u32 u = (__u32)((end + (1ull << RL_SKETCH_TIME_SHIFT) - 1) >> RL_SKETCH_TIME_SHIFT);
	return u == RL_SKETCH_RESETTING ? 0 : u;
}

/* Whether until (not RL_SKETCH_RESETTING) has passed at now: modulo 2^32, as epochs are far
 * shorter than 2^31 units (about 26 days). */
RL_SKETCH_INLINE int rl_sketch_passed(__u32 until, __u64 now)
{
	return (__s32)((__u32)(now >> RL_SKETCH_TIME_SHIFT) - until) >= 0;
}

/* The bucket and cells of hash h (RL_SKETCH_BUCKETS_LOG2 bits pick the bucket). */
RL_SKETCH_INLINE __u32 rl_sketch_bucket_of(__u64 h)
{
	return (__u32)h & (RL_SKETCH_BUCKETS - 1);
}

RL_SKETCH_INLINE void rl_sketch_cells_of(__u64 h, __u32 *c0, __u32 *c1)
{
	/* Multiply-shift range reduction: bounds the verifier can follow, unlike a modulo. */
	__u32 a = (((__u32)(h >> 32) & 0xffff) * RL_SKETCH_CELLS) >> 16;
	__u32 b = (((__u32)(h >> 48) & 0xffff) * (RL_SKETCH_CELLS - 1)) >> 16;
	*c0 = a;
	*c1 = b >= a ? b + 1 : b; /* two distinct cells */
}

/* Adds one cell's share and returns its value after the add (saturated: RL_SKETCH_SATURATED). */
RL_SKETCH_INLINE __u32 rl_sketch_cell_add(__u32 *cell, __u32 units)
{
	if (RL_SKETCH_LOAD(*cell) >= RL_SKETCH_SATURATED)
		return RL_SKETCH_SATURATED;
	return __sync_fetch_and_add(cell, units) + units;
}

/* Make b count in the window ending at `until`: reset it if its epoch passed, raise its until if
 * this window ends later. 0 when another CPU holds the bucket (count exactly instead). */
RL_SKETCH_INLINE int rl_sketch_enter(struct rl_sketch_bucket *b, __u64 now, __u32 until)
{
	__u32 seen = RL_SKETCH_LOAD(b->until);
	if (seen == RL_SKETCH_RESETTING)
		return 0;
	if (rl_sketch_passed(seen, now)) {
		if (__sync_val_compare_and_swap(&b->until, seen, RL_SKETCH_RESETTING) != seen)
			return 0;
		/* C as well as C++ (the XDP program): no range-based for. */
		for (int i = 0; i < RL_SKETCH_CELLS; i++) /* NOLINT(modernize-loop-convert) */
			RL_SKETCH_LOAD(b->cells[i]) = 0;
		/* The CAS orders the zeroing before the new until (a full barrier on every JIT). */
		__sync_val_compare_and_swap(&b->until, RL_SKETCH_RESETTING, until);
		return 1;
	}
	if ((__s32)(until - seen) > 0 &&
	    __sync_val_compare_and_swap(&b->until, seen, until) != seen)
		return 0;
	return 1;
}

/* Counts `units` of the key with hash h, admitted at now in a window of window_ns, and returns
 * the key's estimate in the window after them (at least its true count), or 0 when the packet
 * must be counted exactly (a CAS on until lost to another CPU). */
RL_SKETCH_INLINE __u32 rl_sketch_add(struct rl_sketch_bucket *b, __u64 h, __u64 now,
				     __u64 window_ns, __u32 units)
{
	if (!rl_sketch_enter(b, now, rl_sketch_until(now, window_ns)))
		return 0;
	__u32 c0, c1;
	rl_sketch_cells_of(h, &c0, &c1);
	__u32 e0 = rl_sketch_cell_add(&b->cells[c0], units);
	__u32 e1 = rl_sketch_cell_add(&b->cells[c1], units);
	__u32 est = e0 < e1 ? e0 : e1;
	return est ? est : 1;
}

#endif /* RL_CLUSTER_SKETCH_H */
