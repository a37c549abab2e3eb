// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rl_xdp: the rate limiter's XDP program. Order of decisions for a packet:
 *   parse -> runtime allow/deny -> policy allow/deny -> first matching rule -> its limiter
 *   (for a key the table does not hold yet: the rule's new-source budget first, limiter.h)
 *   -> for a packet whose transport could not be parsed and that nothing above decided, the
 *   malformed verdict.
 * Every packet that matched a rule may then be sampled for `rlctl top --by traffic` with its
 * verdict (sample.h), whatever that verdict is.
 * Only a packet without a usable IP header skips the lists and rules: it has no source to judge.
 * The generation is read once per packet, so each packet sees one complete rule set. A packet
 * whose headers equal its CPU's previous one's in every field the rule set reads takes that
 * packet's outcome of the policy lists and the rules, and from its source its key, from the CPU's
 * memo (memo.h).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "rl_abi.h"
#include "clock.h"
#include "parse.h"
#include "classify.h"
#include "limiter.h"
#include "cluster.h"
#include "stats.h"
#include "stacked.h"
#include "syncookie.h"
#include "sample.h"
#include "scratch.h"
#include "memo.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Load-time settings. */
const volatile __u32 rl_trace_decisions = 0; /* tests: record each decision in rl_trace */
/* Benchmarks: replace the low 32 bits of an IPv6 source with n mod rl_bench_src_spread, n
 * counting packets, so one BPF_PROG_TEST_RUN repeat loop sees a stream of distinct sources
 * (2001:db8::/96 + n for the benchmark's frames). Zero, and compiled out, in production. */
const volatile __u32 rl_bench_src_spread = 0;
/* The kernel has the conntrack lookup SYN cookies need (bpf/lib/syncookie.h). */
const volatile __u32 rl_syncookies_available = 0;

struct rl_decision rl_trace = {};
__u32 rl_bench_counter = 0;

static __always_inline int rl_finish(__u32 verdict, __u32 reason, int pos, __u32 rule_id,
				     __u64 hash, int overflow, int unadmitted, __u32 limit)
{
	if (rl_trace_decisions) {
		rl_trace.verdict = verdict;
		rl_trace.reason = reason;
		rl_trace.rule_pos = pos;
		rl_trace.rule_id = rule_id;
		rl_trace.key_hash = hash;
		rl_trace.overflow = overflow;
		rl_trace.unadmitted = unadmitted;
		rl_trace.limit = limit;
	}
	return verdict;
}

/* Anything but an explicit pass drops: a generation written before the policy said otherwise
 * errs on the safe side. */
static __always_inline __u32 rl_malformed_verdict(const struct rl_gen_config *gc)
{
	return gc->malformed_verdict == RL_VERDICT_PASS ? XDP_PASS : XDP_DROP;
}

/* The source lists' verdict on the packet (RL_MEMO_ALLOW or RL_MEMO_DENY), else the position of
 * the first rule that matches it, else RL_MEMO_UNDECIDED: what the CPU's memo keeps (memo.h). */
static __always_inline int rl_match(__u32 gen, const struct rl_gen_config *gc,
				    const struct rl_pkt *p)
{
	const struct rl_src_entry *src = rl_lookup_source(gen, gc, p);
	if (!src)
		return RL_MEMO_UNDECIDED;
	if (src->flags & RL_SRC_F_ALLOW)
		return RL_MEMO_ALLOW;
	if (src->flags & RL_SRC_F_DENY)
		return RL_MEMO_DENY;
	if (!gc->rule_count)
		return RL_MEMO_UNDECIDED;
	int pos = rl_match_rule(gen, gc, src->class_id, p);
	return pos < 0 ? RL_MEMO_UNDECIDED : pos;
}

/* No list and no rule decided the packet. */
static __always_inline int rl_undecided(const struct rl_gen_config *gc, const struct rl_pkt *p,
					__u64 bytes)
{
	if (p->flags & RL_PKT_F_NO_L4)
		return rl_finish(rl_malformed_verdict(gc), RL_REASON_MALFORMED, -1, 0, 0, 0, 0, 0);
	rl_count(RL_GC_UNMATCHED, bytes);
	return rl_finish(XDP_PASS, RL_REASON_UNMATCHED, -1, 0, 0, 0, 0, 0);
}

SEC("xdp")
int rl_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 bytes = data_end - data;
	__u32 zero = 0;

	rl_count(RL_GC_RX, bytes);
	if (rl_trace_decisions)
		rl_trace.memo = 0;

	struct rl_scratch *scratch = bpf_map_lookup_elem(&rl_scratch, &zero);
	if (!scratch)
		return XDP_PASS;
	struct rl_memo *memo = &scratch->memo;
	__u32 at = rl_memo_parse_into(memo);
	struct rl_pkt *pkt = &scratch->pkt[at];
	__builtin_memset(pkt, 0, sizeof(*pkt));

	struct rl_control *ctl = bpf_map_lookup_elem(&rl_control, &zero);
	if (!ctl)
		return XDP_PASS;
	/* The epoch names the rule set (memo.h), its low bit the generation that holds it. */
	__u32 epoch = RL_READ_ONCE(ctl->active_gen);
	__u32 gen = epoch & 1;
	struct rl_gen_config *gc = bpf_map_lookup_elem(&rl_gen_config, &gen);
	if (!gc)
		return XDP_PASS;

	int rc = rl_parse_frame(ctx, pkt);
	if (rc == RL_PARSE_NON_IP) {
		rl_count(RL_GC_NON_IP, bytes);
		return rl_finish(XDP_PASS, RL_REASON_NON_IP, -1, 0, 0, 0, 0, 0);
	}
	if (rc < 0) {
		rl_count(RL_GC_MALFORMED, bytes);
		return rl_finish(rl_malformed_verdict(gc), RL_REASON_MALFORMED, -1, 0, 0, 0, 0, 0);
	}
	/* The source is known: the lists and the rules that need no port judge it first. */
	if (pkt->flags & RL_PKT_F_NO_L4)
		rl_count(RL_GC_MALFORMED, bytes);
	if (pkt->fragment)
		rl_count(RL_GC_FRAGMENTS, bytes);

	if (rl_bench_src_spread && pkt->family == 6) {
		/* Atomic, so that CPUs running at once never send the same source twice. */
		__u32 n = __sync_fetch_and_add(&rl_bench_counter, 1);
		pkt->saddr[3] = bpf_htonl(n % rl_bench_src_spread);
	}

	if (ctl->runtime_acl_v4 | ctl->runtime_acl_v6) {
		/* Expiries are seconds to hours away: a tick of lateness does not matter. */
		__u32 f = rl_lookup_runtime(ctl, pkt, rl_now_coarse());
		if (f & RL_SRC_F_ALLOW) {
			rl_count(RL_GC_RUNTIME_ALLOWED, bytes);
			return rl_finish(XDP_PASS, RL_REASON_RUNTIME_ALLOW, -1, 0, 0, 0, 0, 0);
		}
		if (f & RL_SRC_F_DENY) {
			rl_count(RL_GC_RUNTIME_DENIED, bytes);
			return rl_finish(XDP_DROP, RL_REASON_RUNTIME_DENY, -1, 0, 0, 0, 0, 0);
		}
	}

	int pos = rl_memo_outcome(memo, epoch, gc, pkt, &scratch->pkt[at ^ 1]);
	if (pos == RL_MEMO_MISS) {
		pos = rl_match(gen, gc, pkt);
		rl_memo_keep(memo, epoch, at, pos);
	} else if (rl_trace_decisions) {
		rl_trace.memo = 1;
	}
	if (pos == RL_MEMO_ALLOW) {
		rl_count(RL_GC_ALLOWLISTED, bytes);
		return rl_finish(XDP_PASS, RL_REASON_ALLOWLIST, -1, 0, 0, 0, 0, 0);
	}
	if (pos == RL_MEMO_DENY) {
		rl_count(RL_GC_DENYLISTED, bytes);
		return rl_finish(XDP_DROP, RL_REASON_DENYLIST, -1, 0, 0, 0, 0, 0);
	}
	if (pos < 0 || pos >= RL_MAX_RULES)
		return rl_undecided(gc, pkt, bytes);
	__u32 ridx = rl_rule_index(gen, pos);
	struct rl_rule *r = bpf_map_lookup_elem(&rl_rules, &ridx);
	if (!r)
		return rl_undecided(gc, pkt, bytes);

	/* Every path below counts the packet as passed or dropped, so the reader derives matched
	 * (rl_rule_counters): one read-modify-write fewer on the rule's line per packet. */
	struct rl_rule_counters *rc_ = rl_rule_counters(r->stats_slot);
	/* The rule's key, built before any verdict: a sampled packet carries it (sample.h). */
	struct rl_limit_info *info = &scratch->info;
	__builtin_memset(info, 0, sizeof(*info));
	info->bytes = bytes;
	info->ridx = ridx;
	/* A packet that met the memo parsed into the other packet than the memo's (a miss makes its
	 * own packet the memo's). From the memo's source, its key may be remembered, or be the one
	 * to remember; from another (a family without source prefixes), it is its own. */
	int repeat = memo->at != at && rl_memo_same_source(pkt, &scratch->pkt[at ^ 1]);
	if (repeat && memo->keyed) {
		__builtin_memcpy(&info->key, &memo->key, sizeof(info->key));
		info->hash = memo->hash;
	} else {
		rl_key_build(&info->key, r, pkt);
		info->hash = rl_key_hash(&info->key, rl_hash_seed);
		if (repeat)
			rl_memo_keep_key(memo, &info->key, info->hash);
	}

	/* A syn_cookies rule answers SYNs itself and lets through only packets of connections
	 * conntrack knows and ACKs with a valid cookie; what it lets through meets the limit as
	 * usual, and a SYN's admission is the SYN-ACK's (so rl cannot be made a reflector). */
	int sc = RL_SC_FLOW;
	if (rl_syncookies_available && (r->flags & RL_RULE_F_SYN_COOKIES) &&
	    pkt->port_kind == RL_PORT_KIND_TCP) {
		sc = rl_syncookie_classify(ctx, pkt);
		if (sc == RL_SC_REJECT) {
			rl_count(RL_GC_SYNCOOKIE_REJECTED, bytes);
			if (rc_) {
				rc_->dropped_pkts++;
				rc_->dropped_bytes += bytes;
			}
			return rl_traffic(&info->key, bytes,
					  rl_finish(XDP_DROP, RL_REASON_SYNCOOKIE_REJECTED, pos,
						    r->id, 0, 0, 0, 0));
		}
		if (sc == RL_SC_COOKIE_OK)
			rl_count(RL_GC_SYNCOOKIE_ACCEPTED, bytes);
	}

	__u64 now = (r->flags & RL_RULE_F_PRECISE_CLOCK) ? rl_now_precise() : rl_now_coarse();

	info->now = now;
	int res;
	if ((r->flags & RL_RULE_F_CLUSTER) && rl_cluster_over_limit(&info->key, now)) {
		/* The fleet used up this key's limit: the local bucket is not charged. */
		rl_count(RL_GC_CLUSTER_LIMITED, bytes);
		if (rc_) {
			if (r->action == RL_ACTION_MONITOR) {
				rc_->monitored_pkts++;
				rc_->monitored_bytes += bytes;
				rc_->passed_pkts++;
				rc_->passed_bytes += bytes;
			} else {
				rc_->dropped_pkts++;
				rc_->dropped_bytes += bytes;
			}
		}
		__u32 v = r->action == RL_ACTION_MONITOR ? XDP_PASS : XDP_DROP;
		return rl_traffic(&info->key, bytes,
				  rl_finish(v, RL_REASON_CLUSTER_LIMITED, pos, r->id, 0, 0, 0, 0));
	}
	/* From the memo's source, the memo may hold the key's refusal (memo.h). */
	res = repeat ? rl_memo_refusal(memo, r, now, bytes) : RL_LIMIT_SLOW;
	__u32 resets = rl_key_resets; /* before the words (rl_memo_refusal) */
	if (res == RL_LIMIT_SLOW) {
		__u64 seen = 0;
		res = rl_limit_known(r, info, &seen);
		if (repeat && (res == RL_LIMIT_OVER || res == RL_LIMIT_BLOCKED) &&
		    rl_memo_refusals_kept(r))
			rl_memo_keep_refusal(memo, seen, resets);
	} else if (rl_trace_decisions) {
		rl_trace.memo = 2;
	}
	/* A source the summary rules out: the memo may hold its rule's unadmitted refusal. */
	struct rl_memo_unadmitted *unadm = &scratch->unadmitted;
	if (res == RL_LIMIT_SLOW && info->found == RL_SET_UNSEEN) {
		res = rl_memo_unadmitted_refusal(unadm, epoch, ridx, r, now, bytes, info);
		if (res != RL_LIMIT_SLOW && rl_trace_decisions)
			rl_trace.memo = 3;
	}
	if (res == RL_LIMIT_SLOW) {
		/* rl_limit writes what it sees into the memo's words. */
		unadm->kept = 0;
		unadm->words.seen = 0;
		res = rl_limit(r, pkt, info, &unadm->words);
		if (unadm->words.seen && rl_memo_refusals_kept(r))
			rl_memo_keep_unadmitted(unadm, epoch, ridx, resets, info);
	}
	if (info->inserted)
		rl_count(RL_GC_KEY_INSERTED, 0);
	if (info->unadmitted)
		rl_count(RL_GC_NEW_UNADMITTED, bytes);
	__u32 by = 0; /* the limit that refused the packet */
	if (res == RL_LIMIT_ADMIT && r->more_limits) {
		struct rl_stack_ctx stk = {.now = now, .bytes = bytes, .ridx = ridx};
		res = rl_more_limits(r, pkt, &stk);
		if (stk.inserted)
			rl_count(RL_GC_KEY_INSERTED, 0);
		if (res != RL_LIMIT_ADMIT) {
			rl_limit_refund(r, info);
			by = stk.by;
			info->hash = stk.hash;
			info->overflow = stk.overflow;
		}
	}
	if (info->overflow)
		rl_count(RL_GC_KEY_OVERFLOW, bytes);

	if (res == RL_LIMIT_ADMIT) {
		if (r->flags & RL_RULE_F_CLUSTER)
			rl_cluster_admitted_add(r, &info->key, rl_cost_units(r, bytes));
		if (sc == RL_SC_SYN) {
			int v = rl_syncookie_answer(ctx, pkt);
			if (v == XDP_DROP) {
				rl_count(RL_GC_SYNCOOKIE_REJECTED, bytes);
				if (rc_) {
					rc_->dropped_pkts++;
					rc_->dropped_bytes += bytes;
				}
				return rl_traffic(&info->key, bytes,
						  rl_finish(XDP_DROP, RL_REASON_SYNCOOKIE_REJECTED,
							    pos, r->id, info->hash, info->overflow,
							    info->unadmitted, r->more_limits));
			}
			if (v == XDP_TX)
				rl_count(RL_GC_SYNCOOKIE_SENT, bytes);
			if (rc_) {
				rc_->passed_pkts++;
				rc_->passed_bytes += bytes;
			}
			return rl_traffic(
			    &info->key, bytes,
			    rl_finish(v,
				      v == XDP_TX ? RL_REASON_SYNCOOKIE_SENT : RL_REASON_ADMITTED,
				      pos, r->id, info->hash, info->overflow, info->unadmitted,
				      r->more_limits));
		}
		if (rc_) {
			rc_->passed_pkts++;
			rc_->passed_bytes += bytes;
		}
		return rl_traffic(&info->key, bytes,
				  rl_finish(XDP_PASS, RL_REASON_ADMITTED, pos, r->id, info->hash,
					    info->overflow, info->unadmitted, r->more_limits));
	}

	__u32 reason = RL_REASON_LIMITED;
	if (res == RL_LIMIT_BLOCKED) {
		reason = RL_REASON_BLOCKED;
		rl_count(RL_GC_BLOCKED, bytes);
	} else if (res == RL_LIMIT_EXHAUSTED) {
		reason = RL_REASON_CAS_EXHAUSTED;
		rl_count(RL_GC_CAS_EXHAUSTED, bytes);
	}
	/* An unadmitted packet is reported as its shared key: one report for a whole flood. A
	 * stacked limit that refused has reported its own key. */
	if (!by)
		rl_offender(r, info->unadmitted ? &info->shared : &info->key, info->hash, now,
			    res == RL_LIMIT_BLOCKED);
	if (r->more_limits)
		rl_count_limit(r->stats_slot, by, bytes);

	if (r->action == RL_ACTION_MONITOR) {
		if (rc_) {
			rc_->monitored_pkts++;
			rc_->monitored_bytes += bytes;
			rc_->passed_pkts++;
			rc_->passed_bytes += bytes;
		}
		return rl_traffic(&info->key, bytes,
				  rl_finish(XDP_PASS, reason, pos, r->id, info->hash,
					    info->overflow, info->unadmitted, by));
	}
	if (rc_) {
		rc_->dropped_pkts++;
		rc_->dropped_bytes += bytes;
	}
	return rl_traffic(&info->key, bytes,
			  rl_finish(XDP_DROP, reason, pos, r->id, info->hash, info->overflow,
				    info->unadmitted, by));
}

/* The data path's clock, for the controller: expiries it writes (runtime entries, cluster
 * blocks) must be in the clock packets compare them with, which a process in another time
 * namespace does not read with clock_gettime(). rld runs this with BPF_PROG_TEST_RUN. It also
 * reads jiffies on both sides of the time, so that the loader can tell the jiffy that time fell
 * in (clock.h), and the coarse clock as packets read it. */
__u64 rl_clock_ns = 0;
__u64 rl_clock_jiffies[2] = {};
__u64 rl_clock_packet_ns = 0;

SEC("syscall")
int rl_clock(void *ctx)
{
	rl_clock_jiffies[0] = bpf_jiffies64();
	rl_clock_ns = bpf_ktime_get_ns();
	rl_clock_jiffies[1] = bpf_jiffies64();
	rl_clock_packet_ns = rl_jiffies_clock();
	return 0;
}
