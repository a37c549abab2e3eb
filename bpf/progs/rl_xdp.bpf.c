// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rl_xdp: the rate limiter's XDP program. A packet goes through the stages rl_xdp() lists:
 *   setup -> parse -> runtime allow/deny -> policy lists and first matching rule (or the
 *   CPU's memo of its last match, memo.h) -> the rule's key -> SYN cookies -> cluster block
 *   -> the rule's own limit and its stacked limits -> admitted or refused
 * Each stage either decides the packet, filling its outcome (outcome.h), or leaves what the
 * next needs in struct rl_path; rl_account() books every outcome in one place. A packet
 * without a usable IP header skips the lists and rules: it has no source to judge. One whose
 * transport could not be parsed, and that nothing decided, gets the malformed verdict. The
 * generation is read once per packet, so each packet sees one complete rule set.
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
#include "outcome.h"
#include "override.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Load-time settings. */
const volatile __u32 rl_trace_decisions = 0; /* tests: record each decision in rl_trace */
/* Benchmarks and tests: replace bits 32-63 of an IPv6 source with n mod rl_bench_src_spread, n
 * counting packets, so one BPF_PROG_TEST_RUN repeat loop sees a stream of distinct clients (each
 * its own /64, as per-source keys take them). Zero, and compiled out by the verifier, in
 * production. */
const volatile __u32 rl_bench_src_spread = 0;
/* The kernel has the conntrack lookup SYN cookies need (bpf/lib/syncookie.h). */
const volatile __u32 rl_syncookies_available = 0;

struct rl_decision rl_trace = {};
__u32 rl_bench_counter = 0;

/* What a stage needs of the stages before it. */
struct rl_path {
	struct xdp_md *ctx;
	struct rl_scratch *scratch;
	struct rl_pkt *pkt;
	struct rl_control *ctl;
	struct rl_gen_config *gc;
	const struct rl_rule *rule;	   /* from the rule stage on */
	struct rl_rule_counters *counters; /* the rule's; NULL before a rule matched */
	struct rl_limit_info *info;	   /* the rule's key, and what its limit found */
	__u64 bytes;
	__u64 now;
	__u32 epoch; /* names the rule set (memo.h); its low bit is the generation */
	__u32 gen;
	__u32 at;     /* which of scratch->pkt is this packet's */
	int repeat;   /* the packet has the memo's source (memo.h) */
	int sc;	      /* the SYN cookie class (syncookie.h) */
	__u32 resets; /* rl_key_resets as the memo's words were read */
};

static __always_inline int rl_decide(struct rl_outcome *o, __u32 verdict, __u32 reason,
				     __u32 counter)
{
	o->d.verdict = verdict;
	o->d.reason = reason;
	o->counter = counter;
	return 1;
}

/* Anything but an explicit pass drops: a generation written before the policy said otherwise
 * errs on the safe side. */
static __always_inline __u32 rl_malformed_verdict(const struct rl_gen_config *gc)
{
	return gc->malformed_verdict == RL_VERDICT_PASS ? XDP_PASS : XDP_DROP;
}

/* The one place a packet's outcome is counted: the global counter, the rule's counters (a packet
 * of a rule counts as passed or dropped, so readers derive matched), the test trace, and the
 * traffic sample of a packet that matched a rule. Inlined at each exit, with no call on the
 * packet's path; the outcome is read from the CPU's scratch, whose contents the verifier does not
 * track, so the exits' different outcomes do not multiply its states. */
static __always_inline int rl_account(const struct rl_path *p, const struct rl_outcome *o)
{
	if (o->counter != RL_GC_MAX)
		rl_count(o->counter, p->bytes);
	struct rl_rule_counters *rc = p->counters;
	if (rc) {
		if (o->d.verdict == XDP_DROP) {
			rc->dropped_pkts++;
			rc->dropped_bytes += p->bytes;
		} else {
			if (o->monitored) {
				rc->monitored_pkts++;
				rc->monitored_bytes += p->bytes;
			}
			rc->passed_pkts++;
			rc->passed_bytes += p->bytes;
		}
	}
	if (rl_trace_decisions)
		__builtin_memcpy(&rl_trace, &o->d, sizeof(rl_trace));
	if (o->d.rule_pos >= 0)
		return rl_traffic(&p->info->key, p->bytes, o->d.verdict);
	return o->d.verdict;
}

/* The CPU's scratch, the control block and the rule set in force; 0 if a map is missing. */
static __always_inline int rl_stage_setup(struct rl_path *p)
{
	__u32 zero = 0;
	p->scratch = bpf_map_lookup_elem(&rl_scratch, &zero);
	if (!p->scratch)
		return 0;
	p->at = rl_memo_parse_into(&p->scratch->memo);
	p->pkt = &p->scratch->pkt[p->at];
	__builtin_memset(p->pkt, 0, sizeof(*p->pkt));
	p->ctl = bpf_map_lookup_elem(&rl_control, &zero);
	if (!p->ctl)
		return 0;
	p->epoch = RL_READ_ONCE(p->ctl->active_gen);
	p->gen = p->epoch & 1;
	p->gc = bpf_map_lookup_elem(&rl_gen_config, &p->gen);
	return p->gc != 0;
}

/* Headers: a packet without a usable IP header is decided here. One whose transport could not
 * be parsed still has a source for the lists and the rules that need no port. */
static __always_inline int rl_stage_parse(struct rl_path *p, struct rl_outcome *o)
{
	struct rl_pkt *pkt = p->pkt;
	int rc = rl_parse_frame(p->ctx, pkt);
	if (rc == RL_PARSE_NON_IP)
		return rl_decide(o, XDP_PASS, RL_REASON_NON_IP, RL_GC_NON_IP);
	if (rc < 0)
		return rl_decide(o, rl_malformed_verdict(p->gc), RL_REASON_MALFORMED,
				 RL_GC_MALFORMED);
	if (pkt->flags & RL_PKT_F_NO_L4)
		rl_count(RL_GC_MALFORMED, p->bytes);
	if (pkt->fragment)
		rl_count(RL_GC_FRAGMENTS, p->bytes);
	if (rl_bench_src_spread && pkt->family == 6) {
		/* Atomic, so that CPUs running at once never send the same source twice. */
		__u32 n = __sync_fetch_and_add(&rl_bench_counter, 1);
		pkt->saddr[1] = bpf_htonl(n % rl_bench_src_spread);
	}
	return 0;
}

/* rlctl's runtime allow and deny entries, before the policy. */
static __always_inline int rl_stage_runtime_lists(struct rl_path *p, struct rl_outcome *o)
{
	if (!(p->ctl->runtime_acl_v4 | p->ctl->runtime_acl_v6))
		return 0;
	/* Expiries are seconds to hours away: a tick of lateness does not matter. */
	__u32 f = rl_lookup_runtime(p->ctl, p->pkt, rl_now_coarse());
	if (f & RL_SRC_F_ALLOW)
		return rl_decide(o, XDP_PASS, RL_REASON_RUNTIME_ALLOW, RL_GC_RUNTIME_ALLOWED);
	if (f & RL_SRC_F_DENY)
		return rl_decide(o, XDP_DROP, RL_REASON_RUNTIME_DENY, RL_GC_RUNTIME_DENIED);
	return 0;
}

/* The source lists' verdict on the packet (RL_MEMO_ALLOW or RL_MEMO_DENY), else the position of
 * the first rule that matches it, else RL_MEMO_UNDECIDED: what the CPU's memo keeps (memo.h). Or
 * RL_MATCH_REST - w, for rl_match_rest to go on from word w. */
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
	return pos < 0 && pos > RL_MATCH_REST ? RL_MEMO_UNDECIDED : pos;
}

/* No list and no rule decided the packet. */
static __always_inline int rl_undecided(const struct rl_path *p, struct rl_outcome *o)
{
	if (p->pkt->flags & RL_PKT_F_NO_L4) /* counted malformed by the parse stage */
		return rl_decide(o, rl_malformed_verdict(p->gc), RL_REASON_MALFORMED, RL_GC_MAX);
	return rl_decide(o, XDP_PASS, RL_REASON_UNMATCHED, RL_GC_UNMATCHED);
}

/* The policy's lists, then its first matching rule, from the CPU's memo when the headers equal
 * its last match's: decides the packet, or leaves p->rule set. */
static __always_inline int rl_stage_rule(struct rl_path *p, struct rl_outcome *o)
{
	struct rl_memo *memo = &p->scratch->memo;
	int pos = rl_memo_outcome(memo, p->epoch, p->gc, p->pkt, &p->scratch->pkt[p->at ^ 1]);
	if (pos == RL_MEMO_MISS) {
		pos = rl_match(p->gen, p->gc, p->pkt);
		/* Called here, where what it needs is in *p, rather than where the inline walk
		 * would keep it in registers it needs for its bitmaps. */
		if (pos <= RL_MATCH_REST)
			pos = rl_match_rest(p->pkt, p->gen, (__u32)(RL_MATCH_REST - pos));
		rl_memo_keep(memo, p->epoch, p->at, pos);
	} else {
		o->d.memo = 1;
	}
	if (pos == RL_MEMO_ALLOW)
		return rl_decide(o, XDP_PASS, RL_REASON_ALLOWLIST, RL_GC_ALLOWLISTED);
	if (pos == RL_MEMO_DENY)
		return rl_decide(o, XDP_DROP, RL_REASON_DENYLIST, RL_GC_DENYLISTED);
	if (pos < 0)
		return rl_undecided(p, o);
	__u32 ridx = rl_rule_index(p->gen, pos);
	p->rule = bpf_map_lookup_elem(&rl_rules, &ridx);
	if (!p->rule)
		return rl_undecided(p, o);
	o->d.rule_pos = pos;
	o->d.rule_id = p->rule->id;
	p->counters = rl_rule_counters(p->rule->stats_slot);
	p->info = &p->scratch->info;
	__builtin_memset(p->info, 0, sizeof(*p->info));
	p->info->bytes = p->bytes;
	p->info->ridx = ridx;
	return 0;
}

/* The rule's key, built before any verdict so that a sampled packet carries it (sample.h). A
 * packet that met the memo parsed into the other packet than the memo's (a miss makes its own
 * packet the memo's). From the memo's source, its key may be remembered, or be the one to
 * remember; from another (a family without source prefixes), it is its own. */
static __always_inline void rl_stage_key(struct rl_path *p)
{
	struct rl_memo *memo = &p->scratch->memo;
	struct rl_limit_info *info = p->info;
	p->repeat = memo->at != p->at && rl_memo_same_source(p->pkt, &p->scratch->pkt[p->at ^ 1]);
	if (p->repeat && memo->keyed) {
		__builtin_memcpy(&info->key, &memo->key, sizeof(info->key));
		info->hash = memo->hash;
		return;
	}
	rl_key_build(&info->key, p->rule, p->pkt);
	info->hash = rl_key_hash(&info->key, rl_hash_seed);
	if (p->repeat)
		rl_memo_keep_key(memo, &info->key, info->hash);
}

/* A syn_cookies rule answers SYNs itself and lets through only packets of connections conntrack
 * knows and ACKs with a valid cookie; what it lets through meets the limit as usual, and a SYN's
 * admission is the SYN-ACK's (rl_stage_verdict), so rl cannot be made a reflector. */
static __always_inline int rl_stage_syncookie(struct rl_path *p, struct rl_outcome *o)
{
	p->sc = RL_SC_FLOW;
	if (!rl_syncookies_available || !(p->rule->flags & RL_RULE_F_SYN_COOKIES) ||
	    p->pkt->port_kind != RL_PORT_KIND_TCP)
		return 0;
	p->sc = rl_syncookie_classify(p->ctx, p->pkt);
	if (p->sc == RL_SC_REJECT)
		return rl_decide(o, XDP_DROP, RL_REASON_SYNCOOKIE_REJECTED,
				 RL_GC_SYNCOOKIE_REJECTED);
	if (p->sc == RL_SC_COOKIE_OK)
		rl_count(RL_GC_SYNCOOKIE_ACCEPTED, p->bytes);
	return 0;
}

/* The fleet used up this key's limit (cluster.h): the local bucket is not charged. */
static __always_inline int rl_stage_cluster(struct rl_path *p, struct rl_outcome *o)
{
	const struct rl_rule *r = p->rule;
	p->now = (r->flags & RL_RULE_F_PRECISE_CLOCK) ? rl_now_precise() : rl_now_coarse();
	p->info->now = p->now;
	if (!(r->flags & RL_RULE_F_CLUSTER) || !rl_cluster_over_limit(&p->info->key, p->now))
		return 0;
	o->monitored = r->action == RL_ACTION_MONITOR;
	return rl_decide(o, o->monitored ? XDP_PASS : XDP_DROP, RL_REASON_CLUSTER_LIMITED,
			 RL_GC_CLUSTER_LIMITED);
}

/* The rule's own limit: from the memo's refusal of the key or of the rule's unadmitted sources
 * when it holds one (memo.h), else the key table (limiter.h). */
/* The rule's own limit as an operator's override judges it for this source (override.h): by
 * the global rl_limit, which the override's copy is handed to and dropped after, without the
 * inline path's memo or known-key judgement. */
static __always_inline int rl_overridden_limit(struct rl_path *p, const struct rl_rule *ov)
{
	struct rl_memo_unadmitted *unadm = &p->scratch->unadmitted;
	unadm->kept = 0;
	unadm->words.seen = 0;
	/* Its rate may need the precise clock where the rule's does not. */
	if (ov->flags & RL_RULE_F_PRECISE_CLOCK)
		p->info->now = rl_now_precise();
	int res = rl_limit(ov, p->pkt, p->info, &unadm->words);
	unadm->words.seen = 0;
	return res;
}

static __always_inline int rl_own_limit(struct rl_path *p, struct rl_outcome *o)
{
	const struct rl_rule *r = p->rule;
	struct rl_limit_info *info = p->info;
	struct rl_memo *memo = &p->scratch->memo;
	const struct rl_rule *ov = rl_override_of(r, p->pkt, p->now);
	if (ov) {
		int res = rl_overridden_limit(p, ov);
		if (info->inserted)
			rl_count(RL_GC_KEY_INSERTED, 0);
		if (info->unadmitted)
			rl_count(RL_GC_NEW_UNADMITTED, p->bytes);
		return res;
	}
	int res = p->repeat ? rl_memo_refusal(memo, r, p->now, p->bytes) : RL_LIMIT_SLOW;
	p->resets = rl_key_resets; /* before the words (rl_memo_refusal) */
	if (res == RL_LIMIT_SLOW) {
		__u64 seen = 0;
		res = rl_limit_known(r, info, &seen);
		if (p->repeat && (res == RL_LIMIT_OVER || res == RL_LIMIT_BLOCKED) &&
		    rl_memo_refusals_kept(r))
			rl_memo_keep_refusal(memo, seen, p->resets);
	} else {
		o->d.memo = 2;
	}
	/* A source the summary rules out: the memo may hold its rule's unadmitted refusal. */
	struct rl_memo_unadmitted *unadm = &p->scratch->unadmitted;
	if (res == RL_LIMIT_SLOW && info->found == RL_SET_UNSEEN) {
		res = rl_memo_unadmitted_refusal(unadm, p->epoch, info->ridx, r, p->now, p->bytes,
						 info);
		if (res != RL_LIMIT_SLOW)
			o->d.memo = 3;
	}
	if (res == RL_LIMIT_SLOW) {
		/* rl_limit writes what it sees into the memo's words. */
		unadm->kept = 0;
		unadm->words.seen = 0;
		res = rl_limit(r, p->pkt, info, &unadm->words);
		if (unadm->words.seen && rl_memo_refusals_kept(r))
			rl_memo_keep_unadmitted(unadm, p->epoch, info->ridx, p->resets, info);
	}
	if (info->inserted)
		rl_count(RL_GC_KEY_INSERTED, 0);
	if (info->unadmitted)
		rl_count(RL_GC_NEW_UNADMITTED, p->bytes);
	return res;
}

/* The rule's own limit, then its stacked limits (stacked.h): RL_LIMIT_*, with the limit that
 * refused the packet in o->d.limit (0 for the rule's own) and the judging key in o->d. */
static __always_inline int rl_stage_limits(struct rl_path *p, struct rl_outcome *o)
{
	const struct rl_rule *r = p->rule;
	struct rl_limit_info *info = p->info;
	int res = rl_own_limit(p, o);
	if (res == RL_LIMIT_ADMIT && r->more_limits) {
		struct rl_stack_ctx stk = {.now = p->now, .bytes = p->bytes, .ridx = info->ridx};
		res = rl_more_limits(r, p->pkt, &stk);
		if (stk.inserted)
			rl_count(RL_GC_KEY_INSERTED, 0);
		if (res != RL_LIMIT_ADMIT) {
			const struct rl_rule *ov = rl_override_of(r, p->pkt, p->now);
			if (ov)
				rl_limit_refund(ov, info);
			else
				rl_limit_refund(r, info);
			o->d.limit = stk.by;
			info->hash = stk.hash;
			info->overflow = stk.overflow;
		}
	}
	if (info->overflow)
		rl_count(RL_GC_KEY_OVERFLOW, p->bytes);
	o->d.key_hash = info->hash;
	o->d.overflow = info->overflow;
	o->d.unadmitted = info->unadmitted;
	return res;
}

/* An admitted packet passes; an admitted SYN of a syn_cookies rule is answered. */
static __always_inline void rl_admitted(struct rl_path *p, struct rl_outcome *o)
{
	const struct rl_rule *r = p->rule;
	o->d.limit = r->more_limits;
	if (r->flags & RL_RULE_F_CLUSTER)
		rl_cluster_admitted_add(r, &p->info->key, p->now, rl_cost_units(r, p->bytes));
	if (p->sc != RL_SC_SYN) {
		rl_decide(o, XDP_PASS, RL_REASON_ADMITTED, RL_GC_MAX);
		return;
	}
	int v = rl_syncookie_answer(p->ctx, p->pkt);
	if (v == XDP_DROP)
		rl_decide(o, XDP_DROP, RL_REASON_SYNCOOKIE_REJECTED, RL_GC_SYNCOOKIE_REJECTED);
	else if (v == XDP_TX)
		rl_decide(o, XDP_TX, RL_REASON_SYNCOOKIE_SENT, RL_GC_SYNCOOKIE_SENT);
	else
		rl_decide(o, v, RL_REASON_ADMITTED, RL_GC_MAX);
}

/* A refused packet is dropped, or passed by a monitor rule, and its key reported. */
static __always_inline void rl_refused(struct rl_path *p, int res, struct rl_outcome *o)
{
	const struct rl_rule *r = p->rule;
	struct rl_limit_info *info = p->info;
	__u32 reason = RL_REASON_LIMITED, counter = RL_GC_MAX;
	if (res == RL_LIMIT_BLOCKED) {
		reason = RL_REASON_BLOCKED;
		counter = RL_GC_BLOCKED;
	} else if (res == RL_LIMIT_EXHAUSTED) {
		reason = RL_REASON_CAS_EXHAUSTED;
		counter = RL_GC_CAS_EXHAUSTED;
	}
	/* An unadmitted packet is reported as its shared key: one report for a whole flood. A
	 * stacked limit that refused has reported its own key. */
	if (!o->d.limit)
		rl_offender(r, info->unadmitted ? &info->shared : &info->key, info->hash, p->now,
			    res == RL_LIMIT_BLOCKED);
	if (r->more_limits)
		rl_count_limit(r->stats_slot, o->d.limit, p->bytes);
	o->monitored = r->action == RL_ACTION_MONITOR;
	rl_decide(o, o->monitored ? XDP_PASS : XDP_DROP, reason, counter);
}

/* A packet's life, one stage a line. */
SEC("xdp")
int rl_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct rl_path p = {.ctx = ctx, .bytes = data_end - data};

	rl_count(RL_GC_RX, p.bytes);
	if (!rl_stage_setup(&p))
		return XDP_PASS;
	struct rl_outcome *o = &p.scratch->outcome;
	__builtin_memset(o, 0, sizeof(*o));
	o->d.rule_pos = -1;
	if (rl_stage_parse(&p, o))
		return rl_account(&p, o);
	if (rl_stage_runtime_lists(&p, o))
		return rl_account(&p, o);
	if (rl_stage_rule(&p, o))
		return rl_account(&p, o);
	rl_stage_key(&p);
	if (rl_stage_syncookie(&p, o))
		return rl_account(&p, o);
	if (rl_stage_cluster(&p, o))
		return rl_account(&p, o);
	int res = rl_stage_limits(&p, o);
	if (res == RL_LIMIT_ADMIT)
		rl_admitted(&p, o);
	else
		rl_refused(&p, res, o);
	return rl_account(&p, o);
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
