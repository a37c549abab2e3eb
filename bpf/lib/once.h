/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Accesses the compiler must make exactly once, in program order: memory that other CPUs or rld
 * write while a packet reads it (the key table, the host table, counters).
 */
#ifndef RL_BPF_ONCE_H
#define RL_BPF_ONCE_H

#define RL_READ_ONCE(x)	    (*(volatile typeof(x) *)&(x))
#define RL_WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))

#endif /* RL_BPF_ONCE_H */
