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

#endif /* RL_LIMITER_STATE_H */
