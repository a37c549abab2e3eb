/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * How a rule's key is built from a packet's addresses, stated once: the XDP program builds the
 * key of every packet it judges with it (bpf/lib/limiter.h), rld the key of an address an
 * operator names (`rlctl unblock`, `rlctl key show`: controller/daemon/key_state.cc), so both
 * find the same slot in the key table.
 */
#ifndef RL_KEY_H
#define RL_KEY_H

#include "rl_abi.h"

#ifdef __cplusplus
#include <arpa/inet.h>
#define RL_KEY_INLINE	static inline
#define RL_KEY_HTONL(x) htonl(x)
#else
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#define RL_KEY_INLINE	static __always_inline
#define RL_KEY_HTONL(x) bpf_htonl(x)
#endif

/* Clear the host bits below `prefix` (addresses in network order, IPv4 in addr[0]). */
RL_KEY_INLINE void rl_mask_addr(__u32 addr[4], __u8 family, __u32 prefix)
{
	__u32 words = family == 4 ? 1 : 4;
#ifndef __cplusplus
#pragma unroll
#endif
	for (__u32 i = 0; i < 4; i++) {
		__u32 bits;
		if (i >= words) {
			addr[i] = 0;
			continue;
		}
		bits = prefix > i * 32 ? prefix - i * 32 : 0;
		if (bits >= 32)
			continue;
		addr[i] &= bits ? RL_KEY_HTONL(~0u << (32 - bits)) : 0;
	}
}

/* Rule r's key for a packet from saddr to daddr (network order, IPv4 in [0]). `dport` counts
 * only for RL_KEY_SRC_ADDR_DPORT and only when `has_port` (TCP and UDP have one). *k starts
 * zeroed: the key is compared and hashed whole. */
RL_KEY_INLINE void rl_key_fill(struct rl_key *k, const struct rl_rule *r, __u8 family,
			       const __u32 saddr[4], const __u32 daddr[4], __u16 dport,
			       int has_port)
{
	k->rule_id = r->id;
	k->kind = r->key_kind;
	if (r->key_kind == RL_KEY_RULE)
		return;
	k->family = family;
	if (r->key_kind == RL_KEY_SRC_DST) {
		/* Both addresses in the one 24-byte key (rl_abi.h): IPv6 keeps each side's /64. */
		k->addr[0] = saddr[0];
		k->addr[1] = family == 4 ? daddr[0] : saddr[1];
		if (family == 6) {
			k->addr[2] = daddr[0];
			k->addr[3] = daddr[1];
		}
		return;
	}
	if (r->key_kind == RL_KEY_DST_PREFIX) {
		__builtin_memcpy(k->addr, daddr, sizeof(k->addr));
		rl_mask_addr(k->addr, family, family == 4 ? r->v4_prefix : r->v6_prefix);
		return;
	}
	__builtin_memcpy(k->addr, saddr, sizeof(k->addr));
	/* An IPv6 client holds a whole prefix (a /64 by default), so per-source keys take the
	 * rule's IPv6 prefix too; the compiler sets the IPv4 one to 32 for them. */
	if (r->key_kind == RL_KEY_SRC_PREFIX || family == 6)
		rl_mask_addr(k->addr, family, family == 4 ? r->v4_prefix : r->v6_prefix);
	if (r->key_kind == RL_KEY_SRC_ADDR_DPORT && has_port)
		k->dport = dport;
}

#endif /* RL_KEY_H */
