/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The key hash and the slot fields derived from it, shared by the XDP program and the controller:
 * the controller computes the same values to find and read a key's slot (rlctl unblock, top
 * talkers, key table usage) without the kernel's help.
 * The key hash multiplies three 64-bit words built from the key's fields (so the result does not
 * depend on struct padding or on the compiler's aliasing rules), each XORed with a secret, and
 * folds them with a murmur3 finaliser. The three products are independent, so the dependent
 * chain is three multiplies rather than six. The secret is a random 64-bit seed chosen when the
 * key table is created: without it, the hash is invertible and anyone could compute a source
 * address whose key lands on a victim's slot. Like the kernel's own jhash seeds, it is a hurdle
 * for blind attackers, not a cryptographic MAC.
 */
#ifndef RL_HASH_H
#define RL_HASH_H

#include "rl_layout.h"

#ifdef __cplusplus
#define RL_HASH_INLINE static inline
#else
#define RL_HASH_INLINE static __always_inline
#endif

RL_HASH_INLINE __u64 rl_mix64(__u64 h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

RL_HASH_INLINE __u64 rl_key_hash(const struct rl_key *k, __u64 seed)
{
	__u64 w0 = (__u64)k->rule_id | ((__u64)k->dport << 32) | ((__u64)k->family << 48) |
		   ((__u64)k->kind << 56);
	__u64 w1 = (__u64)k->addr[0] | ((__u64)k->addr[1] << 32);
	__u64 w2 = (__u64)k->addr[2] | ((__u64)k->addr[3] << 32);
	__u64 s1 = (seed << 21) | (seed >> 43), s2 = (seed << 42) | (seed >> 22);
	__u64 a = (w0 ^ seed) * 0x9e3779b97f4a7c15ULL;
	__u64 b = (w1 ^ s1) * 0xc2b2ae3d27d4eb4fULL;
	__u64 c = (w2 ^ s2) * 0x165667b19e3779f9ULL;
	return rl_mix64(a ^ ((b << 21) | (b >> 43)) ^ ((c << 42) | (c >> 22)));
}

/* A key's slot tag: the hash bits the set index does not use. Never RL_TAG_FREE or
 * RL_TAG_CLAIMING, the two tags that mark slots without a key. */
RL_HASH_INLINE __u32 rl_key_tag(__u64 h)
{
	__u32 t = (__u32)(h >> 32);
	return (t == RL_TAG_FREE || t == RL_TAG_CLAIMING) ? 1 : t;
}

/* A tag's print in the key table's summary (rl_set_summary): its top byte. The set index takes
 * the tag's low bits (rl_set_wide), at most log2(capacity) - RL_KEY_SETS_MIN_LOG2 of them, so
 * the print is independent of the set: the keys of one set differ in it as random bytes do. */
RL_HASH_INLINE __u8 rl_tag_print(__u32 tag)
{
	return (__u8)(tag >> 24);
}

/* Whether one of a set's four prints (packed in a 32-bit word, way w in byte w) is `print`: the
 * word XOR the print repeated has a zero byte exactly then. */
RL_HASH_INLINE int rl_prints_match(__u32 prints, __u8 print)
{
	__u32 x = prints ^ (print * 0x01010101U);
	return ((x - 0x01010101U) & ~x & 0x80808080U) != 0;
}

/* ---- The set of a key (linear hashing) ----
 * rl_keys is allocated at its full capacity, but only its first `active` sets are in use
 * (rl_control.key_sets_active). It starts at 2^low_bits sets and rld raises `active` one set at a
 * time up to the capacity: the set at `active - 2^L` (2^L <= active, the largest such power)
 * splits into itself and set `active`, by bit L of the key's wide index. Packets index with the
 * count they read; rld's side of a split (controller/datapath/key_sets.cc) says why a packet
 * racing it is still judged right. A table no larger than 2^RL_KEY_SETS_MIN_LOG2 sets never
 * grows. */

/* The hash's low bits that pick the set when the table is smallest: log2(sets), at most
 * RL_KEY_SETS_MIN_LOG2. A load-time constant of each table. */
RL_HASH_INLINE __u32 rl_set_low_bits(__u32 sets)
{
	__u32 bits = 0;
	while (bits < RL_KEY_SETS_MIN_LOG2 && (2u << bits) <= sets)
		bits++;
	return bits;
}

/* The key's wide index: the hash's low_bits low bits, then the tag's bits. Every set index the
 * table can have is this masked, and a slot's set and tag give it back. */
RL_HASH_INLINE __u32 rl_set_wide(__u32 tag, __u64 h, __u32 low_bits)
{
	return (tag << low_bits) | ((__u32)h & ((1u << low_bits) - 1));
}

/* The set of wide index w while `active` sets are in use (active > 0). */
RL_HASH_INLINE __u32 rl_set_index(__u32 w, __u32 active)
{
	__u32 m = active - 1;
	m |= m >> 1;
	m |= m >> 2;
	m |= m >> 4;
	m |= m >> 8;
	m |= m >> 16;
	__u32 idx = w & m;
	return idx < active ? idx : idx & (m >> 1);
}

/* The idle tick at or after ns (slot idle hints round up, so a slot is never reused early). */
RL_HASH_INLINE __u32 rl_idle_tick_ceil(__u64 ns)
{
	return (__u32)((ns + (1ULL << RL_IDLE_SHIFT) - 1) >> RL_IDLE_SHIFT);
}

/* Has a slot's idle hint passed at now_ns? Modulo 2^32 (see RL_IDLE_SHIFT). */
RL_HASH_INLINE int rl_idle_passed(__u32 idle, __u64 now_ns)
{
	return (__s32)(idle - (__u32)(now_ns >> RL_IDLE_SHIFT)) <= 0;
}

/* Is a slot's state word a block in force at now_ns? */
RL_HASH_INLINE int rl_state_blocked(__u64 state, __u64 now_ns)
{
	return (state & RL_STATE_BLOCKED) && (state & ~RL_STATE_BLOCKED) > now_ns;
}

/* Source filter hash of an address already masked to the generation's min_len. */
RL_HASH_INLINE __u32 rl_filter_hash(const __u32 addr[4], __u8 family)
{
	__u64 h = rl_mix64(((__u64)addr[0] | ((__u64)addr[1] << 32)) ^ family);
	h = rl_mix64(h ^ ((__u64)addr[2] | ((__u64)addr[3] << 32)));
	return (__u32)h & ((1u << RL_FILTER_BITS_LOG2) - 1);
}

/* The runtime filter's (rl_abi.h) switch word: a family's min_len, and the half in use. */
RL_HASH_INLINE __u32 rl_rtf_min_len(__u64 sw, __u32 fam6)
{
	return (__u32)(sw >> (fam6 ? 8 : 0)) & 0xff;
}

RL_HASH_INLINE __u32 rl_rtf_half(__u64 sw)
{
	return (__u32)(sw >> RL_RTF_HALF_SHIFT) & 1;
}

/* The switch word's bit saying family fam6 may hold runtime host entries (rl_hosts_v4/v6), and
 * the one saying its hosts' hash (rl_host_acl_v4/v6) may hold some. */
RL_HASH_INLINE __u64 rl_rtf_hosts_bit(__u32 fam6)
{
	return 1ULL << (RL_RTF_HOSTS_SHIFT + (fam6 & 1));
}

RL_HASH_INLINE __u64 rl_rtf_hash_bit(__u32 fam6)
{
	return 1ULL << (RL_RTF_HASH_SHIFT + (fam6 & 1));
}

RL_HASH_INLINE __u32 rl_rtf_hosts(__u64 sw, __u32 fam6)
{
	return (sw & rl_rtf_hosts_bit(fam6)) != 0;
}

/* ---- The host table (rl_abi.h, "Host table") ---- */

/* The set of a host's address (its bytes as four words, as the packet holds them). */
RL_HASH_INLINE __u32 rl_host_set_index(const __u32 addr[4], __u8 family, __u64 seed)
{
	if (family == 4)
		return (__u32)rl_mix64(addr[0] ^ seed) & (RL_HOST_SETS_V4 - 1);
	__u64 h = rl_mix64(((__u64)addr[0] | ((__u64)addr[1] << 32)) ^ seed);
	h = rl_mix64(h ^ ((__u64)addr[2] | ((__u64)addr[3] << 32)));
	return (__u32)h & (RL_HOST_SETS_V6 - 1);
}

/* The entry's flags (RL_SRC_F_*) from a live way's word, or 0 once it has expired. */
RL_HASH_INLINE __u32 rl_host_word_flags(__u64 word, __u64 now_ns)
{
	__u64 expiry = word & RL_HOST_EXPIRY_MASK;
	if (expiry && expiry <= (now_ns >> RL_HOST_EXPIRY_SHIFT))
		return 0;
	return (word & RL_HOST_ALLOW) ? RL_SRC_F_ALLOW : RL_SRC_F_DENY;
}

/* The runtime filter's bit for an address masked to its family's min_len, from the address's
 * rl_filter_hash (its word's index: rl_rtf_index, rl_layout.h). */
RL_HASH_INLINE __u32 rl_rtf_bit(__u32 filter_hash)
{
	return filter_hash & ((1u << RL_RUNTIME_FILTER_BITS_LOG2) - 1);
}

#endif /* RL_HASH_H */
