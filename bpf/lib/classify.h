/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Rule lookup. Cost does not grow with the rule count: each dimension of a packet (source
 * prefix, destination prefix, protocol, L4 index, source port, TCP flags, TTL, L3 length,
 * new-connection flag and fragment class) selects one precomputed bitmap of the rules it satisfies,
 * through a table lookup indexed by the packet's value (never a scan over rules); the AND of those
 * bitmaps has the matching rules set, and the lowest set bit is the highest-priority rule (the
 * compiler orders bits by priority). The bitmaps' summaries say which of their words hold rules,
 * so only the words where every class has some are ANDed.
 */
#ifndef RL_BPF_CLASSIFY_H
#define RL_BPF_CLASSIFY_H

#include "rl_key.h"
#include "maps.h"
#include "parse.h"
#include "rl_hash.h"
#include "host_table.h"

/* rl_filter_hash of the packet's source masked to /len: the bit a filter over prefixes of that
 * length gives the source, the policy's (rl_src_filter) and the runtime lists' alike. */
static __always_inline __u32 rl_source_prefix_hash(const struct rl_pkt *p, __u32 len)
{
	__u32 a[4];
	__builtin_memcpy(a, p->saddr, sizeof(a));
	rl_mask_addr(a, p->family, len);
	return rl_filter_hash(a, p->family);
}

/* Whether some source entry longer than /0 may cover the address (see RL_FILTER_BITS_LOG2).
 * False positives only cost an LPM lookup; there are no false negatives. */
static __always_inline int rl_source_filter_hit(__u32 gen, __u32 fam6, __u32 min_len,
						const struct rl_pkt *p)
{
	__u32 h = rl_source_prefix_hash(p, min_len);
	__u32 idx = rl_src_filter_index(gen, fam6, h >> 6);
	__u64 *w = bpf_map_lookup_elem(&rl_src_filter, &idx);
	return w && ((*w >> (h & 63)) & 1);
}

/* The generation's source entry for the packet's source: class and allow/deny flags. Most
 * sources are covered by no list or set entry; the filter sends those straight to the /0 entry
 * kept in the generation's config, and only the rest pay for the LPM trie, whose entry holds the
 * answer of each generation (rl_src_pair). A trie miss cannot happen while rld keeps a /0 entry
 * in it; it falls back to the /0 entry all the same.
 * Concurrency: rld writes an entry on its CPU while packets read it on theirs. The kernel
 * replaces an entry whole (a new node, freed after an RCU grace period), so a packet reads
 * either the old pair or the new one, never a mix; and rld changes only the half of the
 * generation that no packet reads (datapath/source_trie.h), so either pair answers the same. */
static __always_inline const struct rl_src_entry *
rl_lookup_source(__u32 gen, const struct rl_gen_config *gc, const struct rl_pkt *p)
{
	__u32 fam6 = p->family == 6;
	__u32 min_len = gc->min_len[fam6 & 1];
	const struct rl_src_pair *e;
	if (!min_len || !rl_source_filter_hit(gen, fam6, min_len, p))
		return &gc->defaults[fam6 & 1];
	if (p->family == 4) {
		struct rl_src4_key k = {.prefixlen = 32};
		__builtin_memcpy(k.addr, p->saddr, 4);
		e = bpf_map_lookup_elem(&rl_src_v4, &k);
	} else {
		struct rl_src6_key k = {.prefixlen = 128};
		__builtin_memcpy(k.addr, p->saddr, 16);
		e = bpf_map_lookup_elem(&rl_src_v6, &k);
	}
	return e ? &e->gen[gen & 1] : &gc->defaults[fam6 & 1];
}

/* Whether some runtime entry may cover the packet's source (rl_abi.h, "Runtime filter"), and
 * where a host's entry may be: 0, or RL_RTF_ASK_TRIE with RL_RTF_ASK_HOSTS when the family may
 * hold host entries and RL_RTF_ASK_HASH when its hosts' hash may hold some. False positives cost
 * a lookup; there are no false negatives. The switch is read once: its half's bitsets are the
 * ones built for its min_len, and rld waits a grace period before it writes a half that a packet
 * may still be reading (runtime_filter.cc). */
#define RL_RTF_ASK_TRIE	 1
#define RL_RTF_ASK_HOSTS 2
#define RL_RTF_ASK_HASH	 4
#define RL_RTF_ASK_ALL	 (RL_RTF_ASK_TRIE | RL_RTF_ASK_HOSTS | RL_RTF_ASK_HASH)

static __always_inline int rl_runtime_filter_hit(const struct rl_pkt *p)
{
	__u32 zero = 0;
	__u64 *swp = bpf_map_lookup_elem(&rl_runtime_filter, &zero);
	if (!swp)
		return RL_RTF_ASK_ALL;
	__u64 sw = *(volatile __u64 *)swp;
	if (!(sw & RL_RTF_BUILT))
		return RL_RTF_ASK_ALL;
	__u32 fam6 = p->family == 6;
	__u32 bit = rl_rtf_bit(rl_source_prefix_hash(p, rl_rtf_min_len(sw, fam6)));
	__u32 idx = rl_rtf_index(rl_rtf_half(sw), fam6, bit);
	__u64 *w = bpf_map_lookup_elem(&rl_runtime_filter, &idx);
	if (w && !((*w >> (bit & 63)) & 1))
		return 0;
	return RL_RTF_ASK_TRIE | (rl_rtf_hosts(sw, fam6) ? RL_RTF_ASK_HOSTS : 0) |
	       ((sw & rl_rtf_hash_bit(fam6)) ? RL_RTF_ASK_HASH : 0);
}

/* An entry's flags, or 0 for none or one that has expired: expired entries stay until rld removes
 * them (its housekeeping, every second); they simply stop applying. */
static __always_inline __u32 rl_runtime_flags(const struct rl_runtime_entry *e, __u64 now)
{
	if (!e || (e->expires_ns && e->expires_ns <= now))
		return 0;
	return e->flags;
}

/* Expired trie entries a packet looks past before it gives up. rld removes expired entries within
 * a second of their expiry, so more than this many nested ones, all expired and not yet removed,
 * means a packet sees none of the shorter entries until rld's next sweep. */
#define RL_RUNTIME_EXPIRED_SKIPS 3

/* The flags of the longest entry in a runtime trie that covers the key's address and has not
 * expired; 0 for none. The trie answers only its longest match, so past an expired entry the
 * packet asks again one bit shorter than that entry (its prefixlen, rl_abi.h). */
static __always_inline __u32 rl_runtime_trie_flags(void *trie, void *key, __u32 *prefixlen,
						   __u64 now)
{
	for (int i = 0; i <= RL_RUNTIME_EXPIRED_SKIPS; i++) {
		const struct rl_runtime_entry *e = bpf_map_lookup_elem(trie, key);
		__u32 f = rl_runtime_flags(e, now);
		if (f || !e)
			return f;
		/* 0: a /0, or an entry from an rld before the field, whose length is unknown */
		__u32 len = e->prefixlen;
		if (!len || len > *prefixlen)
			return 0;
		*prefixlen = len - 1;
	}
	return 0;
}

/* The runtime allow/deny flags for the source: its host's entry, else the longest prefix entry
 * that covers it, of those that have not expired; 0 for none. A host's entry is in its family's
 * host table, or in the hash when its set had no way free; one that has expired leaves the source
 * to its prefix's entry, and an expired prefix to a shorter one. */
static __always_inline __u32 rl_lookup_runtime(const struct rl_control *ctl, const struct rl_pkt *p,
					       __u64 now)
{
	if (!(p->family == 4 ? ctl->runtime_acl_v4 : ctl->runtime_acl_v6))
		return 0;
	int ask = rl_runtime_filter_hit(p);
	if (!ask)
		return 0;
	__u32 f = 0;
	if (p->family == 4) {
		struct rl_runtime_lpm4_key k = {.prefixlen = 32};
		__builtin_memcpy(k.addr, p->saddr, 4);
		if (ask & RL_RTF_ASK_HOSTS)
			f = rl_host_flags_v4(p->saddr[0], ctl->hash_seed, now);
		if (!f && (ask & RL_RTF_ASK_HASH))
			f = rl_runtime_flags(bpf_map_lookup_elem(&rl_host_acl_v4, &k), now);
		if (!f)
			f = rl_runtime_trie_flags(&rl_runtime_v4, &k, &k.prefixlen, now);
	} else {
		struct rl_runtime_lpm6_key k = {.prefixlen = 128};
		__builtin_memcpy(k.addr, p->saddr, 16);
		if (ask & RL_RTF_ASK_HOSTS)
			f = rl_host_flags_v6(p->saddr, ctl->hash_seed, now);
		if (!f && (ask & RL_RTF_ASK_HASH))
			f = rl_runtime_flags(bpf_map_lookup_elem(&rl_host_acl_v6, &k), now);
		if (!f)
			f = rl_runtime_trie_flags(&rl_runtime_v6, &k, &k.prefixlen, now);
	}
	return f;
}

/* The class of the packet's destination. A family without destination entries (no rule names a
 * destination of it) costs no lookup; an address no entry covers takes the family's default. */
static __always_inline __u32 rl_dst_class(__u32 gen, const struct rl_gen_config *gc,
					  const struct rl_pkt *p)
{
	__u32 fam6 = p->family == 6;
	const struct rl_src_entry *e;
	if (!gc->dst_lpm[fam6 & 1])
		return gc->dst_default[fam6 & 1];
	if (!fam6) {
		struct rl_lpm4_key k = {.prefixlen = rl_trie_prefixlen(32), .gen = gen};
		__builtin_memcpy(k.addr, p->daddr, 4);
		e = bpf_map_lookup_elem(&rl_dst_v4, &k);
	} else {
		struct rl_lpm6_key k = {.prefixlen = rl_trie_prefixlen(128), .gen = gen};
		__builtin_memcpy(k.addr, p->daddr, 16);
		e = bpf_map_lookup_elem(&rl_dst_v6, &k);
	}
	return e ? e->class_id : gc->dst_default[fam6 & 1];
}

/* The bitmaps' shape, from rld.yaml max_rules (rl_layout.h): each is rl_summary_words words of
 * summary, then rl_rule_words words of rules (the loader sets both). */
const volatile __u32 rl_bitmap_words = RL_DEFAULT_MAX_RULES / 64;
const volatile __u32 rl_bitmap_summary_words = (RL_DEFAULT_MAX_RULES / 64 + 63) / 64;

static __always_inline __u64 *rl_bitmap_of(__u32 gen, __u32 cls)
{
	__u32 idx = rl_bitmap_index(gen, cls & (RL_MAX_CLASSES - 1));
	return bpf_map_lookup_elem(&rl_bitmaps, &idx);
}

/* The class of `index` (0-65535) in one of the generation's rl_port_classes tables, or `none`.
 * Concurrency: the controller writes only the inactive generation's tables and flips
 * rl_control.active_gen afterwards, so a packet reads one generation's complete table. */
static __always_inline __u32 rl_table_class(__u32 gen, __u32 table, __u32 index, __u32 none)
{
	__u32 idx = rl_port_class_index(gen, table, index & (RL_PORT_VALUES - 1));
	struct rl_port_classes *pc = bpf_map_lookup_elem(&rl_port_classes, &idx);
	if (!pc)
		return none;
	return pc->cls[rl_class_lane(index)];
}

/* The class of the L4 index: the destination port for TCP and UDP; for ICMP and ICMPv6 the type
 * and the code together (type * 256 + code), so that one lookup answers both conditions. */
static __always_inline __u32 rl_l4_class(__u32 gen, const struct rl_pkt *p)
{
	if (p->port_kind == RL_L4_NONE)
		return RL_CLASS_NO_PORT;
	__u32 index = p->l4_index;
	if (p->port_kind == RL_PORT_KIND_ICMP || p->port_kind == RL_PORT_KIND_ICMPV6)
		index = rl_icmp_index(index & 0xff, p->icmp_code);
	index &= RL_PORT_VALUES - 1;
	return rl_table_class(gen, p->port_kind & (RL_PORT_KINDS - 1), index, RL_CLASS_NO_PORT);
}

/* The class of the packet's source port (TCP and UDP); packets without ports take sport_none.
 * While no rule of the generation names a source port, rl_match_rule skips the dimension. */
static __always_inline __u32 rl_sport_class(__u32 gen, const struct rl_gen_config *gc,
					    const struct rl_pkt *p)
{
	if (p->port_kind != RL_PORT_KIND_TCP && p->port_kind != RL_PORT_KIND_UDP)
		return gc->sport_none;
	return rl_table_class(gen, RL_SPORT_TABLE + (p->port_kind & 1), p->sport, gc->sport_none);
}

/* The class of the packet's L3 length (IPv4 total length, IPv6 payload length + 40). Lengths
 * take a 65536-entry table like the ports, 128 KiB per generation, rather than a sorted array
 * of range bounds searched in BPF: one array load for any number of ranges, no loop for the
 * verifier to walk, and the compiler's interval sweep (port_classes) builds it as it builds
 * the port tables. While no rule names a length, rl_match_rule skips the dimension. */
static __always_inline __u32 rl_len_class(__u32 gen, const struct rl_gen_config *gc,
					  const struct rl_pkt *p)
{
	return rl_table_class(gen, RL_LEN_TABLE, p->l3_len, gc->len_none);
}

/* The class of a one-byte field's value in one of the generation's rl_byte_classes tables
 * (same concurrency as rl_table_class: only the inactive generation is ever written). */
static __always_inline __u32 rl_byte_class(__u32 gen, __u32 table, __u32 value, __u32 none)
{
	__u32 idx = rl_byte_class_index(gen, table % RL_BYTE_TABLES, value & (RL_BYTE_VALUES - 1));
	struct rl_port_classes *pc = bpf_map_lookup_elem(&rl_byte_classes, &idx);
	if (!pc)
		return none;
	return pc->cls[rl_class_lane(value)];
}

/* The class of the packet's TCP flags: a packet without them (not TCP, a fragment, a transport
 * cut short) takes tcp_flags_none, the rules without a flags condition. While no rule names
 * flags, rl_match_rule skips the dimension. */
static __always_inline __u32 rl_tcp_flags_class(__u32 gen, const struct rl_gen_config *gc,
						const struct rl_pkt *p)
{
	if (p->port_kind != RL_PORT_KIND_TCP)
		return gc->tcp_flags_none;
	return rl_byte_class(gen, RL_BYTE_TABLE_TCP_FLAGS, p->tcp_flags, gc->tcp_flags_none);
}

/* The class of the packet's TTL (IPv4) or hop limit (IPv6), which every IP packet has. While
 * no rule names a TTL, rl_match_rule skips the dimension. */
static __always_inline __u32 rl_ttl_class(__u32 gen, const struct rl_gen_config *gc,
					  const struct rl_pkt *p)
{
	return rl_byte_class(gen, RL_BYTE_TABLE_TTL, p->ttl, gc->ttl_none);
}

/* The class of the packet's kind (rl_abi.h): bit 0 set for a new TCP connection, bits 1-2 its
 * place in a fragmented datagram, which counts only while a rule names one. One bitmap answers
 * both the rules' tcp_syn and fragment conditions. Arithmetic without branches: the verifier
 * then sees one state whatever the packet, not one per kind. */
static __always_inline __u32 rl_kind_class(__u32 dims, const struct rl_pkt *p)
{
	__u32 named = (dims / RL_DIM_FRAGMENT) & 1;
	__u32 later = p->fragment & 1;
	__u32 first = (p->flags / RL_PKT_F_MORE_FRAGMENTS) & 1 & ~later;
	__u32 frag = (2 * later + first) * named;
	return RL_CLASS_OF_KIND((p->tcp_new & 1) + 2 * frag);
}

/* Count of trailing zeros of a non-zero x: x & -x keeps the lowest set bit, and multiplying
 * it by a de Bruijn constant puts a distinct 6-bit pattern in the top bits for each of the 64
 * positions, which the table turns back into the position. Five instructions and one load from
 * a line every packet reads, where a binary search took six compare-and-shift steps in a chain
 * (BPF has no count-trailing-zeros instruction, and clang 14 cannot lower __builtin_ctzll for
 * BPF). */
static const __u8 rl_ctz_table[64] = {
    0,	1,  48, 2,  57, 49, 28, 3,  61, 58, 50, 42, 38, 29, 17, 4,  62, 55, 59, 36, 53, 51,
    43, 22, 45, 39, 33, 30, 24, 18, 12, 5,  63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21,
    44, 32, 23, 11, 46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9,  13, 8,  7,	6,
};

static __always_inline __u32 rl_ctz64(__u64 x)
{
	return rl_ctz_table[((x & -x) * 0x03f79d71b4cb0a89ULL) >> 58];
}

/* Candidates the inline walk reads before it hands the rest to rl_match_rest: as many as the
 * words of a default-sized rule set, so that such a set never needs the call. */
#define RL_MATCH_INLINE_WORDS 16
/* rl_match_rule's answer when words from `from` on are still to be read: RL_MATCH_REST - from
 * (below every other negative answer, memo.h's included). */
#define RL_MATCH_REST (-16)

/* The rule bitmaps the packet's classes select, ANDed word by word from word `from` of the rule
 * bits: the position of the first rule that matches, -1 when none does, or (inline only) the
 * answer RL_MATCH_REST - w when word w and those after it are still to be read.
 *
 * *p is in a map value (scratch.h), which the verifier does not track, so the lookups are verified
 * once per state that reaches them rather than once per parse outcome. */
static __always_inline int rl_match_bitmaps(__u32 gen, const struct rl_gen_config *gc,
					    __u32 src_class, const struct rl_pkt *p, __u32 from,
					    const int inline_walk)
{
	if (!gc || !p)
		return -1;
	gen &= 1;
	/* A rule with a protocol condition is in one protocol's bitmap, a rule without one in all
	 * of them: for a packet whose protocol is unknown, the AND of two protocols' bitmaps holds
	 * exactly the rules that need no protocol. */
	int proto_unknown = p->flags & RL_PKT_F_PROTO_UNKNOWN;
	__u32 proto = proto_unknown ? 0 : p->proto;
	__u64 *bs = rl_bitmap_of(gen, src_class);
	if (!bs)
		return -1;
	/* A dimension that cannot narrow this packet's match (no rule of the generation uses it, or
	 * the packet is exempt) would AND in a bitmap of every rule: bs stands in for it instead,
	 * which ANDs to itself from a line already read. A packet then reads only the bitmaps that
	 * can narrow its match, for a plain policy three or four lines instead of ten. */
	__u32 dims = gc->dims_used;
	__u64 *bp = rl_bitmap_of(gen, RL_CLASS_PROTO_BASE + proto);
	__u64 *bq = proto_unknown ? rl_bitmap_of(gen, RL_CLASS_PROTO_BASE + 1) : bs;
	__u64 *bl = rl_bitmap_of(gen, rl_l4_class(gen, p));
	__u64 *bd = (dims & RL_DIM_DESTINATION) ? rl_bitmap_of(gen, rl_dst_class(gen, gc, p)) : bs;
	__u64 *bo = gc->sport_used ? rl_bitmap_of(gen, rl_sport_class(gen, gc, p)) : bs;
	__u64 *bf =
	    (dims & RL_DIM_TCP_FLAGS) ? rl_bitmap_of(gen, rl_tcp_flags_class(gen, gc, p)) : bs;
	__u64 *bt = (dims & RL_DIM_TTL) ? rl_bitmap_of(gen, rl_ttl_class(gen, gc, p)) : bs;
	__u64 *bz = (dims & RL_DIM_LENGTH) ? rl_bitmap_of(gen, rl_len_class(gen, gc, p)) : bs;
	/* Packets that are not a new TCP connection (including TCP fragments, whose flags are
	 * unknown) must not match rules that require one, nor rules of another fragment class. */
	__u32 kinds = (dims / RL_DIM_FRAGMENT) | ((dims / RL_DIM_NEW_CONN) & ~(__u32)p->tcp_new);
	__u64 *bn = (kinds & 1) ? rl_bitmap_of(gen, rl_kind_class(dims, p)) : bs;
	if (!bp || !bq || !bl || !bn || !bd || !bo || !bf || !bt || !bz)
		return -1;

#define RL_AND_WORD(x)                                                                             \
	(bs[x] & bp[x] & bq[x] & bl[x] & bd[x] & bo[x] & bf[x] & bt[x] & bz[x] & bn[x])
	/* The words where every class has rules, lowest (highest priority) first: only those are
	 * read, and one that ANDs to 0 all the same is passed by. Summaries hold no bit past the
	 * rule set's words, so the walk ends at the last word any match may be in. The bitmaps'
	 * shape is a load-time constant, which bounds every word read within the maps' values; it
	 * is read where used (volatile), which keeps it out of the stack the caller chain shares.
	 */
	__u32 s = from / 64;
	if (s >= RL_SUMMARY_WORDS_MAX || s >= rl_bitmap_summary_words)
		return -1;
	__u64 words = RL_AND_WORD(s) & (~0ULL << (from % 64));
	if (inline_walk) {
		/* At most RL_MATCH_INLINE_WORDS candidates, in one flat loop: the verifier walks it
		 * once for every state that reaches it. */
		for (__u32 n = 0; n < RL_MATCH_INLINE_WORDS + RL_SUMMARY_WORDS_MAX; n++) {
			if (!words) {
				if (++s >= RL_SUMMARY_WORDS_MAX || s >= rl_bitmap_summary_words)
					return -1;
				words = RL_AND_WORD(s);
				continue;
			}
			__u32 i = s * 64 + rl_ctz64(words);
			words &= words - 1;
			if (i >= rl_bitmap_words)
				return -1;
			__u64 m = RL_AND_WORD(rl_bitmap_summary_words + i);
			if (m)
				return i * 64 + rl_ctz64(m);
		}
		/* Candidates are left in this summary word or the next ones: on from the next. */
		return RL_MATCH_REST - (words ? s * 64 + rl_ctz64(words) : (s + 1) * 64);
	}
	/* To the end, a summary word at a time: the states the verifier meets at the outer loop
	 * differ in the summary word alone, so it walks each summary word's candidates once. */
	for (__u32 k = 0; k < RL_SUMMARY_WORDS_MAX; k++) {
		for (__u32 n = 0; n < 64 && words; n++, words &= words - 1) {
			__u32 i = s * 64 + rl_ctz64(words);
			if (i >= rl_bitmap_words)
				return -1;
			__u64 m = RL_AND_WORD(rl_bitmap_summary_words + i);
			if (m)
				return i * 64 + rl_ctz64(m);
		}
		if (++s >= RL_SUMMARY_WORDS_MAX || s >= rl_bitmap_summary_words)
			return -1;
		words = RL_AND_WORD(s);
	}
	return -1;
#undef RL_AND_WORD
}

/* Position of the first rule that matches, -1 when none does, or RL_MATCH_REST - from when the
 * inline walk left words from `from` on to rl_match_rest.
 *
 * Inlined, without a call (a BPF function's return mispredicts on CPUs with return thunks) for
 * every packet whose first candidate words hold its match. */
static __always_inline int rl_match_rule(__u32 gen, const struct rl_gen_config *gc, __u32 src_class,
					 const struct rl_pkt *p)
{
	return rl_match_bitmaps(gen, gc, src_class, p, 0, 1);
}

/* rl_match_rule's walk from word `from` on, to the end, for a packet of generation `gen` whose
 * source lists decided nothing: a rule set's rare packet whose candidate words outnumber what the
 * inline walk reads. Verified once, whatever the states of its callers; it finds the packet's
 * source class again rather than have every packet keep it across the inline walk. */
__attribute__((noinline)) int rl_match_rest(const struct rl_pkt *p, __u32 gen, __u32 from)
{
	__u32 g = gen & 1;
	const struct rl_gen_config *gc = bpf_map_lookup_elem(&rl_gen_config, &g);
	if (!gc || !p)
		return -1;
	const struct rl_src_entry *src = rl_lookup_source(g, gc, p);
	if (!src)
		return -1;
	return rl_match_bitmaps(g, gc, src->class_id, p, from, 0);
}

#endif /* RL_BPF_CLASSIFY_H */
