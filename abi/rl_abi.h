/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * rl data path ABI: every struct and constant that both the XDP program and the controller use.
 * Included by bpf/ (clang -target bpf) and by controller/ (C++20). Only fixed-width kernel UAPI
 * types appear here so that the layout is identical on both sides; sizes are checked below.
 *
 * Bump RL_ABI_VERSION whenever a layout or a map's meaning changes: rld refuses to adopt pinned
 * maps that carry another version.
 */
#ifndef RL_ABI_H
#define RL_ABI_H

#include <linux/types.h>

#include "rl_counters.h"

/* Test builds only (CMake -DRL_ABI_VERSION_BUMP=N, never for a release): a data path of another
 * layout than this source's, for the tests of an upgrade across layouts. The version goes up by N
 * and rl_control grows by a word, so that the replaced maps really have another shape. */
#ifndef RL_ABI_VERSION_BUMP
#define RL_ABI_VERSION_BUMP 0
#endif
#define RL_ABI_VERSION (12 + RL_ABI_VERSION_BUMP)

/* ---- Sizes ---------------------------------------------------------------------------------- */

/* Rules per generation (bit position == priority order): rld.yaml max_rules, a multiple of 64 up
 * to RL_MAX_RULES_CAP, sizes the maps that follow it at load (rl_layout.h, "Map sizes"). */
#define RL_DEFAULT_MAX_RULES 1024
#define RL_MAX_RULES_CAP     16384
#define RL_RULE_WORDS_MAX    (RL_MAX_RULES_CAP / 64)  /* 64-bit words of a rule bitmap */
#define RL_SUMMARY_WORDS_MAX (RL_RULE_WORDS_MAX / 64) /* words of its summary: a bit per word */
#define RL_GENERATIONS	     2
#define RL_MAX_CLASSES	     16384   /* rule bitmaps per generation (see class layout below) */
#define RL_MAX_PREFIXES	     8388608 /* source trie entries per family (see below) */
#define RL_RUNTIME_ACL_MAX   65536   /* runtime allow/deny entries per family */
#define RL_OVERRIDES_MAX     65536   /* runtime overrides per family (rlctl override) */
#define RL_MAX_DST_PREFIXES  65536   /* destination LPM entries per family, both generations */
#define RL_VLAN_MAX_TAGS     8	     /* VLAN tags walked (why 8: bpf/lib/parse.h) */
#define RL_PORT_KINDS	     4	     /* tcp, udp, icmp, icmpv6: the L4 "port" index dimension */
/* Source prefixes a policy may hold per family, by default; rld.yaml source_prefixes sets it, up
 * to half of RL_MAX_PREFIXES (an update holds the old entries and the new for a moment). */
#define RL_DEFAULT_SOURCE_PREFIXES 2097152
/* The L4 index is the destination port for TCP and UDP, and type * 256 + code for ICMP and
 * ICMPv6: RL_PORT_VALUES values either way. */
#define RL_PORT_VALUES 65536 /* values of a 16-bit field: a port, an L4 index, an L3 length */
#define RL_BYTE_VALUES 256   /* values of a one-byte field */
/* rl_port_classes holds, per generation, RL_PORT_TABLES tables of RL_PORT_VALUES classes: the L4
 * index of each port kind, then the source port of TCP and of UDP (RL_SPORT_TABLE + kind), then
 * the packet's L3 length (RL_LEN_TABLE: IPv4 total length, IPv6 payload length + 40). Element
 * indexes: rl_port_class_index (rl_layout.h). */
#define RL_SPORT_TABLE	   RL_PORT_KINDS
#define RL_LEN_TABLE	   (RL_PORT_KINDS + 2)
#define RL_PORT_TABLES	   (RL_PORT_KINDS + 3)
#define RL_PORTS_PER_ENTRY 4 /* u16 classes packed per 8-byte array element */
/* rl_byte_classes holds, per generation, RL_BYTE_TABLES tables of RL_BYTE_VALUES u16 classes for
 * packet fields of one byte, indexed by the field's value (rl_byte_class_index, rl_layout.h). */
#define RL_BYTE_TABLE_TCP_FLAGS	 0 /* the TCP flags byte (FIN 0x01 ... CWR 0x80) */
#define RL_BYTE_TABLE_TTL	 1 /* IPv4 TTL, IPv6 hop limit */
#define RL_BYTE_TABLES		 2
#define RL_BYTE_ENTRIES		 (RL_BYTE_VALUES / RL_PORTS_PER_ENTRY) /* array elements per table */
#define RL_PORT_ENTRIES_PER_KIND (RL_PORT_VALUES / RL_PORTS_PER_ENTRY)
#define RL_WAYS			 4 /* key table associativity */
/* The key table in use starts at 2^RL_KEY_SETS_MIN_LOG2 sets (1 MiB) and grows by linear hashing
 * up to the configured capacity (rl_hash.h, rl_set_index). */
#define RL_KEY_SETS_MIN_LOG2	14
#define RL_DEFAULT_KEY_CAPACITY 1048576
#define RL_OVERFLOW_SLOTS	65536
#define RL_REPORT_FILTER_SLOTS	65536
#define RL_IPV6_MAX_EXT_HDRS	6
#define RL_MAX_LIMITS		4 /* limits per rule: the rule's own and up to 3 stacked ones */
#define RL_RINGBUF_BYTES	(256 * 1024)

/* Traffic samples for `rlctl top --by traffic` (bpf/lib/sample.h). */
#define RL_SAMPLES_RINGBUF_BYTES    (256 * 1024) /* 6,553 samples of 40 bytes in flight */
#define RL_TRAFFIC_SAMPLE_SHIFT_MAX 24		 /* 1 in 2^k packets, k at most this */
/* rld is woken once this much waits in the samples ring (an eighth: about 820 samples). */
#define RL_SAMPLES_WAKEUP_BYTES (RL_SAMPLES_RINGBUF_BYTES / 8)

/* Time is kept in ns; slot bookkeeping uses "ticks" of 2^20 ns (~1.05 ms) stored in 32 bits. */
#define RL_TICK_SHIFT		 20
#define RL_REPORT_INTERVAL_TICKS 2861 /* ~3 s between two reports of the same key */
/* All keys together report at most this many events per second (burst as many), whatever the
 * number of keys over their limit: a flood of distinct sources cannot flood rld. */
#define RL_REPORTS_PER_SEC 1000
#define RL_CAS_RETRIES	   16

/* Overflow keys aggregate a source prefix of this length (see docs/datapath.md). */
#define RL_OVERFLOW_V4_PREFIX 16
#define RL_OVERFLOW_V6_PREFIX 32

/* ---- Rule bitmap classes ----------------------------------------------------------------------
 * Each generation owns RL_MAX_CLASSES bitmaps in rl_bitmaps (rl_bitmap_index, rl_layout.h).
 *   [0, 255]   protocol classes: rules whose protocol condition admits IP protocol N
 *   256 + 2j   packet kinds j (rl_kind_class): rules whose new-connection and fragment
 *              conditions admit a packet that is (bit 0 of j set) or is not a new TCP connection
 *              and whose fragment class (enum rl_frag) is j >> 1. Kind 0, 256, is the one read
 *              (for packets that are not a new connection) while no rule names a fragment class.
 *   257        rules without a port/ICMP-type condition (for packets that have no L4 index)
 *   267 ...    source classes and port classes allocated by the compiler
 */
#define RL_CLASS_PROTO_BASE    0
#define RL_CLASS_NOT_SYN       256 /* kind 0: not a new connection, not a fragment */
#define RL_CLASS_NO_PORT       257
#define RL_CLASS_KINDS	       6
#define RL_CLASS_FIRST_DYNAMIC 267

/* The class of packet kind j (0 to RL_CLASS_KINDS - 1): even ids from 256, past 257. */
#define RL_CLASS_OF_KIND(j) (RL_CLASS_NOT_SYN + 2 * (j))

/* Where a packet sits in a fragmented datagram: the first fragment carries the transport
 * header, later ones carry none. A rule's fragment condition is a mask of these (1 << value). */
enum rl_frag {
	RL_FRAG_NONE = 0,  /* not a fragment (nor an atomic IPv6 fragment: offset 0, no more) */
	RL_FRAG_FIRST = 1, /* offset 0, more fragments follow */
	RL_FRAG_LATER = 2, /* offset above 0 */
};

enum rl_port_kind {
	RL_PORT_KIND_TCP = 0,
	RL_PORT_KIND_UDP = 1,
	RL_PORT_KIND_ICMP = 2,
	RL_PORT_KIND_ICMPV6 = 3,
};

/* ---- Enumerations shared with the policy model ----------------------------------------------- */

enum rl_algo {
	RL_ALGO_TOKEN_BUCKET = 0, /* state words: abi/rl_limiter_state.h */
	RL_ALGO_FIXED_WINDOW = 1,
	RL_ALGO_SLIDING_WINDOW = 2,
	RL_ALGO_SLIDING_LOG = 3,
	RL_ALGO_CONNECTIONS = 4, /* open connections per key, no state word (rl_conn_open) */
};

enum rl_key_kind {
	RL_KEY_SRC_ADDR = 0,
	RL_KEY_SRC_PREFIX = 1,
	RL_KEY_SRC_ADDR_DPORT = 2,
	RL_KEY_RULE = 3,       /* one aggregate bucket for the whole rule */
	RL_KEY_OVERFLOW = 4,   /* internal: the per-prefix bucket for keys that found no free way */
	RL_KEY_NEW_BUDGET = 5, /* internal: a rule's new-source budget (per rule or per prefix) */
	RL_KEY_UNADMITTED = 6, /* internal: the bucket of new keys that found no budget token */
	RL_KEY_DST_PREFIX =
	    7, /* destination masked to v4_prefix / v6_prefix (32 / 128: per address) */
	/* source and destination: IPv4 addr[0] source, addr[1] destination; IPv6 addr[0..1] the
	 * source's /64, addr[2..3] the destination's /64. The key stays 24 bytes. */
	RL_KEY_SRC_DST = 8,
};

enum rl_cost_unit {
	RL_COST_PACKETS = 0,
	RL_COST_BYTES = 1,
};

enum rl_action {
	RL_ACTION_DROP = 0,
	RL_ACTION_MONITOR = 1,
};

/* Verdicts configurable by policy; values are the XDP action codes. */
#define RL_VERDICT_DROP 1 /* XDP_DROP */
#define RL_VERDICT_PASS 2 /* XDP_PASS */

/* ---- Control maps ------------------------------------------------------------------------------
 */

/* rl_control[0]: the word the controller moves on to switch generations, and its counts. */
struct rl_control {
	/* The rule set's epoch: rld adds one with every switch, written last, atomically, through
	 * the mmapped map. Its low bit is the generation in force; the whole word names the rule
	 * set, which the per-CPU memo of the last match (bpf/lib/memo.h) is good for. */
	__u32 active_gen;
	__u32 abi_version;
	__u32 runtime_acl_v4; /* runtime allow/deny entries, hosts and prefixes; 0 skips the lookups
			       */
	__u32 runtime_acl_v6;
	__u32 next_rule_id;    /* the compiler's next rule id, kept for a restarted controller */
	__u32 key_sets_active; /* sets of rl_keys in use (rl_set_index); only rld raises it */
	__u64 hash_seed;       /* the key hash's seed for rl_keys and rl_overflow (rl_hash.h) */
#if RL_ABI_VERSION_BUMP
	__u64 bump_pad; /* RL_ABI_VERSION_BUMP's other layout */
#endif
};

/* Source filter: per generation and family, a bitset over hashes of a source's /min_len prefix.
 * A clear bit proves that no source entry longer than /0 covers the address, so the packet takes
 * the family's default entry without an LPM lookup. Word indexes: rl_src_filter_index
 * (rl_layout.h). */
#define RL_FILTER_BITS_LOG2 20
#define RL_FILTER_WORDS	    ((1u << RL_FILTER_BITS_LOG2) / 64)

struct rl_src_entry {
	__u32 class_id; /* rule bitmap of the rules whose source condition this prefix satisfies */
	__u32 flags;	/* RL_SRC_F_* */
};

/* rl_gen_config[gen]: everything a packet needs about its generation besides the maps. */
struct rl_gen_config {
	__u32 rule_count;
	__u32 rule_words;	 /* ceil(rule_count / 64) */
	__u32 malformed_verdict; /* RL_VERDICT_* */
	__u8 min_len[2];	 /* [fam6]: shortest source prefix other than /0; 0 = none */
	__u16 pad;
	struct rl_src_entry defaults[2]; /* [fam6]: the /0 entry */
	/* Destinations. A family whose rules name no destination has no trie entries: its packets
	 * take dst_default (the class of every rule) without a lookup. */
	__u16 dst_default[2]; /* [fam6]: class of a destination no entry longer than /0 covers */
	__u8 dst_lpm[2];      /* [fam6]: rl_dst_v4 / rl_dst_v6 hold entries for this generation */
	/* Source ports. Packets without ports, and every packet while no rule names a source port
	 * (sport_used 0, no lookup), take sport_none: the rules without a source-port condition. */
	__u16 sport_none;
	__u8 sport_used;
	/* Fields indexed through rl_byte_classes (and the length table): RL_DIM_* bits of the
	 * tables the generation's rules use. While a bit is clear no packet reads that table and
	 * every packet takes the field's class below without a lookup. */
	__u8 dims_used;
	__u16 tcp_flags_none; /* non-TCP packets (and all while unused): rules without tcp_flags */
	__u16 ttl_none;	      /* while no rule names a TTL: every rule */
	__u16 len_none;	      /* while no rule names a length: every rule */
};

#define RL_DIM_TCP_FLAGS (1u << 0)
#define RL_DIM_TTL	 (1u << 1)
#define RL_DIM_LENGTH	 (1u << 2)
/* Dimensions without a table of their own, flagged so that a packet skips their bitmap while no
 * rule of the generation uses them (the bitmap then holds every rule). */
#define RL_DIM_DESTINATION (1u << 3) /* some rule names a destination prefix */
#define RL_DIM_NEW_CONN	   (1u << 4) /* some rule requires a new TCP connection (tcp_syn) */
#define RL_DIM_FRAGMENT	   (1u << 5) /* some rule names a fragment class (fragment) */

/* rl_rules, at rl_rule_index (rl_layout.h) of the generation and the rule's position: position
 * is the priority order (0 = first). */
struct rl_rule {
	__u32 id; /* seeds the rule's key hashes; kept across reloads while the limiter is unchanged
		   */
	__u32 stats_slot;	  /* index into rl_rule_stats and rl_rule_meta */
	__u8 algo;		  /* enum rl_algo */
	__u8 key_kind;		  /* enum rl_key_kind */
	__u8 cost_unit;		  /* enum rl_cost_unit */
	__u8 action;		  /* enum rl_action */
	__u8 v4_prefix;		  /* prefix lengths of source and destination prefix keys; */
	__u8 v6_prefix;		  /* per-source keys: 32, and the IPv6 client's prefix (rl_key.h) */
	__u8 cost_shift;	  /* windows with bytes: cost = ceil(bytes / 2^shift); */
				  /* sliding_log: its tick, 2^shift ns */
	__u8 flags;		  /* RL_RULE_F_* */
	__u32 cluster_share_mask; /* cluster rules: early sync every (mask + 1) units per CPU */
	__u8 more_limits; /* stacked limits after this one, in rl_limits (a rule's first limit) */
	__u8 limit_index; /* this limit's place in its rule: 0 = the rule's own */
	__u16 pad;
	__u64 block_ns; /* block period after exceeding, 0 = none */
	/* token_bucket: interval_fp = ns per unit << 16, burst_ns = burst units * ns per unit.
	 * windows: window_ns and limit (in cost units after cost_shift); sliding_log: window_ns
	 * and limit, the entries it keeps. */
	__u64 interval_fp;
	__u64 burst_ns;
	__u64 window_ns;
	__u64 limit;
};

#define RL_RULE_F_REPORT	(1u << 0) /* report offenders through the ring buffer */
#define RL_RULE_F_PRECISE_CLOCK (1u << 1) /* the coarse (jiffy) clock would distort this limit */
#define RL_RULE_F_CLUSTER	(1u << 2) /* also limited fleet-wide through rld and Redis */
#define RL_RULE_F_NEW_SOURCES	(1u << 3) /* new keys need a token: rl_new_sources[same index] */
#define RL_RULE_F_SYN_COOKIES	(1u << 4) /* answer SYNs with SYN cookies (bpf/lib/syncookie.h) */

/* What a SYN-ACK with a cookie offers, the data path and the stack's SYNPROXY alike (rld
 * writes the same values into its netfilter rule): the MSS per family and the window scale. */
#define RL_SYNCOOKIE_MSS4   1460
#define RL_SYNCOOKIE_MSS6   1440
#define RL_SYNCOOKIE_WSCALE 7

/* rl_limits, at rl_stacked_index (rl_layout.h): limit i (1..more_limits) of the rule at that
 * position, in the same struct: its own id (so its own keys),
 * key kind, prefixes and algorithm; action, block and report are the rule's. A packet passes the
 * rule only if every limit admits it; the limits are judged in order and a refusal returns the
 * tokens the earlier ones took (limiter.h). */

/* rl_new_sources, at the rule's own rl_rule_index: the new-source budget of a rule that has
 * RL_RULE_F_NEW_SOURCES, written as a token bucket in the same struct: algo token bucket, packet
 * cost, key_kind RL_KEY_RULE (one budget for the rule) or RL_KEY_SRC_PREFIX (one per source
 * prefix, v4_prefix/v6_prefix), id the rule's id. A new key takes one token from it before it
 * may claim a slot; without one the packet is judged by the rule's own limit on the
 * RL_KEY_UNADMITTED key of the same granularity, and creates no state. */

/* Cluster rules. rl_cluster_admitted[key]: per CPU, what the node admitted for a key of a
 * cluster rule, ever; rld sends the increase since its last read to Redis.
 * rl_cluster_over[key]: keys the fleet has used up, written by rld, each with its expiry. */
#define RL_CLUSTER_KEYS	    262144
#define RL_CLUSTER_OVER_MAX 262144

/* rl_cluster_sketch[RL_SKETCH_BUCKETS] and rl_cluster_light[stats slot]: the light stage. */
#include "rl_cluster_sketch.h"

struct rl_cluster_over {
	__u64 until_ns; /* CLOCK_MONOTONIC; the entry stops applying then */
};

/* Connection limits (RL_ALGO_CONNECTIONS, bpf/lib/connections.h). A rule's limit is the most
 * connections a key may hold open; its SYNs are judged against rl_conn_open[key hash], the key's
 * connections that conntrack saw complete their handshake and not yet close, which rld alone
 * writes from conntrack's events. A SYN the limit admits leaves its tuple in rl_conn_syns, so
 * that rld can tell, when conntrack reports the connection established, which key it counts
 * against. Ports are in host order, as in the parsed packet. */
#define RL_CONN_KEYS 131072 /* keys holding open connections */
#define RL_CONN_SYNS 32768  /* admitted SYNs awaiting their handshake's end (LRU) */

struct rl_conn_tuple {
	__u32 saddr[4]; /* network order; IPv4 uses [0] */
	__u32 daddr[4];
	__u16 sport;
	__u16 dport;
	__u8 family; /* 4 or 6 */
	__u8 pad[3];
};

struct rl_conn_syn {
	__u64 hash;    /* the limit's key hash: rl_conn_open's key */
	__u32 rule_id; /* the limit's id */
	__u32 pad;
};

/* rl_rule_meta[stats_slot]: the controller's record of a rule, read back when rld adopts pinned
 * maps after a restart. The XDP program never reads it. */
#define RL_RULE_NAME_MAX 56
struct rl_rule_meta {
	char name[RL_RULE_NAME_MAX];
	__u64 signature;
};

/* Destination LPM tries (rl_dst_v4, rl_dst_v6): one per family, the generation is the first 32
 * bits of the prefix (rl_trie_prefixlen, rl_layout.h). Their entries carry only a class (flags
 * 0). */
struct rl_lpm4_key {
	__u32 prefixlen; /* 32 + CIDR length */
	__u32 gen;
	__u8 addr[4];
};

struct rl_lpm6_key {
	__u32 prefixlen; /* 32 + CIDR length */
	__u32 gen;
	__u8 addr[16];
};

#define RL_SRC_F_ALLOW (1u << 0)
#define RL_SRC_F_DENY  (1u << 1)

/* Source LPM tries (rl_src_v4, rl_src_v6): one entry per prefix for both generations, with each
 * generation's answer in its own half of the value. A set of a million prefixes is then held once,
 * not once per generation, and a change to it writes only the entries it touches: rld writes the
 * inactive halves, switches generations, then brings the other halves level
 * (datapath/source_trie.h says why every step leaves each generation's answers whole). */
struct rl_src4_key {
	__u32 prefixlen; /* the CIDR length */
	__u8 addr[4];
};

struct rl_src6_key {
	__u32 prefixlen;
	__u8 addr[16];
};

struct rl_src_pair {
	struct rl_src_entry gen[RL_GENERATIONS];
};

/* Runtime allow/deny entries (rlctl allow/deny): not generation-bound, each with an expiry. A
 * family's full-length entries (one host: /32, /128) are in its host table (rl_hosts_v4/v6,
 * below), the others in an LPM trie (rl_runtime_v4/v6). A host whose set of the table has no way
 * free goes to a hash (rl_host_acl_v4/v6); the hash and the trie take the same key, prefixlen the
 * entry's length. A packet asks the table first: a host entry is the longest match there can be,
 * and the table holds it in the one line the packet reads, where the hash reads a bucket and then
 * its element, and the trie a node per level. */
/* A replacing rld carries the runtime entries over from the pinned maps of the data path it
 * replaces, reading them as its own maps: a change to the runtime maps' names, keys, entries, sets
 * or host words must also raise the first ABI whose runtime maps rld reads that way
 * (controller/datapath/compat.h, kRuntimeLayoutSinceAbi). */

struct rl_runtime_lpm4_key {
	__u32 prefixlen;
	__u8 addr[4];
};

struct rl_runtime_lpm6_key {
	__u32 prefixlen;
	__u8 addr[16];
};

/* prefixlen repeats the key's: a trie lookup answers the longest match, and the entry's length is
 * what tells a packet where to look past an expired one, and rld whether the entry it found is the
 * one it asked for. Entries of older data paths may hold 0 there (controller/datapath/compat.h:
 * rld stamps them at start); until then a packet stops at such an entry. */
struct rl_runtime_entry {
	__u32 flags; /* RL_SRC_F_ALLOW or RL_SRC_F_DENY */
	__u32 prefixlen;
	__u64 expires_ns; /* 0 = never */
};

/* Runtime overrides (rlctl override): another limit for the sources of a prefix within one limit
 * of a rule, outside the policy and its generations. Per family an LPM trie keyed by the limit's id
 * (its first 32 bits, always matched whole) and the source prefix; prefixlen is 32 + the CIDR
 * length. A packet of a rule whose stats slot counts overrides (rl_override_slots) asks the trie
 * with its limit's id and source, and the entry found judges it instead of the limit in force: a
 * copy of that limit with the override's rate and burst, so that every other field is the limit's.
 * The rest of the entry is rld's record of what the operator asked for, which a restarted or
 * replacing rld compiles again against the policy in force (a limit whose id changed gets a new
 * key). A replacing rld carries the entries over as it carries the runtime lists (compat.h). */
struct rl_override4_key {
	__u32 prefixlen;
	__u32 limit_id;
	__u8 addr[4];
};

struct rl_override6_key {
	__u32 prefixlen;
	__u32 limit_id;
	__u8 addr[16];
};

struct rl_override {
	struct rl_rule limit; /* what the prefix's packets are judged by */
	__u64 expires_ns;     /* CLOCK_MONOTONIC, 0 = never; an expired entry judges nothing */
	/* rld's record: the rule by name, which of its limits (0 its own), the rate as written
	 * (amount per period_ns, in packets or bytes) and the burst (0: the rate's amount). */
	__u64 amount;
	__u64 period_ns;
	__u64 burst;
	__u8 bytes; /* the rate counts bytes */
	__u8 limit_index;
	__u8 pad[6];
	char rule[RL_RULE_NAME_MAX];
};

/* Host table: per family, sets of one cache line, each holding a few hosts' addresses with their
 * entries, so that a denied host's packet reads one line. A host's set is rl_host_set_index
 * (rl_hash.h) of its address. A way's word says all of its entry at once: RL_HOST_LIVE while it
 * holds one, the list (RL_HOST_ALLOW, else deny), the expiry in units of 2^RL_HOST_EXPIRY_SHIFT ns
 * rounded up (0 never), and a version that every write of the word raises. rld is the only writer
 * (host_table.cc): it fills a free way's address before it stores the word that makes it live,
 * and clears the word before the way can take another address. A packet reads the word, then the
 * address, then the word again, and trusts the way only if the word did not change. */
#define RL_HOST_SETS_V4	      (RL_RUNTIME_ACL_MAX / 2) /* 4 ways: 2 MiB */
#define RL_HOST_SETS_V6	      RL_RUNTIME_ACL_MAX       /* 2 ways: 4 MiB */
#define RL_HOST_WAYS_V4	      4
#define RL_HOST_WAYS_V6	      2
#define RL_HOST_LIVE	      (1ULL << 63)
#define RL_HOST_ALLOW	      (1ULL << 62)
#define RL_HOST_VERSION_SHIFT 40
#define RL_HOST_VERSION_MASK  ((1ULL << 22) - 1)
#define RL_HOST_EXPIRY_SHIFT  20 /* about a millisecond */
#define RL_HOST_EXPIRY_MASK   ((1ULL << RL_HOST_VERSION_SHIFT) - 1)

struct rl_host_way4 {
	__u32 addr; /* network order, as in the packet */
	__u32 pad;
	__u64 word;
};

struct rl_host_set4 {
	struct rl_host_way4 way[RL_HOST_WAYS_V4];
};

struct rl_host_way6 {
	__u64 addr[2]; /* the address's bytes as two words */
	__u64 word;
	__u64 pad;
};

struct rl_host_set6 {
	struct rl_host_way6 way[RL_HOST_WAYS_V6];
};

/* Runtime filter: the source filter's idea for the runtime lists, which change at any time rather
 * than with generations. Per family, a bitset over rl_filter_hash of a source's /min_len prefix,
 * min_len the family's shortest runtime entry: a clear bit proves that no runtime entry covers
 * the address, and the packet skips the trie. rl_runtime_filter[0] is the switch, one word that
 * packets read once: each family's min_len (RL_RTF_NONE while it has no entry), the half of the
 * bitsets in use, whether the family may hold host entries (RL_RTF_HOSTS_SHIFT + fam6: packets of
 * a family without skip its host table), whether its hosts' hash may hold some (RL_RTF_HASH_SHIFT
 * + fam6: without, packets skip the hash), and RL_RTF_BUILT (until rld sets it, packets look in
 * every map). rld sets a family's hosts bit before a host entry goes in, and its hash bit before
 * one goes into the hash, and clears them only when the filter is rebuilt from entries that hold
 * none (the hash bit also when the hash empties). rld builds a
 * new min_len's bitsets in the other half and then stores the switch. The words of half h,
 * family fam6 are at rl_rtf_index (rl_layout.h). */
/* The hash's width, as the source filter's: 10,000 entries set 1% of the bits. */
#define RL_RUNTIME_FILTER_BITS_LOG2 RL_FILTER_BITS_LOG2
#define RL_RUNTIME_FILTER_WORDS	    ((1u << RL_RUNTIME_FILTER_BITS_LOG2) / 64)
#define RL_RUNTIME_FILTER_ENTRIES   (1 + 4 * RL_RUNTIME_FILTER_WORDS)
#define RL_RTF_NONE		    255 /* a family's min_len while it has no entry */
#define RL_RTF_HALF_SHIFT	    16
#define RL_RTF_BUILT		    (1ULL << 17)
#define RL_RTF_HOSTS_SHIFT	    18
#define RL_RTF_HASH_SHIFT	    20

/* rl_bitmaps[class]: a class's rules, one bit per rule (rl_rule_words words), after a summary
 * of which of those words hold any (rl_summary_words words; bit i of the summary: word i != 0),
 * which rld derives as it writes them. A packet ANDs its classes' summaries first and then reads
 * only the words that every class has rules in, so a policy of many rules costs it the words
 * where its first match may be, not every word up to it. The value is that many __u64 (its size
 * is set at load, rl_bitmap_value_size), so it has no struct. */

struct rl_port_classes {
	__u16 cls[RL_PORTS_PER_ENTRY];
};

/* ---- Key table ----------------------------------------------------------------------------------
 * A set-associative array: rl_keys[rl_set_index(...)] holds RL_WAYS slots of 16 bytes, so a set is
 * one 64-byte cache line (the mmapable array starts page-aligned). A slot stores the upper half of
 * the 64-bit key hash as its tag, never the key itself (rl_key is hashed, not stored). The set
 * index is the hash's low RL_KEY_SETS_MIN_LOG2 bits and, above them, the tag's low bits, so that
 * the controller can tell from a slot alone which set the key moves to when the table grows: a
 * key is matched on 32 + RL_KEY_SETS_MIN_LOG2 = 46 bits of its hash (about 0.01 expected pairs
 * of keys sharing a slot among 1,048,576).
 */
struct rl_key {
	__u32 rule_id;
	__u16 dport; /* RL_KEY_SRC_ADDR_DPORT: the port, host order; RL_KEY_UNADMITTED per prefix:
		      * the prefix length */
	__u8 family; /* 4 or 6, 0 for RL_KEY_RULE */
	__u8 kind;   /* enum rl_key_kind */
	__u32 addr[4];
};

#define RL_TAG_FREE	0U
#define RL_TAG_CLAIMING (~0U) /* a CPU is resetting the slot for a new key */

/* Idle hints are kept in 32-bit "idle ticks" of 2^26 ns (~67 ms), rounded up, and compared modulo
 * 2^32: exact for slots touched within the last 4.5 years, and a slot becomes reusable at most one
 * idle tick after its state is fresh again. */
#define RL_IDLE_SHIFT 26

/* A state word with this bit set is a block: the key is blocked while now < (state & ~bit). Once
 * that has passed, the word reads as a fresh key's state (zero). Algorithm states keep it clear. */
#define RL_STATE_BLOCKED (1ULL << 63)

struct rl_slot {
	__u32 tag;   /* rl_key_tag(hash), or RL_TAG_FREE / RL_TAG_CLAIMING */
	__u32 idle;  /* idle tick from which the state is a fresh key's: the slot may be reused */
	__u64 state; /* algorithm state or a block, only ever changed by compare-and-swap */
};

struct rl_set {
	struct rl_slot way[RL_WAYS];
};

/* The key table's summary (rl_key_summary): for every set, one byte of each way's tag
 * (rl_tag_print), RL_SUMMARY_SETS sets to a 64-byte line, a sixteenth of the table's size. A
 * packet that only needs to know whether its key is in the table (a rule with a new-source
 * budget, which must not insert the key without a token) reads the summary first: when no way's
 * print matches, the key is not in the set, and the set's own line, which a flood of new sources
 * would take from memory for every packet, is not read. Every writer of a tag writes the way's
 * print while the way is claimed, before the tag is published, so a key in the table always has
 * its print in the summary; a stale print of a way that was freed only costs a read of the set. */
#define RL_SUMMARY_SETS 16

struct rl_set_summary {
	__u8 print[RL_SUMMARY_SETS][RL_WAYS];
};

/* ---- Counters
 * ------------------------------------------------------------------------------------ */

/* Per rule, per CPU. The data path writes passed, dropped and monitored; every packet that
 * matched the rule is passed or dropped (a monitored one is also passed), so matched_* is not
 * written there and the reader sums it: matched = passed + dropped. */
struct rl_rule_counters {
	__u64 matched_pkts;
	__u64 matched_bytes;
	__u64 passed_pkts;
	__u64 passed_bytes;
	__u64 dropped_pkts;
	__u64 dropped_bytes;
	__u64 monitored_pkts; /* would have been dropped, passed because the rule is in monitor mode
			       */
	__u64 monitored_bytes;
};

/* enum rl_global_counter: abi/rl_counters.h */

struct rl_counter {
	__u64 pkts;
	__u64 bytes;
};

/* ---- Ring buffer events ---------------------------------------------------------------------- */

enum rl_event_kind {
	RL_EVENT_OVER_LIMIT = 1,   /* a key started exceeding its limit */
	RL_EVENT_CLUSTER_SYNC = 2, /* a cluster key passed its share: rld should sync now */
};

/* rl_offenders, at rl_offender_index (rl_layout.h): per key hash, when it was last
 * reported and how many of its packets were dropped (or monitored) over its limit. Keys that
 * share a slot share it; increments from CPUs racing on one slot may be lost, so the drop
 * count is a close lower bound, good for ranking top offenders. */
struct rl_offender {
	__u32 last_report_tick;
	__u32 drops;
};

struct rl_event {
	__u64 ts_ns;
	__u64 key_hash;
	__u32 kind;
	__u32 rule_id;
	__u8 family;
	__u8 key_kind;
	__u16 dport;
	__u8 action;
	__u8 blocked;
	__u16 pad;
	__u32 addr[4]; /* the key's address (masked for prefix keys), network order */
};

/* rl_samples (a ring buffer of its own, not rl_events): one record per sampled packet of a
 * matched rule, 1 in 2^traffic_sample_shift of them, chosen by bpf_get_prandom_u32() whatever
 * the packet holds, so every packet has the same chance and rld's estimates (samples << shift)
 * are unbiased. The rule's id is key.rule_id. */
struct rl_traffic_sample {
	struct rl_key key; /* the rule's own key for the packet, as its (first) limiter builds it */
	__u32 bytes;	   /* frame length, L2 header included */
	__u8 verdict;	   /* XDP action the packet got: XDP_DROP, XDP_PASS or XDP_TX */
	__u8 pad[3];
};

/* ---- Test and debug hooks ------------------------------------------------------------------- */

/* Written to rl_trace only when the program was loaded with trace_decisions = true. */
enum rl_reason {
	RL_REASON_NONE = 0,
	RL_REASON_MALFORMED,
	RL_REASON_NON_IP,
	RL_REASON_RUNTIME_ALLOW,
	RL_REASON_RUNTIME_DENY,
	RL_REASON_ALLOWLIST,
	RL_REASON_DENYLIST,
	RL_REASON_UNMATCHED,
	RL_REASON_ADMITTED,
	RL_REASON_LIMITED,
	RL_REASON_BLOCKED,
	RL_REASON_CAS_EXHAUSTED,
	RL_REASON_CLUSTER_LIMITED,
	RL_REASON_SYNCOOKIE_SENT,     /* answered with a SYN-ACK carrying a cookie */
	RL_REASON_SYNCOOKIE_REJECTED, /* no connection and no valid cookie */
};

struct rl_decision {
	__u32 verdict;	/* XDP action */
	__u32 reason;	/* enum rl_reason */
	__s32 rule_pos; /* position of the matched rule, -1 if none */
	__u32 rule_id;
	__u64 key_hash;
	__u32 overflow;	  /* judged by the overflow bucket */
	__u32 unadmitted; /* a new key without a new-source token: judged by the shared bucket */
	__u32 limit;	  /* the limit that decided: the refusing one, or the last one admitting */
	__u32 memo;	  /* from the CPU's memo (memo.h): 1 the lists' and rules' outcome, 2 the
			   * key's refusal too, 3 the rule's unadmitted refusal */
};

/* ---- Layout checks -----------------------------------------------------------------------------
 */

#ifdef __cplusplus
#define RL_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define RL_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

RL_STATIC_ASSERT(sizeof(struct rl_control) == (RL_ABI_VERSION_BUMP ? 40 : 32), "rl_control layout");
RL_STATIC_ASSERT(sizeof(struct rl_gen_config) == 48, "rl_gen_config layout");
RL_STATIC_ASSERT(sizeof(struct rl_rule) == 64, "rl_rule layout");
RL_STATIC_ASSERT(sizeof(struct rl_rule_meta) == 64, "rl_rule_meta layout");
RL_STATIC_ASSERT(sizeof(struct rl_lpm4_key) == 12, "rl_lpm4_key layout");
RL_STATIC_ASSERT(sizeof(struct rl_lpm6_key) == 24, "rl_lpm6_key layout");
RL_STATIC_ASSERT(sizeof(struct rl_src_entry) == 8, "rl_src_entry layout");
RL_STATIC_ASSERT(sizeof(struct rl_src4_key) == 8, "rl_src4_key layout");
RL_STATIC_ASSERT(sizeof(struct rl_src6_key) == 20, "rl_src6_key layout");
RL_STATIC_ASSERT(sizeof(struct rl_src_pair) == 16, "rl_src_pair layout");
RL_STATIC_ASSERT(sizeof(struct rl_runtime_lpm4_key) == 8, "rl_runtime_lpm4_key layout");
RL_STATIC_ASSERT(sizeof(struct rl_runtime_lpm6_key) == 20, "rl_runtime_lpm6_key layout");
RL_STATIC_ASSERT(sizeof(struct rl_runtime_entry) == 16, "rl_runtime_entry layout");
RL_STATIC_ASSERT(sizeof(struct rl_override4_key) == 12, "rl_override4_key layout");
RL_STATIC_ASSERT(sizeof(struct rl_override6_key) == 24, "rl_override6_key layout");
RL_STATIC_ASSERT(sizeof(struct rl_override) == 160, "rl_override layout");
RL_STATIC_ASSERT(sizeof(struct rl_host_set4) == 64, "rl_host_set4 layout: one cache line");
RL_STATIC_ASSERT(sizeof(struct rl_host_set6) == 64, "rl_host_set6 layout: one cache line");
RL_STATIC_ASSERT(RL_DEFAULT_MAX_RULES % 64 == 0 && RL_MAX_RULES_CAP % 4096 == 0,
		 "rule bitmaps are whole words with whole summary words");
RL_STATIC_ASSERT(sizeof(struct rl_port_classes) == 8, "rl_port_classes layout");
RL_STATIC_ASSERT(sizeof(struct rl_key) == 24, "rl_key layout");
RL_STATIC_ASSERT(sizeof(struct rl_slot) == 16, "rl_slot layout");
RL_STATIC_ASSERT(sizeof(struct rl_set) == 64, "rl_set layout: one cache line");
RL_STATIC_ASSERT(sizeof(struct rl_set_summary) == 64, "rl_set_summary layout: one cache line");
RL_STATIC_ASSERT(RL_WAYS == 4, "a set's prints fill one 32-bit word (rl_prints_match)");
RL_STATIC_ASSERT(sizeof(struct rl_rule_counters) == 64, "rl_rule_counters layout");
RL_STATIC_ASSERT(sizeof(struct rl_counter) == 16, "rl_counter layout");
RL_STATIC_ASSERT(sizeof(struct rl_event) == 48, "rl_event layout");
RL_STATIC_ASSERT(sizeof(struct rl_offender) == 8, "rl_offender layout");
RL_STATIC_ASSERT(sizeof(struct rl_traffic_sample) == 32, "rl_traffic_sample layout");
RL_STATIC_ASSERT(sizeof(struct rl_decision) == 40, "rl_decision layout");
RL_STATIC_ASSERT(sizeof(struct rl_cluster_over) == 8, "rl_cluster_over layout");
RL_STATIC_ASSERT(sizeof(struct rl_cluster_light) == 16, "rl_cluster_light layout");
RL_STATIC_ASSERT(sizeof(struct rl_sketch_bucket) == 64, "rl_sketch_bucket layout: one cache line");
RL_STATIC_ASSERT(sizeof(struct rl_conn_tuple) == 40, "rl_conn_tuple layout");
RL_STATIC_ASSERT(sizeof(struct rl_conn_syn) == 16, "rl_conn_syn layout");

#endif /* RL_ABI_H */
