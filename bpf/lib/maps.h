/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Every map of the data path but the packet's working memory (scratch.h, which holds the
 * parser's and the limiter's structs). Names are part of the ABI: rld pins them under
 * <pin root>/maps/ and adopts them by name after a restart.
 */
#ifndef RL_BPF_MAPS_H
#define RL_BPF_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "rl_layout.h"

/* ---- Rule set (two generations) ---- */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct rl_control);
} rl_control SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_GENERATIONS);
	__type(key, __u32);
	__type(value, struct rl_gen_config);
} rl_gen_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_RULE_ENTRIES);
	__type(key, __u32);
	__type(value, struct rl_rule);
} rl_rules SEC(".maps");

/* Stacked limits: limits 1.. of each rule (rl_abi.h). Read only for packets that their rule's
 * own limit admitted. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_LIMIT_ENTRIES);
	__type(key, __u32);
	__type(value, struct rl_rule);
} rl_limits SEC(".maps");

/* The new-source budgets of rules with RL_RULE_F_NEW_SOURCES, at the rule's own index. Read only
 * for packets whose key is not in the table. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_RULE_ENTRIES);
	__type(key, __u32);
	__type(value, struct rl_rule);
} rl_new_sources SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_MAX_RULE_IDS);
	__type(key, __u32);
	__type(value, struct rl_rule_meta);
} rl_rule_meta SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_BITMAP_ENTRIES);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, RL_BITMAP_VALUE_SIZE); /* words of __u64 (rl_abi.h); set at load */
} rl_bitmaps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_PORT_CLASS_ENTRIES);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct rl_port_classes);
} rl_port_classes SEC(".maps");

/* Classes of one-byte fields (rl_abi.h, RL_BYTE_TABLES); written like rl_port_classes. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_BYTE_CLASS_ENTRIES);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct rl_port_classes);
} rl_byte_classes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, RL_MAX_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_src4_key);
	__type(value, struct rl_src_pair);
} rl_src_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, RL_MAX_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_src6_key);
	__type(value, struct rl_src_pair);
} rl_src_v6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, RL_MAX_DST_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_lpm4_key);
	__type(value, struct rl_src_entry);
} rl_dst_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, RL_MAX_DST_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_lpm6_key);
	__type(value, struct rl_src_entry);
} rl_dst_v6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_SRC_FILTER_ENTRIES);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} rl_src_filter SEC(".maps");

/* ---- Runtime allow/deny (not generation-bound): hosts in a table of sets (overflow in a hash),
 * prefixes in a trie ---- */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_HOST_SETS_V4);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct rl_host_set4);
} rl_hosts_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_HOST_SETS_V6);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct rl_host_set6);
} rl_hosts_v6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RL_RUNTIME_ACL_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_runtime_lpm4_key);
	__type(value, struct rl_runtime_entry);
} rl_host_acl_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RL_RUNTIME_ACL_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_runtime_lpm6_key);
	__type(value, struct rl_runtime_entry);
} rl_host_acl_v6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, RL_RUNTIME_ACL_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_runtime_lpm4_key);
	__type(value, struct rl_runtime_entry);
} rl_runtime_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, RL_RUNTIME_ACL_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_runtime_lpm6_key);
	__type(value, struct rl_runtime_entry);
} rl_runtime_v6 SEC(".maps");

/* Runtime overrides (rl_abi.h): per family the trie of (limit id, source prefix), and per stats
 * slot how many entries name one of the rule's limits, so that a rule without any never asks. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, RL_OVERRIDES_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_override4_key);
	__type(value, struct rl_override);
} rl_override_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, RL_OVERRIDES_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_override6_key);
	__type(value, struct rl_override);
} rl_override_v6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_MAX_RULE_IDS);
	__type(key, __u32);
	__type(value, __u32);
} rl_override_slots SEC(".maps");

/* Whether a runtime entry may cover a source (rl_abi.h): word 0 the switch, then the bitsets. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_RUNTIME_FILTER_ENTRIES);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u64);
} rl_runtime_filter SEC(".maps");

/* ---- Limiter state ---- */

/* max_entries (the number of sets) is set by the loader from the configured key capacity. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_DEFAULT_KEY_CAPACITY / RL_WAYS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct rl_set);
} rl_keys SEC(".maps");

/* The key table's summary (rl_abi.h), one line per RL_SUMMARY_SETS sets; the loader sizes it
 * with rl_keys. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_DEFAULT_SUMMARY_ENTRIES);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct rl_set_summary);
} rl_key_summary SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_OVERFLOW_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct rl_slot);
} rl_overflow SEC(".maps");

/* ---- Cluster rules ---- */

/* Keys past their rule's light threshold only (rl_cluster_sketch.h). LRU: keys idle the longest
 * go first when the map is full; rld has long since sent their counts by then (it reads every
 * sync interval), and the sketch still holds their window's count should they come back. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, RL_CLUSTER_KEYS);
	__type(key, struct rl_key);
	__type(value, __u64);
} rl_cluster_admitted SEC(".maps");

/* The light stage (rl_cluster_sketch.h): every CPU shares one sketch, and each cluster rule's
 * threshold and window sit at its stats slot. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_SKETCH_BUCKETS);
	__type(key, __u32);
	__type(value, struct rl_sketch_bucket);
} rl_cluster_sketch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_MAX_RULE_IDS);
	__type(key, __u32);
	__type(value, struct rl_cluster_light);
} rl_cluster_light SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RL_CLUSTER_OVER_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct rl_key);
	__type(value, struct rl_cluster_over);
} rl_cluster_over SEC(".maps");

/* ---- Connection limits (connections.h) ---- */

/* Written by rld only; a packet reads it. Without prealloc: only keys with an open connection
 * hold an entry. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RL_CONN_KEYS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, __u32);
} rl_conn_open SEC(".maps");

/* LRU: a SYN whose handshake never ends (a spoofed one) is pushed out by later ones. Each CPU
 * keeps its own LRU lists, so that CPUs admitting SYNs at once do not share one lock. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, RL_CONN_SYNS);
	__uint(map_flags, BPF_F_NO_COMMON_LRU);
	__type(key, struct rl_conn_tuple);
	__type(value, struct rl_conn_syn);
} rl_conn_syns SEC(".maps");

/* ---- Counters and reports ---- */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RL_MAX_RULE_IDS);
	__type(key, __u32);
	__type(value, struct rl_rule_counters);
} rl_rule_stats SEC(".maps");

/* rl_limit_stats, at rl_limit_stats_index (rl_layout.h): packets of a rule with stacked limits
 * that this limit dropped (or would have, under monitor). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RL_LIMIT_STATS_ENTRIES);
	__type(key, __u32);
	__type(value, struct rl_counter);
} rl_limit_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RL_GC_MAX);
	__type(key, __u32);
	__type(value, struct rl_counter);
} rl_global_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RL_REPORT_FILTER_SLOTS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct rl_offender);
} rl_offenders SEC(".maps");

/* rl_report_budget[0]: the token bucket (GCRA arrival time) that caps reports from all keys. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} rl_report_budget SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RL_RINGBUF_BYTES);
} rl_events SEC(".maps");

/* Traffic samples (bpf/lib/sample.h), apart from rl_events: samples come at a fraction of the
 * packet rate, reports at most RL_REPORTS_PER_SEC, and a flood's samples filling a shared ring
 * would lose the reports and the cluster's early-sync requests. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RL_SAMPLES_RINGBUF_BYTES);
} rl_samples SEC(".maps");

#endif /* RL_BPF_MAPS_H */
