// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The floor for any limiter that keeps state per source, on a real interface: rl_src_drop's read
 * of the source address, then the one slot a limiter keeps for that source. A packet whose source
 * holds a slot and is within its period is dropped; any other takes a slot and passes, or is
 * dropped when its line has no slot free. No rules, no counters, no overflow: what is left is the
 * least a per-source limit costs, the line of the source's slot, which from many sources comes from
 * memory. The table is as large as rl's key table at 131,072 keys (8 MiB), so that floods of known
 * sources spread over as many pages.
 *
 * Concurrency: none, by design. Two CPUs with packets of one new source may both pass one and
 * both write its slot, and a source whose slot another source took passes again: a floor to
 * measure against, not a limiter to deploy (bench-live.sh's contender "slot").
 */
#include "ref_source.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define SLOT_LINES (1u << 17) /* 64-byte lines, 8 MiB */
#define SLOT_WAYS  4	      /* 16-byte slots to a line, as rl's key table */
/* A source's period, in jiffies: one to four minutes, as HZ is 1000 to 250. */
#define SLOT_PERIOD 60000ULL

struct src_slot {
	__u64 tag; /* the source's hash, never 0 */
	__u64 until;
};

struct src_line {
	struct src_slot way[SLOT_WAYS];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE); /* page-aligned: a value is one line, as rl's */
	__type(key, __u32);
	__type(value, struct src_line);
	__uint(max_entries, SLOT_LINES);
} src_slots SEC(".maps");

SEC("xdp")
int rl_src_slot(struct xdp_md *ctx)
{
	int words = 0;
	const __u32 *a = ref_source(ctx, &words);

	if (!a)
		return XDP_DROP;
	__u64 src = words == 1 ? a[0]
			       : ((__u64)a[0] << 32 | a[1]) * 0xc2b2ae3d27d4eb4fULL ^
				     ((__u64)a[2] << 32 | a[3]);
	/* Two multiplies and two folds spread sequential sources over the lines as a random
	 * function would (rl's key hash is three multiplies and a finaliser). */
	__u64 h = src * 0x9e3779b97f4a7c15ULL;
	h ^= h >> 32;
	h *= 0xc2b2ae3d27d4eb4fULL;
	h ^= h >> 29;
	__u32 line = (__u32)h & (SLOT_LINES - 1);
	struct src_line *l = bpf_map_lookup_elem(&src_slots, &line);
	if (!l)
		return XDP_DROP;
	/* The source's slot is any of the line's four, as in rl's sets: with one slot per source
	 * (direct-mapped), a fifth of 131,072 sources in 8 MiB would share theirs and pass every
	 * other packet. A new source takes a free or expired slot; one whose line has none is
	 * dropped, as rl's overflow bucket for its prefix would drop it (at 131,071 sources, 0.4%
	 * of the lines have a fifth). */
	__u64 tag = h | 1, now = bpf_jiffies64();
	int victim = -1;
#pragma unroll
	for (int w = 0; w < SLOT_WAYS; w++) {
		struct src_slot *s = &l->way[w];
		if (s->tag == tag) {
			if (now < s->until)
				return XDP_DROP;
			s->until = now + SLOT_PERIOD;
			return XDP_PASS;
		}
		if (now >= s->until)
			victim = w;
	}
	if (victim < 0)
		return XDP_DROP;
	struct src_slot *s = &l->way[victim & (SLOT_WAYS - 1)];
	s->tag = tag;
	s->until = now + SLOT_PERIOD;
	return XDP_PASS;
}
