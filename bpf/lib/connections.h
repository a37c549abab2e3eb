/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Connection limits (RL_ALGO_CONNECTIONS): at most r->limit connections open per key. The data
 * path judges only a new connection's SYN (the compiler gives such a rule the new-connection
 * condition) against the key's count in rl_conn_open, and never writes the count: rld does, from
 * conntrack's events, for connections that completed their handshake, so a spoofed SYN never
 * counts. An admitted SYN leaves its tuple and key hash in rl_conn_syns, where rld finds which
 * key a connection that conntrack reports established counts against.
 *
 * Concurrency. Any CPU may judge a SYN of any key; each only reads the count, which rld writes
 * with single map updates, so a CPU sees the count before or after rld's update, never a torn
 * one. The count lags the kernel's connections by the time rld takes to read conntrack's event
 * and write it: SYNs of a key admitted while its count is below the limit may all complete, so
 * a key can hold more than the limit by the handshakes it starts within that lag
 * (docs/datapath.md states the bound). Two CPUs writing one tuple in rl_conn_syns write the same
 * value.
 */
#ifndef RL_BPF_CONNECTIONS_H
#define RL_BPF_CONNECTIONS_H

#include "algo.h"
#include "maps.h"
#include "once.h"
#include "parse.h"

/* Judge a SYN of the key whose hash is `hash` by connection limit r. A global function, verified
 * once, called by rl_limit and rl_stacked_judge before they look for a slot: a connection
 * limit's key has none. */
__attribute__((noinline)) int rl_conn_judge(const struct rl_rule *r, const struct rl_pkt *p,
					    __u64 hash)
{
	if (!r || !p)
		return RL_LIMIT_EXHAUSTED;
	if (!p->tcp_new)
		return RL_LIMIT_ADMIT;
	__u32 *open = bpf_map_lookup_elem(&rl_conn_open, &hash);
	if (open && RL_READ_ONCE(*open) >= r->limit)
		return RL_LIMIT_OVER;
	struct rl_conn_tuple t = {
	    .sport = p->sport,
	    .dport = p->l4_index,
	    .family = p->family,
	};
	__builtin_memcpy(t.saddr, p->saddr, sizeof(t.saddr));
	__builtin_memcpy(t.daddr, p->daddr, sizeof(t.daddr));
	struct rl_conn_syn v = {.hash = hash, .rule_id = r->id};
	bpf_map_update_elem(&rl_conn_syns, &t, &v, BPF_ANY);
	return RL_LIMIT_ADMIT;
}

#endif /* RL_BPF_CONNECTIONS_H */
