/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A packet's working memory: its parsed headers and its limiter's facts, in a per-CPU map rather
 * than on the stack, for two reasons.
 * - The verifier does not track what a map value holds. So the parse's outcomes (family,
 *   protocol, ports, written as constants) do not each make their own states through the rest of
 *   the program, as they would on the stack; and the parse, the rule lookup and a known key's
 *   limit can be inlined, with no BPF-to-BPF call on a usual packet's path (docs/datapath.md,
 *   "Calls on a packet's path").
 * - The 512 bytes that the program's deepest call chain may use keep their room for the frames
 *   of the functions it still calls.
 * Concurrency: the program runs to completion on one CPU with bottom halves off (native XDP in
 * NAPI's softirq, generic XDP under local_bh_disable), so no second run on that CPU starts
 * before it has finished with this memory, and other CPUs have their own copy. Nothing in it
 * outlives the packet but sample_left, the CPU's count of packets to the next traffic sample
 * (sample.h), and the memos of its last match and last unadmitted refusal (memo.h), which the
 * packets of one CPU share one after the other for the same reason.
 */
#ifndef RL_BPF_SCRATCH_H
#define RL_BPF_SCRATCH_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "parse.h"
#include "limiter.h"
#include "memo.h"
#include "outcome.h"

struct rl_scratch {
	/* The packet's headers, and the CPU's last match's in the other one (memo.h). */
	struct rl_pkt pkt[2];
	struct rl_limit_info info;
	struct rl_memo memo;		      /* the CPU's last match */
	struct rl_memo_unadmitted unadmitted; /* the CPU's last unadmitted refusal */
	struct rl_outcome outcome;	      /* this packet's, for rl_account */
	__u32 sample_left; /* matched packets this CPU lets by before its next sample */
	__u32 pad;
	struct rl_key stacked_key; /* a stacked limit's key for the packet (stacked.h) */
	union {			   /* the key of an override's lookup (override.h) */
		struct rl_override4_key v4;
		struct rl_override6_key v6;
	} override_key;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rl_scratch);
} rl_scratch SEC(".maps");

#endif /* RL_BPF_SCRATCH_H */
