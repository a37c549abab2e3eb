/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The limiters' state words and fixed-point parameters, stated once: the data path
 * (bpf/lib/limiter.h) packs and unpacks them, rld reads them back for `rlctl key show`
 * (controller/daemon/key_state.cc), and the policy checks and the compiler
 * (controller/policy/limits.cc, controller/compiler/limits.cc) keep every limit within them.
 *
 *   token_bucket    [theoretical arrival time, ns:63]             (GCRA)
 *   fixed_window    [0:1][window index:31][count:32]
 *   sliding_window  [0:1][window index:23][previous:20][current:20]
 *   sliding_log     [0:1][entries:4][newest tick:24][ages:35]
 *
 * Bit 63 is RL_STATE_BLOCKED's (rl_abi.h), so every algorithm state leaves it clear. Window
 * indexes are the window's number since the clock's epoch, modulo the field.
 */
#ifndef RL_LIMITER_STATE_H
#define RL_LIMITER_STATE_H

#include "rl_abi.h"

#ifdef __cplusplus
#define RL_STATE_INLINE static inline
#else
#define RL_STATE_INLINE static __always_inline
#endif

#define RL_FW_COUNT_BITS 32
#define RL_FW_IDX_BITS	 31
#define RL_SW_COUNT_BITS 20
#define RL_SW_IDX_BITS	 23
#define RL_FW_COUNT_MAX	 ((1ULL << RL_FW_COUNT_BITS) - 1)
#define RL_FW_IDX_MASK	 ((1ULL << RL_FW_IDX_BITS) - 1)
#define RL_SW_COUNT_MAX	 ((1ULL << RL_SW_COUNT_BITS) - 1)
#define RL_SW_IDX_MASK	 ((1ULL << RL_SW_IDX_BITS) - 1)
#define RL_SW_IDX_SHIFT	 (2 * RL_SW_COUNT_BITS)

/* Token buckets keep the emission interval, ns per unit, in 16.16 fixed point
 * (rl_rule.interval_fp); the sliding window weighs the previous window in 0.16 fixed point. */
#define RL_FP_SHIFT 16
#define RL_FP_ONE   (1ULL << RL_FP_SHIFT)

RL_STATIC_ASSERT(1 + RL_FW_IDX_BITS + RL_FW_COUNT_BITS == 64, "fixed window state word");
RL_STATIC_ASSERT(1 + RL_SW_IDX_BITS + 2 * RL_SW_COUNT_BITS == 64, "sliding window state word");

/* Fixed window: the count a state holds for window `win`; a state of another window counts 0. */
RL_STATE_INLINE __u64 rl_fw_count(__u64 st, __u64 win)
{
	return (st >> RL_FW_COUNT_BITS) == (win & RL_FW_IDX_MASK) ? (st & RL_FW_COUNT_MAX) : 0;
}

RL_STATE_INLINE __u64 rl_fw_state(__u64 win, __u64 count)
{
	return ((win & RL_FW_IDX_MASK) << RL_FW_COUNT_BITS) | count;
}

/* Sliding window: window `win`'s count in *cur and the previous window's in *prev. A state of
 * window win - 1 becomes the previous count; anything older counts nothing. */
RL_STATE_INLINE void rl_sw_counts(__u64 st, __u64 win, __u64 *prev, __u64 *cur)
{
	__u64 idx = st >> RL_SW_IDX_SHIFT;
	*prev = 0;
	*cur = 0;
	if (idx == (win & RL_SW_IDX_MASK)) {
		*prev = (st >> RL_SW_COUNT_BITS) & RL_SW_COUNT_MAX;
		*cur = st & RL_SW_COUNT_MAX;
	} else if (idx == ((win - 1) & RL_SW_IDX_MASK)) {
		*prev = st & RL_SW_COUNT_MAX;
	}
}

RL_STATE_INLINE __u64 rl_sw_state(__u64 win, __u64 prev, __u64 cur)
{
	return ((win & RL_SW_IDX_MASK) << RL_SW_IDX_SHIFT) | (prev << RL_SW_COUNT_BITS) | cur;
}

/* The previous window's weight `elapsed` ns into the current one: (window - elapsed) / window
 * in 0.16 fixed point. */
RL_STATE_INLINE __u64 rl_sw_weight(__u64 elapsed, __u64 window_ns)
{
	return ((window_ns - elapsed) << RL_FP_SHIFT) / window_ns;
}

RL_STATE_INLINE __u64 rl_sw_estimate(__u64 prev, __u64 cur, __u64 weight)
{
	return ((prev * weight) >> RL_FP_SHIFT) + cur;
}

/* Sliding log: the key's last admissions, at most the rule's limit n (RL_SL_MAX_ENTRIES), in
 * ticks of 2^tick_shift ns (rl_rule.cost_shift; the window is `ticks` of them), each admission's
 * time rounded up to its tick. The newest entry is a tick number modulo 2^24; the n - 1 older ones
 * are ages in ticks behind it, each in its own field of the 35 age bits (entry 1 in the lowest),
 * saturated one tick past the window: such an entry has left every window to come.
 * A packet is admitted iff fewer than n entries lie within the window, i.e. the oldest of n is
 * a window old: floor(now / tick) - its tick >= ticks. Rounding the entry up and now down can only
 * refuse, so no window ever holds more than n admissions; it can refuse up to two ticks after an
 * exact log would admit again. */
#define RL_SL_MAX_ENTRIES 8
#define RL_SL_COUNT_BITS  4
#define RL_SL_TICK_BITS	  24
#define RL_SL_AGES_BITS	  35
#define RL_SL_TICK_MASK	  ((1ULL << RL_SL_TICK_BITS) - 1)
/* Most ticks per window, for any n: a tick is then at least 1/4095 of the window, and the newest
 * tick's modulo wraps only after 4,096 windows. */
#define RL_SL_MAX_TICKS 4095
/* A newest tick at most this far ahead of now was written by a CPU whose clock read later than
 * this one's, not long ago: it counts as now. */
#define RL_SL_AHEAD 255

/* A loop left rolled in BPF: unrolled, it spills past the stack its callers leave. */
#ifdef __clang__
#define RL_SL_ROLLED _Pragma("clang loop unroll(disable)")
#else
#define RL_SL_ROLLED
#endif

RL_STATIC_ASSERT(1 + RL_SL_COUNT_BITS + RL_SL_TICK_BITS + RL_SL_AGES_BITS == 64,
		 "sliding log state word");
RL_STATIC_ASSERT(RL_SL_MAX_ENTRIES < (1 << RL_SL_COUNT_BITS), "sliding log entry count");

/* Bits per age in a log of n entries: its n - 1 older entries share the age bits. */
RL_STATE_INLINE __u32 rl_sl_age_bits(__u64 n)
{
	return n > 1 ? RL_SL_AGES_BITS / (__u32)(n - 1) : RL_SL_AGES_BITS;
}

/* Most ticks per window in a log of n entries: an age saturated one tick past the window must
 * fit its field. */
RL_STATE_INLINE __u64 rl_sl_max_ticks(__u64 n)
{
	__u64 cap = (1ULL << rl_sl_age_bits(n)) - 2;
	return cap < RL_SL_MAX_TICKS ? cap : RL_SL_MAX_TICKS;
}

/* t ns in ticks of 2^shift ns, rounded up: a window's length, or an admission's tick (the log
 * rounds admissions up and now down, so that no span of one window holds more than n). */
RL_STATE_INLINE __u64 rl_sl_ticks(__u64 t, __u32 shift)
{
	return (t + (1ULL << shift) - 1) >> shift;
}

RL_STATE_INLINE __u64 rl_sl_count(__u64 st)
{
	return (st >> (RL_SL_TICK_BITS + RL_SL_AGES_BITS)) & ((1ULL << RL_SL_COUNT_BITS) - 1);
}

RL_STATE_INLINE __u64 rl_sl_newest(__u64 st)
{
	return (st >> RL_SL_AGES_BITS) & RL_SL_TICK_MASK;
}

/* The verifier walks each branch of the word's arithmetic once per CAS attempt, so what follows
 * is branch-free: comparisons become the sign bit of a difference (values stay below 2^40). */
RL_STATE_INLINE __u64 rl_sl_below(__u64 a, __u64 b)
{
	return (a - b) >> 63;
}

RL_STATE_INLINE __u64 rl_sl_min(__u64 a, __u64 b)
{
	return b + ((a - b) & -rl_sl_below(a, b));
}

/* Ticks from st's newest entry to tick number `tick`, negative (two's complement) when the newest
 * is ahead of it: an entry rounded up to the next tick, or another CPU's later clock. */
RL_STATE_INLINE __u64 rl_sl_since(__u64 st, __u64 tick)
{
	__u64 d = (tick - rl_sl_newest(st)) & RL_SL_TICK_MASK;
	__u64 ahead = 1 - rl_sl_below(d, RL_SL_TICK_MASK - RL_SL_AHEAD + 1);
	return d - (ahead << RL_SL_TICK_BITS);
}

/* Age field i (1 .. n - 1) of st, 0 for i = 0. */
RL_STATE_INLINE __u64 rl_sl_field(__u64 st, __u32 bits, __u64 i)
{
	__u64 valid = rl_sl_below(0, i);
	__u64 shift = ((i - 1) * bits) & 63;
	return ((st >> shift) & ((1ULL << bits) - 1)) * valid;
}

/* Whether a log of at most n entries, `ticks` to a window, has room at tick floor_tick. */
RL_STATE_INLINE int rl_sl_room(__u64 st, __u64 n, __u64 ticks, __u64 floor_tick)
{
	__u64 oldest = rl_sl_field(st, rl_sl_age_bits(n), n - 1);
	__u64 full = 1 - rl_sl_below(rl_sl_count(st), n);
	__u64 in_window = rl_sl_below(rl_sl_since(st, floor_tick) + oldest, ticks);
	/* Exact while the newest is at most one tick ahead (its rounding up, one CPU's clock): ages
	 * saturate one tick past the window. Further ahead, another CPU's clock, it can only
	 * refuse. */
	return !(full & in_window);
}

/* st with an admission at tick ceil_tick added, the oldest entry dropped once there are n. */
RL_STATE_INLINE __u64 rl_sl_add(__u64 st, __u64 n, __u64 ticks, __u64 ceil_tick)
{
	__u64 count = rl_sl_count(st);
	__u64 has = (count | -count) >> 63; /* an empty log (count 0) holds no newest */
	__u32 bits = rl_sl_age_bits(n);
	__u64 since = rl_sl_since(st, ceil_tick);
	__u64 step = since & ((since >> 63) - 1) & -has; /* a newest ahead takes this entry too */
	__u64 newest =
	    (((rl_sl_newest(st) + step) & -has) | (ceil_tick & (has - 1))) & RL_SL_TICK_MASK;
	/* The old newest becomes entry 1, entry i becomes i + 1, each an age `step` older. */
	__u64 ages = rl_sl_min(step, ticks + 1);
	RL_SL_ROLLED
	for (__u64 i = 1; i < RL_SL_MAX_ENTRIES - 1; i++) {
		__u64 a = rl_sl_min(rl_sl_field(st, bits, i) + step, ticks + 1);
		ages |= (a * rl_sl_below(i, n - 1)) << ((i * bits) & 63);
	}
	ages &= ((1ULL << ((n - 1) * bits)) - 1) & -has;
	__u64 next_count = rl_sl_min(count + 1, n);
	return (next_count << (RL_SL_TICK_BITS + RL_SL_AGES_BITS)) | (newest << RL_SL_AGES_BITS) |
	       ages;
}

/* The entries within the window at tick floor_tick: what `rlctl key show` counts. */
RL_STATE_INLINE __u64 rl_sl_in_window(__u64 st, __u64 n, __u64 ticks, __u64 floor_tick)
{
	__u64 count = rl_sl_count(st), since = rl_sl_since(st, floor_tick), in = 0;
	__u32 bits = rl_sl_age_bits(n);
	for (__u32 i = 0; i < RL_SL_MAX_ENTRIES; i++) {
		if (i >= count)
			break;
		if (rl_sl_below(since + rl_sl_field(st, bits, i), ticks))
			in++;
	}
	return in;
}

#endif /* RL_LIMITER_STATE_H */
