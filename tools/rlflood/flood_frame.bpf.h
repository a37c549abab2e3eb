/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* How frame n of a flood differs from its template: the source's last 32 bits, the source port
 * and the checksums that follow them. Included by the XDP program (live frames) and by the packet
 * ring sender, so that both engines send the same flood, frame for frame.
 *
 * Nothing here reads the frame: the kernel may hand the program a recycled page that still holds
 * an earlier frame, so every field is written whole and every checksum is computed from the
 * template's, which userspace folds into the *_csum_base constants (flood_plan.cc). */
#ifndef RL_RLFLOOD_FLOOD_FRAME_H
#define RL_RLFLOOD_FLOOD_FRAME_H

#include <linux/types.h>

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define FLOOD_ETH_LEN	    14
#define FLOOD_PERM_MAX_WALK 64

/* The XDP program reads it as frozen .rodata (so the verifier sees constants); the ring sender
 * from a copy. Both go through a volatile pointer for the program's sake. */
struct flood_frame_spec {
	__u32 n_sources;
	__u32 base_low; /* the last 32 bits of source 0, host order */
	__u32 perm_seed;
	__u32 n_sports; /* frame n takes base_sport + n mod n_sports */
	/* ~(template checksum) + ~(template source words), one's complement, not yet folded; the
	 * transport's also + ~(template source port). */
	__u32 ip_csum_base;
	__u32 l4_csum_base;
	__u16 base_sport; /* the template's source port */
	__u8 is_v6;
	__u8 is_tcp;
	__u8 shuffle;	/* 0: sources in order; 1: a permutation of [0, n_sources) */
	__u8 perm_bits; /* the permutation works on [0, 2^perm_bits) */
	__u8 pad[2];
};

#ifdef __cplusplus
static_assert(sizeof(struct flood_frame_spec) == 32, "flood_frame_spec is shared with BPF");
#else
_Static_assert(sizeof(struct flood_frame_spec) == 32, "flood_frame_spec is shared with BPF");
#endif

typedef const volatile struct flood_frame_spec flood_spec_t;

/* A bijection on bits-bit numbers: multiplying by an odd number and xor-shifting right are each
 * invertible modulo 2^bits, so the composition never maps two inputs to one output. */
static __always_inline __u32 flood_mix(__u32 x, __u8 bits, __u32 seed)
{
	__u32 mask = bits >= 32 ? 0xffffffffu : (1u << bits) - 1;
	__u32 shift = (bits + 1u) / 2;

	x = (x * 0x9e3779b1u + seed) & mask;
	x ^= x >> shift;
	x = (x * 0x85ebca6bu) & mask;
	x ^= x >> shift;
	return x;
}

/* Cycle-walking: following flood_mix() from k < n until it lands below n again gives a
 * permutation of [0, n). Returns n when the walk is longer than FLOOD_PERM_MAX_WALK; userspace
 * only accepts seeds for which no walk is. */
static __always_inline __u32 flood_perm_index(__u32 k, __u32 n, __u8 bits, __u32 seed)
{
	__u32 x = k;

	for (int i = 0; i < FLOOD_PERM_MAX_WALK; i++) {
		x = flood_mix(x, bits, seed);
		if (x < n)
			return x;
	}
	return n;
}

static __always_inline __u16 flood_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

static __always_inline void flood_put16(__u8 *p, __u16 v)
{
	p[0] = (__u8)(v >> 8);
	p[1] = (__u8)(v & 0xff);
}

/* Offsets in the frame: Ethernet 14; the IPv4 source at 12 of 20, the IPv6 source's last 4 bytes
 * at 20 of 40; the transport checksum at 16 of TCP, 6 of UDP. */
static __always_inline __u32 flood_src_off(flood_spec_t *s)
{
	return s->is_v6 ? FLOOD_ETH_LEN + 20 : FLOOD_ETH_LEN + 12;
}

static __always_inline __u32 flood_l4_off(flood_spec_t *s)
{
	return s->is_v6 ? FLOOD_ETH_LEN + 40 : FLOOD_ETH_LEN + 20;
}

static __always_inline __u32 flood_l4_csum_off(flood_spec_t *s)
{
	return flood_l4_off(s) + (s->is_tcp ? 16 : 6);
}

/* The bytes flood_frame_write() touches: a shorter frame cannot be rewritten. */
static __always_inline __u32 flood_frame_need(flood_spec_t *s)
{
	return flood_l4_csum_off(s) + 2;
}

static __always_inline __u32 flood_source_index(flood_spec_t *s, __u64 n)
{
	__u32 k = (__u32)(n % s->n_sources);

	if (!s->shuffle)
		return k;
	__u32 x = flood_perm_index(k, s->n_sources, s->perm_bits, s->perm_seed);
	return x < s->n_sources ? x : k; /* the fallback is unreachable for accepted seeds */
}

/* Makes frame n out of the template in data, which holds at least flood_frame_need() bytes. */
static __always_inline void flood_frame_write(flood_spec_t *s, __u8 *data, __u64 n)
{
	__u32 src = s->base_low + flood_source_index(s, n);
	__u16 hi = (__u16)(src >> 16), lo = (__u16)(src & 0xffff);
	__u16 port = (__u16)(s->base_sport + (s->n_sports > 1 ? (__u16)(n % s->n_sports) : 0));
	__u16 csum = (__u16)~flood_fold(s->l4_csum_base + hi + lo + port);

	flood_put16(data + flood_src_off(s), hi);
	flood_put16(data + flood_src_off(s) + 2, lo);
	flood_put16(data + flood_l4_off(s), port);
	/* In UDP a zero checksum means "none"; the computed zero is sent as its other form. */
	if (!s->is_tcp && csum == 0)
		csum = 0xffff;
	flood_put16(data + flood_l4_csum_off(s), csum);
	if (!s->is_v6)
		flood_put16(data + FLOOD_ETH_LEN + 10,
			    (__u16)~flood_fold(s->ip_csum_base + hi + lo));
}

#endif /* RL_RLFLOOD_FLOOD_FRAME_H */
