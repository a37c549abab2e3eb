/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef RL_BPF_OUTCOME_H
#define RL_BPF_OUTCOME_H

#include "rl_abi.h"

/* What became of a packet: the decision rl_trace records, the global counter it adds to, and
 * whether a monitor rule let it through. rl_account books all of it. */
struct rl_outcome {
	struct rl_decision d;
	__u32 counter; /* RL_GC_MAX: none */
	__u32 monitored;
};

#endif /* RL_BPF_OUTCOME_H */
