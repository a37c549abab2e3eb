/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Where each element lives in the data path's array maps: the one statement of every map's index
 * arithmetic, used by the XDP program (bpf/), the compiler and the controller's data path alike,
 * so that the two sides cannot disagree about a layout. The functions compute positions only;
 * callers that must bound a value for the verifier (or against a corrupt map) mask it before the
 * call. The sizes of the maps come from the same constants (RL_*_ENTRIES below).
 */
#ifndef RL_LAYOUT_H
#define RL_LAYOUT_H

#include "rl_abi.h"

#ifdef __cplusplus
#define RL_LAYOUT_INLINE static inline
#else
#define RL_LAYOUT_INLINE static __always_inline
#endif

/* ---- Map sizes ---- */

/* Maps that follow rld.yaml max_rules (a multiple of 64 up to RL_MAX_RULES_CAP): maps.h declares
 * them for RL_DEFAULT_MAX_RULES, and the loader sizes them with these before it creates them. */
RL_LAYOUT_INLINE __u32 rl_rule_words(__u32 max_rules)
{
	return max_rules / 64;
}

RL_LAYOUT_INLINE __u32 rl_summary_words(__u32 max_rules)
{
	return (rl_rule_words(max_rules) + 63) / 64;
}

/* rl_bitmaps' value: the summary's words, then the rule words. */
RL_LAYOUT_INLINE __u32 rl_bitmap_value_size(__u32 max_rules)
{
	return 8 * (rl_summary_words(max_rules) + rl_rule_words(max_rules));
}

/* rl_rules, rl_new_sources: every position of both generations. */
RL_LAYOUT_INLINE __u32 rl_rule_entries(__u32 max_rules)
{
	return RL_GENERATIONS * max_rules;
}

/* Stable rule ids (rl_rule_meta, the per-rule counters): two full generations can coexist. */
RL_LAYOUT_INLINE __u32 rl_rule_ids(__u32 max_rules)
{
	return RL_GENERATIONS * max_rules;
}

#define RL_RULE_ENTRIES	       (RL_GENERATIONS * RL_DEFAULT_MAX_RULES)
#define RL_MAX_RULE_IDS	       (RL_GENERATIONS * RL_DEFAULT_MAX_RULES)
#define RL_LIMIT_ENTRIES       (RL_RULE_ENTRIES * (RL_MAX_LIMITS - 1)) /* rl_limits */
#define RL_BITMAP_ENTRIES      (RL_GENERATIONS * RL_MAX_CLASSES)       /* rl_bitmaps */
#define RL_BITMAP_VALUE_SIZE   (8 * (RL_DEFAULT_MAX_RULES / 64 + 1))
#define RL_PORT_CLASS_ENTRIES  (RL_GENERATIONS * RL_PORT_TABLES * RL_PORT_ENTRIES_PER_KIND)
#define RL_BYTE_CLASS_ENTRIES  (RL_GENERATIONS * RL_BYTE_TABLES * RL_BYTE_ENTRIES)
#define RL_SRC_FILTER_ENTRIES  (RL_GENERATIONS * 2 * RL_FILTER_WORDS) /* rl_src_filter */
#define RL_LIMIT_STATS_ENTRIES (RL_MAX_RULE_IDS * RL_MAX_LIMITS)      /* rl_limit_stats */
/* rl_key_summary for the default key table; the loader sizes both with the table it makes. */
#define RL_DEFAULT_SUMMARY_ENTRIES (RL_DEFAULT_KEY_CAPACITY / RL_WAYS / RL_SUMMARY_SETS)

/* ---- The rule set, per generation ---- */

/* rl_rules and rl_new_sources: the rule at priority position `pos` of generation `gen`. The two
 * generations alternate, so that the index does not depend on max_rules. */
RL_LAYOUT_INLINE __u32 rl_rule_index(__u32 gen, __u32 pos)
{
	return pos * RL_GENERATIONS + gen;
}

/* rl_limits: stacked limit `i + 1` (i from 0 to more_limits - 1) of the rule at rule index
 * `rule` (rl_rule_index). The compiler's list of stacked limits is laid out the same way by
 * position alone (rule = pos). */
RL_LAYOUT_INLINE __u32 rl_stacked_index(__u32 rule, __u32 i)
{
	return rule * (RL_MAX_LIMITS - 1) + i;
}

/* rl_bitmaps: class `cls` (rl_abi.h, "Rule bitmap classes") of generation `gen`. */
RL_LAYOUT_INLINE __u32 rl_bitmap_index(__u32 gen, __u32 cls)
{
	return gen * RL_MAX_CLASSES + cls;
}

/* rl_port_classes: the element holding `value` (0 to RL_PORT_VALUES - 1) of table `table`
 * (RL_PORT_KIND_*, RL_SPORT_TABLE + kind, RL_LEN_TABLE) of generation `gen`. */
RL_LAYOUT_INLINE __u32 rl_port_class_index(__u32 gen, __u32 table, __u32 value)
{
	return (gen * RL_PORT_TABLES + table) * RL_PORT_ENTRIES_PER_KIND +
	       value / RL_PORTS_PER_ENTRY;
}

/* rl_byte_classes: the element holding `value` (0 to RL_BYTE_VALUES - 1) of table `table`
 * (RL_BYTE_TABLE_*) of generation `gen`. */
RL_LAYOUT_INLINE __u32 rl_byte_class_index(__u32 gen, __u32 table, __u32 value)
{
	return (gen * RL_BYTE_TABLES + table) * RL_BYTE_ENTRIES + value / RL_PORTS_PER_ENTRY;
}

/* The L4 index of an ICMP or ICMPv6 packet: its type and code together, so that one lookup in the
 * kind's table answers both conditions. */
RL_LAYOUT_INLINE __u32 rl_icmp_index(__u32 type, __u32 code)
{
	return type << 8 | code;
}

/* The type and the code of an ICMP L4 index (the compiler's inverse of rl_icmp_index). */
RL_LAYOUT_INLINE __u32 rl_icmp_index_type(__u32 index)
{
	return index >> 8;
}

RL_LAYOUT_INLINE __u32 rl_icmp_index_code(__u32 index)
{
	return index & 0xff;
}

/* A value's place among the RL_PORTS_PER_ENTRY classes of its element (rl_port_classes.cls),
 * in either class table. */
RL_LAYOUT_INLINE __u32 rl_class_lane(__u32 value)
{
	return value % RL_PORTS_PER_ENTRY;
}

/* rl_src_filter: word `word` of the source filter of family fam6 in generation `gen`. */
RL_LAYOUT_INLINE __u32 rl_src_filter_index(__u32 gen, __u32 fam6, __u32 word)
{
	return (gen * 2 + fam6) * RL_FILTER_WORDS + word;
}

/* Source and destination tries (rl_lpm4_key, rl_lpm6_key): the generation takes the key's first
 * 32 bits, so a CIDR length of `len` is a trie prefix length of 32 + len. */
#define RL_TRIE_GEN_BITS 32
RL_LAYOUT_INLINE __u32 rl_trie_prefixlen(__u32 len)
{
	return RL_TRIE_GEN_BITS + len;
}

/* ---- Counters and reports ---- */

/* rl_limit_stats: limit `limit` (0 = the rule's own) of the rule at stats slot `slot`. */
RL_LAYOUT_INLINE __u32 rl_limit_stats_index(__u32 slot, __u32 limit)
{
	return slot * RL_MAX_LIMITS + limit;
}

/* rl_offenders: the slot of a key hash. */
RL_LAYOUT_INLINE __u32 rl_offender_index(__u64 hash)
{
	return (__u32)(hash >> 32) & (RL_REPORT_FILTER_SLOTS - 1);
}

/* ---- Key table and runtime lists ---- */

/* rl_key_summary: the line of set `set`, the set's row in it, and the lines of `sets` sets. */
RL_LAYOUT_INLINE __u32 rl_summary_line(__u32 set)
{
	return set / RL_SUMMARY_SETS;
}

RL_LAYOUT_INLINE __u32 rl_summary_row(__u32 set)
{
	return set % RL_SUMMARY_SETS;
}

RL_LAYOUT_INLINE __u32 rl_summary_lines(__u32 sets)
{
	return (sets + RL_SUMMARY_SETS - 1) / RL_SUMMARY_SETS;
}

/* rl_runtime_filter: the word of bit `bit` in the bitset of half `half`, family fam6 (entry 0 is
 * the switch word, rl_abi.h "Runtime filter"). */
RL_LAYOUT_INLINE __u32 rl_rtf_index(__u32 half, __u32 fam6, __u32 bit)
{
	return 1 + ((half & 1) * 2 + (fam6 & 1)) * RL_RUNTIME_FILTER_WORDS + bit / 64;
}

#endif /* RL_LAYOUT_H */
