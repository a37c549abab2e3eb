// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* rlflood's frame rewriter. BPF_PROG_TEST_RUN in live-frames mode hands this program one copy of
 * a template frame per run and transmits what it returns XDP_TX for. Each run gives the frame the
 * next source address, its source port (one port unless --sports) and the matching checksums.
 *
 * The kernel only copies the template into a page the first time the page is used; a recycled
 * page still holds whatever an earlier run (or the receiver) left in it. So nothing here is
 * derived from the frame's current bytes: the source is written whole and every checksum is
 * computed from the template's, which userspace folds into the *_csum_base constants. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by userspace before load (frozen .rodata, so the verifier sees constants). */
const volatile __u32 n_sources = 1;
const volatile __u32 base_low = 0; /* the last 32 bits of source 0, host order */
const volatile __u8 is_v6 = 0;
const volatile __u8 is_tcp = 0;
const volatile __u8 shuffle = 0;   /* 0: sources in order; 1: a permutation of [0, n) */
const volatile __u8 perm_bits = 1; /* the permutation works on [0, 2^perm_bits) */
const volatile __u32 perm_seed = 0;
const volatile __u16 base_sport = 0; /* the template's source port */
const volatile __u32 n_sports = 1;   /* frame n takes base_sport + n mod n_sports */
/* ~(template checksum) + ~(template source words), one's complement, not yet folded; the
 * transport's also + ~(template source port). */
const volatile __u32 ip_csum_base = 0;
const volatile __u32 l4_csum_base = 0;

/* Frames handed out so far; the n-th frame takes source index perm(n mod n_sources) and source
 * port base_sport + n mod n_sports. */
__u64 frames = 0;
/* Paced (live_run.cc): bursts of pace_burst frames, one every pace_interval_ns, at most
 * max_frames in all. Between bursts the program waits on the clock (and drops a frame about every
 * millisecond): the kernel busy-waits in one long call, so bursts go out on time without a call
 * (and a page pool) per burst. Only one thread sends when paced, on one CPU, so the pacing
 * state is plain memory. */
const volatile __u64 pace_interval_ns = 0; /* 0: unpaced */
const volatile __u32 pace_burst = 1;
const volatile __u64 max_frames = ~0ULL;
__u64 pace_due = 0;    /* when the next burst may start; 0: at the first frame */
__u32 pace_left = 0;   /* frames left in the current burst */
__u64 late_bursts = 0; /* bursts that started more than an interval late */
__u64 skipped_ns = 0;  /* schedule skipped to stay within an interval of it */

/* bpf_loop's callback: stops once the clock reaches *due. */
static long pace_wait(__u64 i, void *ctx)
{
	return bpf_ktime_get_ns() >= *(__u64 *)ctx;
}

/* Runs on a frame too short to rewrite: the dispatcher keeper's stub (live_run.cc), counted so
 * that rlflood knows when the keeper's call has put the program in the kernel's dispatcher. Only
 * the keeper's one thread writes it. */
__u64 stub_runs = 0;

#define PERM_MAX_WALK 64

/* A bijection on perm_bits-bit numbers: multiplying by an odd number and xor-shifting right are
 * each invertible modulo 2^bits, so the composition never maps two inputs to one output. */
static __always_inline __u32 mix(__u32 x)
{
	__u32 mask = perm_bits >= 32 ? 0xffffffffu : (1u << perm_bits) - 1;
	__u32 shift = (perm_bits + 1) / 2;

	x = (x * 0x9e3779b1u + perm_seed) & mask;
	x ^= x >> shift;
	x = (x * 0x85ebca6bu) & mask;
	x ^= x >> shift;
	return x;
}

/* Cycle-walking: following mix() from an index below n until it lands below n again gives a
 * permutation of [0, n). Userspace checks that no index walks further than PERM_MAX_WALK. */
static __always_inline __u32 source_index(__u64 n)
{
	__u32 k = (__u32)(n % n_sources);
	__u32 x = k;

	if (!shuffle)
		return k;
	for (int i = 0; i < PERM_MAX_WALK; i++) {
		x = mix(x);
		if (x < n_sources)
			return x;
	}
	return k; /* unreachable for the seeds userspace accepts */
}

static __always_inline __u16 fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)sum;
}

static __always_inline void put16(__u8 *p, __u16 v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

SEC("xdp")
int rlflood(struct xdp_md *ctx)
{
	__u8 *data = (__u8 *)(long)ctx->data;
	__u8 *end = (__u8 *)(long)ctx->data_end;
	/* Ethernet 14; IPv4 source at 12 of 20, IPv6 source at 8 of 40 (its last 4 bytes at 20). */
	__u32 src_off = is_v6 ? 14 + 20 : 14 + 12;
	__u32 l4_off = is_v6 ? 14 + 40 : 14 + 20;
	__u32 l4_csum_off = l4_off + (is_tcp ? 16 : 6);
	__u8 *src = data + src_off;
	__u8 *sport = data + l4_off;
	__u8 *l4_csum = data + l4_csum_off;

	if (src + 4 > end || sport + 2 > end || l4_csum + 2 > end) {
		stub_runs++;
		return XDP_ABORTED;
	}

	if (pace_interval_ns) {
		if (frames >= max_frames)
			return XDP_DROP;
		if (!pace_left) {
			__u64 now = bpf_ktime_get_ns();
			if (!pace_due)
				pace_due = now;
			/* Wait in the program rather than drop frame after frame: each dropped
			 * frame would go back to the call's page pool, whose lock the receiver
			 * takes for every frame it returns. Bounded (about a millisecond), then one
			 * drop lets the kernel check for signals and rescheduling. */
			if (now < pace_due) {
				__u64 due = pace_due;
				bpf_loop(1 << 15, pace_wait, &due, 0);
				now = bpf_ktime_get_ns();
				if (now < pace_due)
					return XDP_DROP;
			}
			/* Late by more than an interval: start again from now rather than send the
			 * backlog at once, which would overflow the receiver's ring. */
			if (now - pace_due > pace_interval_ns) {
				late_bursts++;
				skipped_ns += now - pace_due;
				pace_due = now;
			}
			pace_due += pace_interval_ns;
			pace_left = pace_burst;
		}
		pace_left--;
	}

	__u64 n = __sync_fetch_and_add(&frames, 1);
	__u32 s = base_low + source_index(n);
	__u16 hi = s >> 16, lo = s & 0xffff;
	__u16 port = base_sport + (n_sports > 1 ? (__u16)(n % n_sports) : 0);

	put16(src, hi);
	put16(src + 2, lo);
	put16(sport, port);

	__u16 csum = ~fold(l4_csum_base + hi + lo + port);
	/* In UDP a zero checksum means "none"; the computed zero is sent as its other form. */
	if (!is_tcp && csum == 0)
		csum = 0xffff;
	put16(l4_csum, csum);

	if (!is_v6) {
		__u8 *ip_csum = data + 14 + 10;

		if (ip_csum + 2 > end)
			return XDP_ABORTED;
		put16(ip_csum, ~fold(ip_csum_base + hi + lo));
	}
	return XDP_TX;
}
