/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The data path's global counters, one code space stated once (as Cilium's drop_reasons.h
 * keeps its drop codes): each entry gives the enum (RL_GC_<ID>), the name rld reports it by
 * (`rlctl stats`, the status JSON), its Prometheus families for packets and for bytes ("" where
 * the data path counts an event, not a packet's bytes), the value of the "list" label where
 * several counters share one family ("" otherwise), and what it counts (the families' help; a
 * family shared by several counters takes its help from its first). The XDP program counts
 * into rl_global[RL_GC_<ID>]; rld reads, names and exports them from this table alone.
 */
#ifndef RL_COUNTERS_H
#define RL_COUNTERS_H

/* X(ID, name, packets family, bytes family, list label, help) */
#define RL_GLOBAL_COUNTERS(X)                                                                      \
	X(RX, "received", "rl_received_packets_total", "rl_received_bytes_total", "",              \
	  "Packets the XDP program received, before any decision.")                                \
	X(MALFORMED, "malformed", "rl_malformed_packets_total", "rl_malformed_bytes_total", "",    \
	  "Packets with truncated or invalid headers; what no list or rule decides gets the "      \
	  "policy's malformed verdict.")                                                           \
	X(NON_IP, "non_ip", "rl_non_ip_packets_total", "rl_non_ip_bytes_total", "",                \
	  "Packets that are not IPv4 or IPv6 (ARP, LLDP...); always passed.")                      \
	X(ALLOWLISTED, "allowlisted", "rl_allowlisted_packets_total",                              \
	  "rl_allowlisted_bytes_total", "policy",                                                  \
	  "Packets passed by an allow list before any rule: list=policy (the policy file) or "     \
	  "list=runtime (rlctl allow).")                                                           \
	X(DENYLISTED, "denylisted", "rl_denylisted_packets_total", "rl_denylisted_bytes_total",    \
	  "policy",                                                                                \
	  "Packets dropped by a deny list before any rule: list=policy (the policy file) or "      \
	  "list=runtime (rlctl deny).")                                                            \
	X(RUNTIME_ALLOWED, "runtime_allowed", "rl_allowlisted_packets_total",                      \
	  "rl_allowlisted_bytes_total", "runtime", "")                                             \
	X(RUNTIME_DENIED, "runtime_denied", "rl_denylisted_packets_total",                         \
	  "rl_denylisted_bytes_total", "runtime", "")                                              \
	X(UNMATCHED, "unmatched", "rl_unmatched_packets_total", "rl_unmatched_bytes_total", "",    \
	  "IP packets that no rule matched; passed.")                                              \
	X(KEY_INSERTED, "keys_inserted", "rl_key_inserts_total", "", "",                           \
	  "New keys that took a slot in the key table.")                                           \
	X(KEY_OVERFLOW, "key_overflow", "rl_key_overflow_packets_total",                           \
	  "rl_key_overflow_bytes_total", "",                                                       \
	  "Packets of new keys that found their key table set full of limited keys and were "      \
	  "judged by their rule's shared per-prefix overflow bucket.")                             \
	X(CAS_EXHAUSTED, "cas_exhausted", "rl_cas_exhausted_packets_total",                        \
	  "rl_cas_exhausted_bytes_total", "",                                                      \
	  "Packets dropped because compare-and-swap retries on their key ran out (contention).")   \
	X(BLOCKED, "blocked", "rl_blocked_packets_total", "rl_blocked_bytes_total", "",            \
	  "Packets dropped (or monitored) because their key is in its block period; a subset of "  \
	  "the rules' dropped and monitored packets.")                                             \
	X(REPORTS, "reports", "rl_offender_reports_total", "", "",                                 \
	  "Offender events written to the ring buffer (at most one per key per ~3 s).")            \
	X(REPORTS_LOST, "reports_lost", "rl_offender_reports_lost_total", "", "",                  \
	  "Offender events lost because the ring buffer was full.")                                \
	X(FRAGMENTS, "fragments", "rl_fragments_total", "rl_fragment_bytes_total", "",             \
	  "Non-first IP fragments; matched on addresses and protocol only. Also counted by the "   \
	  "verdict they got.")                                                                     \
	X(CLUSTER_LIMITED, "cluster_limited", "rl_cluster_limited_packets_total",                  \
	  "rl_cluster_limited_bytes_total", "",                                                    \
	  "Packets dropped (or monitored) because the fleet used up their key's cluster limit; a " \
	  "subset of the rules' dropped and monitored packets.")                                   \
	X(NEW_UNADMITTED, "new_unadmitted", "rl_new_source_unadmitted_packets_total",              \
	  "rl_new_source_unadmitted_bytes_total", "",                                              \
	  "Packets of new keys that found no token in their rule's new-source budget: judged by "  \
	  "the rule's shared bucket for new sources, without creating a key.")                     \
	X(REPORTS_SHED, "reports_shed", "rl_offender_reports_shed_total", "", "",                  \
	  "Offender events not written because all keys together reached the report cap (1,000 "   \
	  "per second).")                                                                          \
	X(SYNCOOKIE_SENT, "syn_cookies_sent", "rl_syn_cookies_sent_total", "", "",                 \
	  "SYNs of syn_cookies rules answered from XDP with a SYN-ACK carrying a cookie.")         \
	X(SYNCOOKIE_ACCEPTED, "syn_cookies_accepted", "rl_syn_cookies_accepted_total", "", "",     \
	  "ACKs without a connection whose SYN cookie was valid: passed on to the stack's "        \
	  "SYNPROXY.")                                                                             \
	X(SYNCOOKIE_REJECTED, "syn_cookies_rejected", "rl_syn_cookies_rejected_packets_total",     \
	  "rl_syn_cookies_rejected_bytes_total", "",                                               \
	  "Packets of syn_cookies rules with neither a connection nor a valid cookie; dropped.")   \
	X(TRAFFIC_SAMPLED, "traffic_samples", "rl_traffic_samples_total",                          \
	  "rl_traffic_sampled_bytes_total", "",                                                    \
	  "Packets of matched rules sampled for rlctl top --by traffic (1 in "                     \
	  "2^traffic_sample_shift) and written to the samples ring buffer.")                       \
	X(TRAFFIC_SHED, "traffic_samples_shed", "rl_traffic_samples_shed_total", "", "",           \
	  "Traffic samples not written because the samples ring buffer was full (rld behind).")

#define RL_GC_ENUM_ENTRY(id, name, packets, bytes, list, help) RL_GC_##id,
enum rl_global_counter {
	RL_GLOBAL_COUNTERS(RL_GC_ENUM_ENTRY) RL_GC_MAX,
};
#undef RL_GC_ENUM_ENTRY

#endif /* RL_COUNTERS_H */
