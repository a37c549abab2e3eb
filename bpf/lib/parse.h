/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Header parsers. One contract for all of them: a cursor and data_end in; the next protocol
 * (>= 0) or a negative RL_PARSE_* error out. A parser advances the cursor only past a header
 * it has fully bounds-checked, so nothing is ever read beyond data_end.
 *
 * Two kinds of malformed packet, because an attacker chooses which one he sends: without a
 * usable IP header there is no source to judge (RL_PARSE_MALFORMED), but once the source is
 * known, a transport the program cannot parse must not take the packet past the lists and the
 * address rules (RL_PARSE_NO_L4: the packet is judged like a non-first fragment).
 */
#ifndef RL_BPF_PARSE_H
#define RL_BPF_PARSE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "rl_abi.h"

#define RL_PARSE_MALFORMED (-1) /* no usable IP header: no source address */
#define RL_PARSE_NON_IP	   (-2)
#define RL_PARSE_NO_L4	   (-3) /* source known, transport not parsed */

#define RL_L4_NONE 0xff

struct rl_cursor {
	void *pos;
};

/* What the rest of the program knows about a packet, in three groups by who reads them, which is
 * what the CPU's memo compares (memo.h): every rule set's lookup and keys read the first group, a
 * rule set reads a field of the second only while one of its rules names it, and no rule reads the
 * third. */
struct rl_pkt {
	__u32 saddr[4]; /* network order; IPv4 uses saddr[0] */
	__u32 daddr[4]; /* network order; IPv4 uses daddr[0] */
	__u16 l4_index; /* destination port (host order) or ICMP type */
	__u8 family;	/* 4 or 6 */
	__u8 proto;	/* IP protocol after IPv6 extension headers */
	__u8 port_kind; /* enum rl_port_kind, or RL_L4_NONE when there is no L4 index */
	__u8 fragment;	/* non-first fragment */
	__u8 flags;	/* RL_PKT_F_* */
	__u8 icmp_code; /* ICMP and ICMPv6 (l4_index holds the type) */

	__u16 sport; /* TCP and UDP: source port (host order) */
	/* IPv4 total length, or IPv6 payload length + 40 (the fixed header), at most 65535: the
	 * length the IP header declares, which may differ from the frame's. */
	__u16 l3_len;
	__u8 tcp_flags; /* TCP: the flags byte (FIN 0x01 ... ACK 0x10) */
	__u8 tcp_new;	/* SYN without ACK */
	__u8 ttl;	/* IPv4 TTL, IPv6 hop limit */
	__u8 pad;

	/* From the frame's start: the IP header and the transport header (0 when there is none).
	 * SYN cookies read and rewrite the headers there. */
	__u16 l3_off;
	__u16 l4_off;
};

/* The transport header could not be parsed (a malformed packet whose source is known). */
#define RL_PKT_F_NO_L4 1
/* The IP protocol is not known: only rules without a protocol condition can match. */
#define RL_PKT_F_PROTO_UNKNOWN 2
/* More fragments follow (IPv4 MF, IPv6 M): with fragment == 0, the first fragment of a
 * datagram, which has the transport header. */
#define RL_PKT_F_MORE_FRAGMENTS 4

struct rl_vlan_hdr {
	__be16 tci;
	__be16 encap_proto;
};

static __always_inline int rl_is_vlan(__u16 proto)
{
	return proto == ETH_P_8021Q || proto == ETH_P_8021AD;
}

/* Ethernet plus up to RL_VLAN_MAX_TAGS VLAN tags (802.1Q, 802.1ad). Returns the ethertype in
 * host order. A deeper stack is malformed, not "non-IP": what it carries is unknown, and
 * passing it unjudged would be a way around the lists. Linux stacks at most 8 devices
 * (MAX_NEST_DEV), so its VLAN devices untag at most 7 tags: a frame with more tags than the walk
 * covers cannot reach its IP stack, whatever the malformed verdict. */
static __always_inline int rl_parse_eth(struct rl_cursor *c, void *data_end)
{
	struct ethhdr *eth = c->pos;
	if ((void *)(eth + 1) > data_end)
		return RL_PARSE_MALFORMED;
	c->pos = eth + 1;
	__u16 proto = bpf_ntohs(eth->h_proto);

#pragma unroll
	for (int i = 0; i < RL_VLAN_MAX_TAGS; i++) {
		if (!rl_is_vlan(proto))
			break;
		struct rl_vlan_hdr *vh = c->pos;
		if ((void *)(vh + 1) > data_end)
			return RL_PARSE_MALFORMED;
		c->pos = vh + 1;
		proto = bpf_ntohs(vh->encap_proto);
	}
	if (rl_is_vlan(proto))
		return RL_PARSE_MALFORMED;
	return proto;
}

static __always_inline int rl_parse_ipv4(struct rl_cursor *c, void *data_end, struct rl_pkt *p)
{
	struct iphdr *ip = c->pos;
	if ((void *)(ip + 1) > data_end)
		return RL_PARSE_MALFORMED;
	if (ip->version != 4 || ip->ihl < 5)
		return RL_PARSE_MALFORMED;
	__u32 hlen = ip->ihl * 4;
	if (bpf_ntohs(ip->tot_len) < hlen)
		return RL_PARSE_MALFORMED;
	if (c->pos + hlen > data_end)
		return RL_PARSE_MALFORMED;
	c->pos += hlen;
	p->family = 4;
	p->saddr[0] = ip->saddr;
	p->daddr[0] = ip->daddr;
	p->proto = ip->protocol;
	p->ttl = ip->ttl;
	p->l3_len = bpf_ntohs(ip->tot_len);
	/* A non-first fragment carries no L4 header: it is matched on addresses and protocol. */
	__u16 frag = bpf_ntohs(ip->frag_off);
	if (frag & 0x1fff)
		p->fragment = 1;
	/* MF, also on a later fragment's (rl_kind_class reads it under fragment == 0). Without a
	 * branch: the verifier would walk the rest of the parse once more. */
	p->flags |= (frag >> 13 & 1) * RL_PKT_F_MORE_FRAGMENTS;
	return ip->protocol;
}

struct rl_ipv6_opt_hdr {
	__u8 nexthdr;
	__u8 hdrlen;
};

struct rl_ipv6_frag_hdr {
	__u8 nexthdr;
	__u8 reserved;
	__be16 frag_off;
	__be32 identification;
};

static __always_inline int rl_ipv6_is_ext(__u8 nh)
{
	return nh == IPPROTO_HOPOPTS || nh == IPPROTO_ROUTING || nh == IPPROTO_FRAGMENT ||
	       nh == IPPROTO_DSTOPTS || nh == IPPROTO_AH;
}

/* IPv6 and a bounded walk over extension headers. A chain longer than RL_IPV6_MAX_EXT_HDRS, or
 * cut short inside, leaves the transport unknown: RL_PARSE_NO_L4, so that no port is guessed
 * but the source is still judged. The walk stops at a non-first fragment's header, because
 * what follows it is payload: the protocol is the one the header declares, or unknown if that
 * is another extension header. */
static __always_inline int rl_parse_ipv6(struct rl_cursor *c, void *data_end, struct rl_pkt *p)
{
	struct ipv6hdr *ip6 = c->pos;
	if ((void *)(ip6 + 1) > data_end)
		return RL_PARSE_MALFORMED;
	if (ip6->version != 6)
		return RL_PARSE_MALFORMED;
	c->pos = ip6 + 1;
	p->family = 6;
	__builtin_memcpy(p->saddr, &ip6->saddr, 16);
	__builtin_memcpy(p->daddr, &ip6->daddr, 16);
	p->ttl = ip6->hop_limit;
	__u32 len = (__u32)bpf_ntohs(ip6->payload_len) + sizeof(*ip6);
	p->l3_len = len > 0xffff ? 0xffff : len;
	__u8 nh = ip6->nexthdr;

#pragma unroll
	for (int i = 0; i < RL_IPV6_MAX_EXT_HDRS; i++) {
		if (!rl_ipv6_is_ext(nh))
			break;
		if (nh == IPPROTO_FRAGMENT) {
			struct rl_ipv6_frag_hdr *fh = c->pos;
			if ((void *)(fh + 1) > data_end)
				return RL_PARSE_NO_L4;
			c->pos = fh + 1;
			nh = fh->nexthdr;
			__u16 frag = bpf_ntohs(fh->frag_off);
			if (frag & 0xfff8) {
				p->fragment = 1;
				if (rl_ipv6_is_ext(nh))
					p->flags |= RL_PKT_F_PROTO_UNKNOWN;
				break;
			}
			p->flags |= (frag & 1) * RL_PKT_F_MORE_FRAGMENTS; /* M, at offset 0 */
			continue;
		}
		struct rl_ipv6_opt_hdr *oh = c->pos;
		if ((void *)(oh + 1) > data_end)
			return RL_PARSE_NO_L4;
		__u32 len =
		    nh == IPPROTO_AH ? ((__u32)oh->hdrlen + 2) * 4 : ((__u32)oh->hdrlen + 1) * 8;
		if (c->pos + len > data_end)
			return RL_PARSE_NO_L4;
		c->pos += len;
		nh = oh->nexthdr;
	}
	p->proto = nh;
	if (!p->fragment && rl_ipv6_is_ext(nh))
		return RL_PARSE_NO_L4;
	return nh;
}

struct rl_icmp_hdr {
	__u8 type;
	__u8 code;
	__be16 checksum;
};

/* Transport header: fills the L4 index (destination port or ICMP type, and the ICMP code).
 * Non-first fragments and protocols without ports leave port_kind at RL_L4_NONE. */
static __always_inline int rl_parse_l4(struct rl_cursor *c, void *data_end, struct rl_pkt *p)
{
	p->port_kind = RL_L4_NONE;
	if (p->fragment)
		return 0;

	switch (p->proto) {
	case IPPROTO_TCP: {
		struct tcphdr *th = c->pos;
		if ((void *)(th + 1) > data_end || th->doff < 5)
			return RL_PARSE_NO_L4;
		p->port_kind = RL_PORT_KIND_TCP;
		p->l4_index = bpf_ntohs(th->dest);
		p->sport = bpf_ntohs(th->source);
		p->tcp_new = th->syn && !th->ack;
		p->tcp_flags = ((__u8 *)th)[13];
		return 0;
	}
	case IPPROTO_UDP: {
		struct udphdr *uh = c->pos;
		if ((void *)(uh + 1) > data_end)
			return RL_PARSE_NO_L4;
		p->port_kind = RL_PORT_KIND_UDP;
		p->l4_index = bpf_ntohs(uh->dest);
		p->sport = bpf_ntohs(uh->source);
		return 0;
	}
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6: {
		struct rl_icmp_hdr *ih = c->pos;
		if ((void *)(ih + 1) > data_end)
			return RL_PARSE_NO_L4;
		p->port_kind = p->proto == IPPROTO_ICMP ? RL_PORT_KIND_ICMP : RL_PORT_KIND_ICMPV6;
		p->l4_index = ih->type;
		p->icmp_code = ih->code;
		return 0;
	}
	}
	return 0;
}

/* Where the IP header can start: Ethernet and the deepest VLAN stack walked. */
#define RL_L3_OFF_MAX (sizeof(struct ethhdr) + RL_VLAN_MAX_TAGS * sizeof(struct rl_vlan_hdr))

/* IP and transport, from l3_off on (ethertype: ETH_P_IP or ETH_P_IPV6): 0 for a packet ready
 * to classify, or RL_PARSE_MALFORMED. A packet whose transport could not be parsed is
 * classified too, with RL_PKT_F_NO_L4 set and no L4 index. */
static __always_inline int rl_parse_ip(struct xdp_md *ctx, __u32 l3_off, __u32 ethertype,
				       struct rl_pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	if (!p || l3_off > RL_L3_OFF_MAX)
		return RL_PARSE_MALFORMED;
	struct rl_cursor c = {.pos = data + l3_off};
	int proto;
	p->l3_off = l3_off;
	if (ethertype == ETH_P_IP)
		proto = rl_parse_ipv4(&c, data_end, p);
	else
		proto = rl_parse_ipv6(&c, data_end, p);
	if (proto == RL_PARSE_NO_L4) {
		p->port_kind = RL_L4_NONE;
		p->flags |= RL_PKT_F_NO_L4 | RL_PKT_F_PROTO_UNKNOWN;
		return 0;
	}
	if (proto < 0)
		return proto;
	if (!p->fragment)
		p->l4_off = c.pos - data;
	if (rl_parse_l4(&c, data_end, p) == RL_PARSE_NO_L4) {
		/* No transport header for SYN cookies to read either. */
		p->flags |= RL_PKT_F_NO_L4;
		p->l4_off = 0;
	}
	return 0;
}

/* The whole parse: 0 for an IP packet ready to classify, or RL_PARSE_NON_IP / RL_PARSE_MALFORMED
 * (rl_parse_ip for the rest).
 *
 * Inlined, with *p in a map value (rl_xdp.bpf.c's rl_scratch), which the verifier does not
 * track. Each VLAN depth is its own constant packet offset to the verifier, and each outcome
 * its own constants in *p: were they tracked, every depth would check the IP walk again and every
 * outcome the rest of the program. The IP header's offset is read back from *p instead, as a
 * value the verifier knows only the bounds of, so every depth continues as one state. Neither the
 * parse nor the rest of the program is then checked more than once per outcome code, and the
 * packet pays no call (a BPF function's return mispredicts on CPUs with return thunks). */
static __always_inline int rl_parse_frame(struct xdp_md *ctx, struct rl_pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct rl_cursor c = {.pos = data};
	int proto = rl_parse_eth(&c, data_end);
	if (proto < 0)
		return proto;
	if (proto != ETH_P_IP && proto != ETH_P_IPV6)
		return RL_PARSE_NON_IP;
	p->l3_off = c.pos - data;
	return rl_parse_ip(ctx, *(volatile __u16 *)&p->l3_off, proto, p);
}

#endif /* RL_BPF_PARSE_H */
