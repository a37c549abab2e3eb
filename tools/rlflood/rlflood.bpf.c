// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* rlflood's frame rewriter. BPF_PROG_TEST_RUN in live-frames mode hands this program one copy of
 * a template frame per run and transmits what it returns XDP_TX for. Each run gives the frame the
 * next source address, its source port (one port unless --sports) and the matching checksums.
 *
 * The rewrite itself is flood_frame.bpf.h's, shared with the packet ring sender.
 *
 * The kernel only copies the template into a page the first time the page is used; a recycled
 * page still holds whatever an earlier run (or the receiver) left in it, which is why the rewrite
 * never reads the frame. */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "flood_frame.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by userspace before load (frozen .rodata, so the verifier sees constants). */
const volatile struct flood_frame_spec spec = {.n_sources = 1, .n_sports = 1, .perm_bits = 1};

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

SEC("xdp")
int rlflood(struct xdp_md *ctx)
{
	__u8 *data = (__u8 *)(long)ctx->data;
	__u8 *end = (__u8 *)(long)ctx->data_end;

	if (data + flood_frame_need(&spec) > end) {
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

	flood_frame_write(&spec, data, __sync_fetch_and_add(&frames, 1));
	return XDP_TX;
}
