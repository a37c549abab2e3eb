/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The runtime lists' host table (rl_abi.h, "Host table"): a host's entry in the one line of its
 * set, for a packet from a source an operator denied or allowed by address.
 */
#ifndef RL_BPF_HOST_TABLE_H
#define RL_BPF_HOST_TABLE_H

#include "maps.h"
#include "once.h"
#include "rl_hash.h"

/* Packets read a way while rld may rewrite it (rld is the only writer; any CPU may read). rld
 * stores a free way's address before the word that makes it live, and clears the word before it
 * gives the way another address; every store of the word raises its version. So a packet that
 * reads the same live word before and after the address has read the address that word belongs
 * to: no store to the way came between. A word that changed meanwhile sends the packet through
 * the set once more (the change was an add, a remove or a new expiry of one of the set's hosts);
 * if it changes again, the packet goes on as if the host had no entry, as it would have an
 * instant earlier or later for an add or a remove. The loads stay in program order on x86, whose
 * loads are not reordered with other loads; RL_READ_ONCE keeps the compiler from merging or
 * reordering them. */
#define RL_HOST_SCANS 2

/* The flags of the live way of `set` (RL_HOST_WAYS ways) whose address the packet's source is,
 * read as above; 0 for none. `is_source` is an expression of the way index w. A macro, for the
 * two families' sets, which differ in their ways' address. */
#define rl_host_scan(set, ways, is_source, now)                                                    \
	({                                                                                         \
		__u32 found_ = 0;                                                                  \
		for (int scan_ = 0; scan_ < RL_HOST_SCANS; scan_++) {                              \
			int changed_ = 0, done_ = 0;                                               \
			_Pragma("unroll") for (int w = 0; w < (ways); w++)                         \
			{                                                                          \
				__u64 word_ = RL_READ_ONCE((set)->way[w].word);                    \
				if (!(word_ & RL_HOST_LIVE) || !(is_source))                       \
					continue;                                                  \
				if (RL_READ_ONCE((set)->way[w].word) != word_) {                   \
					changed_ = 1;                                              \
					continue;                                                  \
				}                                                                  \
				found_ = rl_host_word_flags(word_, now);                           \
				done_ = 1;                                                         \
				break;                                                             \
			}                                                                          \
			if (done_ || !changed_)                                                    \
				break;                                                             \
		}                                                                                  \
		found_;                                                                            \
	})

static __always_inline __u32 rl_host_flags_v4(__u32 addr, __u64 seed, __u64 now)
{
	__u32 a[4] = {addr, 0, 0, 0};
	__u32 idx = rl_host_set_index(a, 4, seed);
	struct rl_host_set4 *set = bpf_map_lookup_elem(&rl_hosts_v4, &idx);
	if (!set)
		return 0;
	return rl_host_scan(set, RL_HOST_WAYS_V4, RL_READ_ONCE(set->way[w].addr) == addr, now);
}

static __always_inline __u32 rl_host_flags_v6(const __u32 saddr[4], __u64 seed, __u64 now)
{
	__u64 a[2];
	__builtin_memcpy(a, saddr, sizeof(a));
	__u32 idx = rl_host_set_index(saddr, 6, seed);
	struct rl_host_set6 *set = bpf_map_lookup_elem(&rl_hosts_v6, &idx);
	if (!set)
		return 0;
	return rl_host_scan(set, RL_HOST_WAYS_V6,
			    RL_READ_ONCE(set->way[w].addr[0]) == a[0] &&
				RL_READ_ONCE(set->way[w].addr[1]) == a[1],
			    now);
}

#endif /* RL_BPF_HOST_TABLE_H */
