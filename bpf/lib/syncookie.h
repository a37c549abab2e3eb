/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * SYN cookies for rules with RL_RULE_F_SYN_COOKIES. A SYN is answered here with a SYN-ACK whose
 * sequence number is the kernel's own cookie (bpf_tcp_raw_gen_syncookie_*), so a spoofed SYN
 * never reaches the stack and allocates nothing. The client's ACK carries the cookie back: the
 * program checks it (bpf_tcp_raw_check_syncookie_*) and passes it on, and the stack's SYNPROXY
 * (installed by rld) checks it again and opens the connection to the local server, which
 * creates the conntrack entry. Packets of such a connection are found with bpf_xdp_ct_lookup
 * and go through unchanged. The protocol is the kernel's: the SYN-ACK has window 0, the
 * client's window scale and SACK ride in the low bits of our timestamp (as SYNPROXY decodes
 * them), and without a client timestamp only the MSS is offered.
 */
#ifndef RL_BPF_SYNCOOKIE_H
#define RL_BPF_SYNCOOKIE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "parse.h"
#include "rl_abi.h"

/* What a TCP packet of a syn_cookies rule is, before its limit. */
enum rl_sc_class {
	RL_SC_FLOW = 0,	 /* conntrack knows its connection: judged by the limit as usual */
	RL_SC_SYN,	 /* a new connection: answered with a cookie if the limit admits it */
	RL_SC_COOKIE_OK, /* the handshake's last ACK, with a valid cookie: on to the stack */
	RL_SC_REJECT,	 /* no connection and no valid cookie (or a SYN with FIN/RST): dropped */
};

#define RL_TCP_FIN 0x01
#define RL_TCP_SYN 0x02
#define RL_TCP_RST 0x04
#define RL_TCP_ACK 0x10

/* The first 12 bytes of the kernel's struct bpf_ct_opts: every kernel with the conntrack
 * kfuncs accepts this size, newer ones also a longer struct. */
struct rl_ct_opts {
	__s32 netns_id;
	__s32 error;
	__u8 l4proto;
	__u8 dir;
	__u8 reserved[2];
};

/* Never dereferenced: the lookup only answers whether the connection exists. libbpf matches
 * the kfunc's prototype by kind, so this must be a struct, not a forward declaration. */
struct nf_conn {
	int unused;
};

/* Weak, and called only when the loader found them (rl_syncookies_available): without conntrack
 * in the kernel the program still loads, the verifier drops the dead calls, and rld refuses
 * syn_cookies rules. */
extern struct nf_conn *bpf_xdp_ct_lookup(struct xdp_md *ctx, struct bpf_sock_tuple *tuple,
					 __u32 tuple_len, struct rl_ct_opts *opts,
					 __u32 opts_len) __ksym __weak;
extern void bpf_ct_release(struct nf_conn *ct) __ksym __weak;

#define RL_SC_CURRENT_NETNS (-1)
/* Transport headers further in than this are not looked at (no real client sends them). */
#define RL_SC_MAX_L4_OFF 1024
#define RL_SC_TTL	 64

/* TCP option kinds and lengths. */
#define RL_TCPOPT_EOL	     0
#define RL_TCPOPT_NOP	     1
#define RL_TCPOPT_MSS	     2
#define RL_TCPOPT_WINDOW     3
#define RL_TCPOPT_SACK_PERM  4
#define RL_TCPOPT_TIMESTAMP  8
#define RL_TCPOLEN_WINDOW    3
#define RL_TCPOLEN_SACK_PERM 2
#define RL_TCPOLEN_TIMESTAMP 10
/* The timestamp cookie's low bits, as the kernel's SYNPROXY decodes them. */
#define RL_TS_WSCALE_NONE 0xf
#define RL_TS_SACK	  (1u << 4)
#define RL_TS_BITS	  6

static __always_inline __u16 rl_csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* Whether conntrack knows the packet's connection; otherwise whether it is an ACK carrying a
 * valid cookie. SYNs are classified without a lookup: under a flood that is most packets, and a
 * SYN is answered the same way whatever conntrack holds. */
static __noinline int rl_syncookie_classify(struct xdp_md *ctx, const struct rl_pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u8 flags = p->tcp_flags;

	if (p->tcp_new)
		return flags & (RL_TCP_FIN | RL_TCP_RST) ? RL_SC_REJECT : RL_SC_SYN;

	__u32 l3 = p->l3_off & 0x3f;
	__u32 l4 = p->l4_off;
	if (l4 > RL_SC_MAX_L4_OFF)
		return RL_SC_REJECT;
	struct tcphdr *th = data + l4;
	if ((void *)(th + 1) > data_end)
		return RL_SC_REJECT;

	struct bpf_sock_tuple tup = {};
	__u32 tup_len;
	struct iphdr *ip = data + l3;
	struct ipv6hdr *ip6 = data + l3;
	if (p->family == 4) {
		if ((void *)(ip + 1) > data_end)
			return RL_SC_REJECT;
		tup.ipv4.saddr = ip->saddr;
		tup.ipv4.daddr = ip->daddr;
		tup.ipv4.sport = th->source;
		tup.ipv4.dport = th->dest;
		tup_len = sizeof(tup.ipv4);
	} else {
		if ((void *)(ip6 + 1) > data_end)
			return RL_SC_REJECT;
		__builtin_memcpy(tup.ipv6.saddr, &ip6->saddr, 16);
		__builtin_memcpy(tup.ipv6.daddr, &ip6->daddr, 16);
		tup.ipv6.sport = th->source;
		tup.ipv6.dport = th->dest;
		tup_len = sizeof(tup.ipv6);
	}
	struct rl_ct_opts opts = {.netns_id = RL_SC_CURRENT_NETNS, .l4proto = IPPROTO_TCP};
	struct nf_conn *ct = bpf_xdp_ct_lookup(ctx, &tup, tup_len, &opts, sizeof(opts));
	if (ct) {
		bpf_ct_release(ct);
		return RL_SC_FLOW;
	}

	if ((flags & (RL_TCP_SYN | RL_TCP_RST | RL_TCP_ACK)) != RL_TCP_ACK)
		return RL_SC_REJECT;
	/* The lookup does not move packet data, but the verifier wants the bounds again. */
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	th = data + l4;
	if ((void *)(th + 1) > data_end)
		return RL_SC_REJECT;
	long err;
	if (p->family == 4) {
		ip = data + l3;
		if ((void *)(ip + 1) > data_end)
			return RL_SC_REJECT;
		err = bpf_tcp_raw_check_syncookie_ipv4(ip, th);
	} else {
		ip6 = data + l3;
		if ((void *)(ip6 + 1) > data_end)
			return RL_SC_REJECT;
		err = bpf_tcp_raw_check_syncookie_ipv6(ip6, th);
	}
	return err ? RL_SC_REJECT : RL_SC_COOKIE_OK;
}

/* The SYN's options that the answer depends on. */
struct rl_syn_opts {
	__u8 ts;       /* the client sent a timestamp */
	__u8 sack;     /* SACK permitted */
	__u8 wscale;   /* the client's window scale, RL_TS_WSCALE_NONE without one */
	__u8 tsval[4]; /* the client's timestamp, network order: our echo */
};

/* The option walk's state: bpf_loop() verifies its step once, where an open-coded loop over
 * up to 40 option bytes would be verified path by path, past the verifier's budget. */
struct rl_opt_walk {
	__u8 syn[64]; /* the SYN's TCP header */
	__u32 tcp_len;
	__u32 at;
	struct rl_syn_opts o;
};

static long rl_opt_step(__u32 n, void *arg)
{
	struct rl_opt_walk *w = arg;
	__u32 i = w->at;
	if (i >= w->tcp_len || i >= 60)
		return 1;
	__u8 kind = w->syn[i & 63];
	if (kind == RL_TCPOPT_EOL)
		return 1;
	if (kind == RL_TCPOPT_NOP) {
		w->at = i + 1;
		return 0;
	}
	if (i + 1 >= w->tcp_len)
		return 1;
	__u8 len = w->syn[(i + 1) & 63];
	if (len < 2 || i + len > w->tcp_len)
		return 1;
	if (kind == RL_TCPOPT_WINDOW && len == RL_TCPOLEN_WINDOW) {
		__u8 ws = w->syn[(i + 2) & 63];
		w->o.wscale = ws > 14 ? 14 : ws;
	} else if (kind == RL_TCPOPT_SACK_PERM && len == RL_TCPOLEN_SACK_PERM) {
		w->o.sack = 1;
	} else if (kind == RL_TCPOPT_TIMESTAMP && len == RL_TCPOLEN_TIMESTAMP) {
		w->o.ts = 1;
		w->o.tsval[0] = w->syn[(i + 2) & 63];
		w->o.tsval[1] = w->syn[(i + 3) & 63];
		w->o.tsval[2] = w->syn[(i + 4) & 63];
		w->o.tsval[3] = w->syn[(i + 5) & 63];
	}
	w->at = i + len;
	return 0;
}

/* A SYN-ACK's TCP header: at most MSS, SACK or two NOPs, timestamp, NOP and window scale. */
struct rl_synack {
	struct tcphdr th;
	__be32 opt[5];
};

/* Builds the answer's TCP header (checksum not yet set); returns its length. */
static __always_inline __u32 rl_build_synack(const struct tcphdr *syn, const struct rl_syn_opts *o,
					     __u32 cookie, __u16 mss, struct rl_synack *out)
{
	out->th.source = syn->dest;
	out->th.dest = syn->source;
	out->th.seq = bpf_htonl(cookie);
	out->th.ack_seq = bpf_htonl(bpf_ntohl(syn->seq) + 1);
	out->th.syn = 1;
	out->th.ack = 1;
	/* Window 0 until SYNPROXY has the server's connection and updates it (as SYNPROXY does). */
	out->th.window = 0;
	out->opt[0] = bpf_htonl((RL_TCPOPT_MSS << 24) | (4 << 16) | mss);
	__u32 words = 1;
	if (o->ts) {
		/* Milliseconds, as the kernel's TCP timestamps, with the options the cookie cannot
		 * hold in the low bits. */
		__u32 ts = (__u32)(bpf_ktime_get_ns() / 1000000) & ~((1u << RL_TS_BITS) - 1);
		ts |= o->wscale & 0xf;
		if (o->sack)
			ts |= RL_TS_SACK;
		__u32 head = (RL_TCPOPT_TIMESTAMP << 8) | RL_TCPOLEN_TIMESTAMP;
		head |= o->sack ? (RL_TCPOPT_SACK_PERM << 24) | (RL_TCPOLEN_SACK_PERM << 16)
				: (RL_TCPOPT_NOP << 24) | (RL_TCPOPT_NOP << 16);
		out->opt[1] = bpf_htonl(head);
		out->opt[2] = bpf_htonl(ts);
		__builtin_memcpy(&out->opt[3], o->tsval, 4);
		words = 4;
		if (o->wscale != RL_TS_WSCALE_NONE) {
			out->opt[4] = bpf_htonl((RL_TCPOPT_NOP << 24) | (RL_TCPOPT_WINDOW << 16) |
						(RL_TCPOLEN_WINDOW << 8) | RL_SYNCOOKIE_WSCALE);
			words = 5;
		}
	}
	out->th.doff = 5 + words;
	return sizeof(struct tcphdr) + words * 4;
}

struct rl_pseudo4 {
	__be32 saddr;
	__be32 daddr;
	__u8 zero;
	__u8 proto;
	__be16 len;
};

struct rl_pseudo6 {
	struct in6_addr saddr;
	struct in6_addr daddr;
	__be32 len;
	__u8 zero[3];
	__u8 proto;
};

#define RL_SC_GO (-1) /* rl_synack_cookie: no verdict yet, the answer goes on */

/* The SYN's TCP header and options copied into w->syn, and the cookie for them: its generation
 * word (*gen) and the MSS it encodes. RL_SC_GO, or the verdict on a SYN that gets no answer. */
static __always_inline int rl_synack_cookie(struct xdp_md *ctx, __u32 l3, __u32 l4, int v4,
					    struct rl_opt_walk *w, __s64 *gen, __u16 *mss)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct tcphdr *th = data + l4;
	if ((void *)(th + 1) > data_end)
		return XDP_DROP;
	__u32 tcp_len = th->doff * 4;
	if (tcp_len < sizeof(struct tcphdr))
		return XDP_DROP;
	w->tcp_len = tcp_len;
	if (bpf_xdp_load_bytes(ctx, l4, w->syn, tcp_len))
		return XDP_DROP;
	if (v4) {
		struct iphdr *ip = data + l3;
		if ((void *)(ip + 1) > data_end)
			return XDP_DROP;
		if (ip->ihl != 5)
			return XDP_PASS;
		*gen = bpf_tcp_raw_gen_syncookie_ipv4(ip, (struct tcphdr *)w->syn, tcp_len);
		*mss = RL_SYNCOOKIE_MSS4;
	} else {
		struct ipv6hdr *ip6 = data + l3;
		if ((void *)(ip6 + 1) > data_end)
			return XDP_DROP;
		if (ip6->nexthdr != IPPROTO_TCP)
			return XDP_PASS;
		*gen = bpf_tcp_raw_gen_syncookie_ipv6(ip6, (struct tcphdr *)w->syn, tcp_len);
		*mss = RL_SYNCOOKIE_MSS6;
	}
	return *gen < 0 ? XDP_DROP : RL_SC_GO;
}

/* The IPv4 header of the SYN-ACK, its addresses swapped; the pseudo header's checksum. */
static __always_inline __s64 rl_synack_ip4(struct iphdr *ip, __u32 out_len)
{
	__be32 a = ip->saddr;
	ip->saddr = ip->daddr;
	ip->daddr = a;
	ip->tos = 0;
	ip->tot_len = bpf_htons(sizeof(struct iphdr) + out_len);
	ip->id = 0;
	ip->frag_off = bpf_htons(0x4000); /* DF */
	ip->ttl = RL_SC_TTL;
	ip->check = 0;
	__s64 sum = bpf_csum_diff(0, 0, (__be32 *)ip, sizeof(*ip), 0);
	if (sum < 0)
		return sum;
	ip->check = rl_csum_fold((__u32)sum);
	struct rl_pseudo4 ph = {.saddr = ip->saddr,
				.daddr = ip->daddr,
				.proto = IPPROTO_TCP,
				.len = bpf_htons(out_len)};
	return bpf_csum_diff(0, 0, (__be32 *)&ph, sizeof(ph), 0);
}

/* The IPv6 header of the SYN-ACK, its addresses swapped; the pseudo header's checksum. */
static __always_inline __s64 rl_synack_ip6(struct ipv6hdr *ip6, __u32 out_len)
{
	struct in6_addr a = ip6->saddr;
	ip6->saddr = ip6->daddr;
	ip6->daddr = a;
	*(__be32 *)ip6 = bpf_htonl(0x60000000); /* no traffic class or flow label */
	ip6->payload_len = bpf_htons(out_len);
	ip6->hop_limit = RL_SC_TTL;
	struct rl_pseudo6 ph = {.saddr = ip6->saddr,
				.daddr = ip6->daddr,
				.len = bpf_htonl(out_len),
				.proto = IPPROTO_TCP};
	return bpf_csum_diff(0, 0, (__be32 *)&ph, sizeof(ph), 0);
}

/* The frame's Ethernet and IP headers turned round for the SYN-ACK of out_len TCP bytes, after
 * the tail was adjusted; the TCP pseudo header's checksum, or < 0 for a frame to drop. */
static __always_inline __s64 rl_synack_headers(struct xdp_md *ctx, __u32 l3, int v4, __u32 out_len)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	if ((void *)(eth + 1) > data_end)
		return -1;
	__u8 mac[ETH_ALEN];
	__builtin_memcpy(mac, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, mac, ETH_ALEN);
	if (v4) {
		struct iphdr *ip = data + l3;
		if ((void *)(ip + 1) > data_end)
			return -1;
		return rl_synack_ip4(ip, out_len);
	}
	struct ipv6hdr *ip6 = data + l3;
	if ((void *)(ip6 + 1) > data_end)
		return -1;
	return rl_synack_ip6(ip6, out_len);
}

/* Turns an admitted SYN into its SYN-ACK in place: XDP_TX. SYNs with IPv4 options or IPv6
 * extension headers are left to the stack's SYNPROXY, which answers them the same way
 * (XDP_PASS), as are SYNs the frame cannot grow for. XDP_DROP when a helper refuses the SYN. */
static __noinline int rl_syncookie_answer(struct xdp_md *ctx, const struct rl_pkt *p)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 l3 = p->l3_off & 0x3f;
	__u32 l4 = p->l4_off & 0x7f;
	int v4 = p->family == 4;
	if (l4 != l3 + (v4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr)))
		return XDP_PASS;

	struct rl_opt_walk w = {.at = sizeof(struct tcphdr)};
	w.o.wscale = RL_TS_WSCALE_NONE;
	__s64 gen;
	__u16 mss;
	int v = rl_synack_cookie(ctx, l3, l4, v4, &w, &gen, &mss);
	if (v != RL_SC_GO)
		return v;

	bpf_loop(40, rl_opt_step, &w, 0);
	struct rl_synack out = {};
	__u32 out_len = rl_build_synack((struct tcphdr *)w.syn, &w.o, (__u32)gen, mss, &out);

	int delta = (int)(l4 + out_len) - (int)(data_end - data);
	if (delta && bpf_xdp_adjust_tail(ctx, delta))
		return XDP_PASS;
	__s64 sum = rl_synack_headers(ctx, l3, v4, out_len);
	if (sum < 0)
		return XDP_DROP;
	sum = bpf_csum_diff(0, 0, (__be32 *)&out, out_len, (__u32)sum);
	if (sum < 0)
		return XDP_DROP;
	out.th.check = rl_csum_fold((__u32)sum);
	if (bpf_xdp_store_bytes(ctx, l4, &out, out_len))
		return XDP_DROP;
	return XDP_TX;
}

#endif /* RL_BPF_SYNCOOKIE_H */
