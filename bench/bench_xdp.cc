// SPDX-License-Identifier: GPL-2.0-only
// Data path benchmark: ns per packet through BPF_PROG_TEST_RUN (the kernel times `repeat` runs
// of one frame on one CPU), for the paths that matter, each as a ratio to an empty XDP program
// measured in the same run. Not a test: it prints figures.
//
//   sudo ./build/bench/bench_xdp [--repeat N] [--rounds R] [--only TEXT] [--lines FILE]
//
// --only runs just the paths whose name contains TEXT, e.g. to profile one of them with perf.
// --lines writes where the programs' source lines landed in the JIT, once they are loaded and
// warm, for scripts/profile-xdp.sh to charge perf's samples to source lines.
#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <initializer_list>
#include <string>
#include <vector>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "compiler/compiler.h"
#include "datapath/bpf_datapath.h"
#include "datapath/test_hooks.h"
#include "jit_lines.h"
#include "packet.h"
#include "prog_run.h"

namespace {

using namespace rl;

uint32_t g_repeat = 2'000'000;
int g_rounds = 5;
const char* g_only = nullptr;
const char* g_lines = nullptr;

// Writes where each program's source lines landed in the JIT (jit_lines.h) to `path`, whole
// or not at all: scripts/profile-xdp.sh starts the profiler once the file appears.
bool write_lines(const char* path, std::initializer_list<int> prog_fds) {
  std::string text;
  for (int fd : prog_fds) {
    auto l = rl::bench::jit_lines(fd);
    if (!l) {
      std::fprintf(stderr, "bench_xdp: JIT lines: %s\n", l.error().str().c_str());
      return false;
    }
    text += rl::bench::format_jit_lines(*l);
  }
  std::string part = std::string(path) + ".part";
  FILE* f = std::fopen(part.c_str(), "w");
  if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0) {
    std::perror(part.c_str());
    return false;
  }
  return std::rename(part.c_str(), path) == 0;
}

// Median over rounds of ns per run (prog_run.h).
double measure(int prog_fd, const std::vector<uint8_t>& frame, uint32_t repeat = 0) {
  return rl::bench::ns_per_run(prog_fd, frame, repeat ? repeat : g_repeat, g_rounds);
}

// Median over rounds of (b - a) in ns per run, a and b measured one after the other in each
// round: on a shared machine, load that comes and goes falls on both sides of the difference.
double measure_difference(int a, int b, const std::vector<uint8_t>& frame) {
  std::vector<double> d;
  const int rounds = g_rounds;
  g_rounds = 1;
  for (int r = 0; r < rounds; r++) {
    double x = measure(a, frame), y = measure(b, frame);
    d.push_back(y - x);
  }
  g_rounds = rounds;
  std::sort(d.begin(), d.end());
  return d[d.size() / 2];
}

Prefix pre(const std::string& s) { return *Prefix::parse(s); }

// 1,000 allow/deny prefixes and 64 rules, the shape of a production policy.
policy::Policy realistic_policy() {
  policy::Policy p;
  for (int i = 0; i < 250; i++) {
    p.allow.push_back(pre("198.19.1." + std::to_string(i) + "/32"));
    p.deny.push_back(pre("198.19.2." + std::to_string(i) + "/32"));
    p.allow.push_back(pre("2001:db8:a:" + std::to_string(i) + "::/64"));
    p.deny.push_back(pre("2001:db8:d:" + std::to_string(i) + "::/64"));
  }
  policy::SourceSet partners{"partners", {}, {}};
  for (int i = 0; i < 64; i++)
    partners.prefixes.push_back(pre("198.19.3." + std::to_string(i * 4) + "/30"));
  p.sets.push_back(partners);
  for (int i = 0; i < 64; i++) {
    policy::Rule r;
    r.name = "rule" + std::to_string(i);
    r.priority = i;
    r.match.protocol = i % 3 == 0 ? 6 : 17;
    r.match.ports = {{static_cast<uint16_t>(2000 + i), static_cast<uint16_t>(2000 + i)}};
    if (i % 4 == 1) r.match.sources = {"partners"};
    r.limit.rate = {100, 1'000'000'000ULL, policy::Unit::kPackets};
    r.limit.burst = 100;
    p.rules.push_back(r);
  }
  // The rules the benchmark's frames hit, behind the 64 above in priority order.
  policy::Rule pass;
  pass.name = "generous";
  pass.priority = 100;
  pass.match.protocol = 17;
  pass.match.ports = {{53, 53}};
  pass.limit.rate = {1'000'000'000, 1'000'000'000ULL, policy::Unit::kPackets};
  pass.limit.burst = 1'000'000'000;
  policy::Rule strict = pass;
  strict.name = "strict";
  strict.match.ports = {{80, 80}};
  strict.limit.rate = {1, 60'000'000'000ULL, policy::Unit::kPackets};
  strict.limit.burst = 1;
  p.rules.push_back(pass);
  p.rules.push_back(strict);
  return p;
}

// The same, with rules on every field indexed by value (TCP flags, TTL, length, ICMP code) and on
// the fragment class ahead of the two the frames hit, so the frames pay for every lookup.
policy::Policy fields_policy() {
  policy::Policy p = realistic_policy();
  policy::Rule rst = p.rules.back();
  rst.name = "rst";
  rst.priority = 99;
  rst.match = {};
  rst.match.protocol = 6;
  rst.match.tcp_flags = {0x04, 0x04};
  policy::Rule expiring = rst;
  expiring.name = "ttl-expiring";
  expiring.match = {};
  expiring.match.ttl = {{0, 2}};
  policy::Rule jumbo = expiring;
  jumbo.name = "jumbo";
  jumbo.match = {};
  jumbo.match.length = {{9000, 65535}};
  policy::Rule pmtu = expiring;
  pmtu.name = "pmtu";
  pmtu.match = {};
  pmtu.match.protocol = 1;
  pmtu.match.icmp_types = {3};
  pmtu.match.icmp_codes = {{4, 4}};
  policy::Rule tails = expiring;
  tails.name = "udp-later-fragments";
  tails.match = {};
  tails.match.protocol = 17;
  tails.match.fragments = 1u << RL_FRAG_LATER;
  for (const auto& r : {rst, expiring, jumbo, pmtu, tails}) p.rules.push_back(r);
  return p;
}

// The same, with a new-source budget on the rule the dropped frames hit (1,000 new sources a
// second, per rule): a stream of sources the table does not hold is then judged, after the budget
// refuses them, on the rule's one shared bucket, as under a spoofed flood.
policy::Policy budget_policy() {
  policy::Policy p = realistic_policy();
  policy::NewSources budget;
  budget.rate = {1000, 1'000'000'000ULL, policy::Unit::kPackets};
  budget.burst = 1000;
  p.rules.back().new_sources = budget;
  return p;
}

// The same, with the rule the dropped frames hit a sliding log (1 a minute) instead of a bucket.
policy::Policy log_policy() {
  policy::Policy p = realistic_policy();
  p.rules.back().limit = {
      policy::Algorithm::kSlidingLog, {1, 60'000'000'000ULL, policy::Unit::kPackets}, 0};
  return p;
}

// The realistic rules and a connection limit on TCP port 22: 4 open per source.
policy::Policy connections_policy() {
  policy::Policy p = realistic_policy();
  policy::Rule conns;
  conns.name = "connections";
  conns.priority = 100;
  conns.match.protocol = 6;
  conns.match.tcp_syn = true;
  conns.match.ports = {{22, 22}};
  conns.limit.algorithm = policy::Algorithm::kConnections;
  conns.limit.connections = 4;
  p.rules.push_back(conns);
  return p;
}

enum class Shape { kRealistic, kFields, kBudget, kLog, kConnections };

std::unique_ptr<BpfDatapath> load(uint32_t spread, Shape shape = Shape::kRealistic,
                                  uint32_t sample_shift = 0) {
  LoadOptions o;
  o.bench_src_spread = spread;
  o.traffic_sample_shift = sample_shift;
  if (const char* keys = std::getenv("RL_BENCH_KEYS"))
    o.key_capacity = std::strtoul(keys, nullptr, 10);
  auto dp = BpfDatapath::load(o);
  if (!dp) {
    std::fprintf(stderr, "load: %s\n", dp.error().str().c_str());
    std::exit(1);
  }
  auto c = compiler::compile(shape == Shape::kFields        ? fields_policy()
                             : shape == Shape::kBudget      ? budget_policy()
                             : shape == Shape::kLog         ? log_policy()
                             : shape == Shape::kConnections ? connections_policy()
                                                            : realistic_policy());
  if (!c) {
    std::fprintf(stderr, "compile: %s\n", c.error().str().c_str());
    std::exit(1);
  }
  if (auto s = (*dp)->apply(*c); !s) {
    std::fprintf(stderr, "apply: %s\n", s.error().str().c_str());
    std::exit(1);
  }
  return std::move(*dp);
}

// The options into g_repeat, g_rounds, g_only and g_lines; false, with the usage said, when one
// is not understood.
bool parse_args(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc)
      g_repeat = std::strtoul(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc)
      g_rounds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
      g_only = argv[++i];
    else if (!std::strcmp(argv[i], "--lines") && i + 1 < argc)
      g_lines = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--repeat N] [--rounds R] [--only TEXT] [--lines FILE]\n",
                   argv[0]);
      return false;
    }
  }
  return true;
}

// `n` runtime deny entries per family that cover neither frame, as after `rlctl deny` during an
// attack: IPv4 /32s in 10.0.0.0/8, IPv6 /64s in 2001:db8:ffff::/48.
std::vector<Prefix> runtime_prefixes(uint32_t n) {
  std::vector<Prefix> out;
  for (uint32_t i = 0; i < n && i < (1u << 16); i++) {
    char v4[32], v6[48];
    std::snprintf(v4, sizeof(v4), "10.%u.%u.%u/32", i >> 16 & 255, i >> 8 & 255, i & 255);
    std::snprintf(v6, sizeof(v6), "2001:db8:ffff:%x::/64", i);
    out.push_back(pre(v4));
    out.push_back(pre(v6));
  }
  return out;
}

// Reads a ring buffer's records on a thread of its own, as rld reads the samples, so that the
// ring does not fill and shed; counts them.
class RingReader {
 public:
  explicit RingReader(int fd)
      : rb_(ring_buffer__new(fd, count, &consumed_, nullptr)), thread_([this] {
          while (!stop_.load()) ring_buffer__poll(rb_, 100);
        }) {}
  ~RingReader() {
    stop();
    ring_buffer__free(rb_);
  }
  RingReader(const RingReader&) = delete;
  RingReader& operator=(const RingReader&) = delete;

  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  uint64_t consumed() const { return consumed_.load(); }

 private:
  static int count(void* ctx, void*, size_t) {
    static_cast<std::atomic<uint64_t>*>(ctx)->fetch_add(1, std::memory_order_relaxed);
    return 0;
  }

  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> consumed_{0};
  ring_buffer* rb_;
  std::thread thread_;
};

// The address in the `i`-th runtime entry of runtime_prefixes() of family `v6`.
std::string denied_source(uint32_t i, bool v6) {
  char addr[48];
  if (v6)
    std::snprintf(addr, sizeof(addr), "2001:db8:ffff:%x::5", i);
  else
    std::snprintf(addr, sizeof(addr), "10.%u.%u.%u", i >> 16 & 255, i >> 8 & 255, i & 255);
  return addr;
}

// Adds `entries` to `dp`'s runtime deny list: how long that took in ms, -1 if one failed.
double add_runtime_entries(BpfDatapath& dp, const std::vector<Prefix>& entries) {
  const auto added_at = std::chrono::steady_clock::now();
  for (const auto& prefix : entries)
    if (auto s = dp.runtime_acl_set(prefix, RL_SRC_F_DENY, 0); !s) {
      std::fprintf(stderr, "bench_xdp: runtime entry: %s\n", s.error().str().c_str());
      return -1;
    }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - added_at)
      .count();
}

// What the sampled, stream and budget runs left in their counters, and the key table's memory.
void print_counters(BpfDatapath& sampled, BpfDatapath& spread, BpfDatapath& budgeted,
                    BpfDatapath& dp, uint64_t consumed) {
  if (auto g = sampled.global_counters())
    std::printf("sampled run: %lu samples written, %lu shed, %lu read\n",
                (unsigned long)(*g)[RL_GC_TRAFFIC_SAMPLED].pkts,
                (unsigned long)(*g)[RL_GC_TRAFFIC_SHED].pkts, (unsigned long)consumed);
  auto sc = spread.global_counters();
  if (sc)
    std::printf(
        "stream run: %lu keys inserted, %lu judged by overflow buckets, %lu of %lu sets "
        "in use\n",
        (unsigned long)(*sc)[RL_GC_KEY_INSERTED].pkts,
        (unsigned long)(*sc)[RL_GC_KEY_OVERFLOW].pkts, (unsigned long)spread.key_sets_active(),
        (unsigned long)spread.key_sets());
  if (auto bc = budgeted.global_counters())
    std::printf("budget run: %lu keys inserted, %lu packets judged on the shared bucket\n",
                (unsigned long)(*bc)[RL_GC_KEY_INSERTED].pkts,
                (unsigned long)(*bc)[RL_GC_NEW_UNADMITTED].pkts);
  uint64_t mem = rl::bench::memlock(dp.keys_fd());
  uint64_t keys = static_cast<uint64_t>(dp.key_sets()) * RL_WAYS;
  std::printf("key table: %lu keys in %lu bytes (kernel memlock): %.1f bytes per key\n",
              (unsigned long)keys, (unsigned long)mem, keys ? double(mem) / keys : 0.0);
}

// Spends the key's burst on each of `dps` (every later run is the drop path), and warms
// `spread`'s table for `sources` sources: a full cycle inserts every key the sets in use hold
// (each then owes its token); then the table grows as rld grows it, from the keys it counts, and
// the next cycle inserts the rest.
bool warm_up(std::initializer_list<BpfDatapath*> dps,
             std::initializer_list<std::vector<uint8_t>> frames, BpfDatapath& spread,
             const std::vector<uint8_t>& stream, uint32_t sources) {
  for (const auto* d : dps)
    for (const auto& frame : frames) {
      if (auto r = DatapathTestHooks(*d).run(frame, 2); !r) {
        std::fprintf(stderr, "bench_xdp: warm-up run: %s\n", r.error().str().c_str());
        return false;
      }
    }
  for (;;) {
    measure(spread.prog_fd(), stream, sources);
    auto grown = spread.grow_key_table(spread.key_table_usage(spread.now_ns()).first);
    if (!grown) {
      std::fprintf(stderr, "bench_xdp: key table growth: %s\n", grown.error().str().c_str());
      return false;
    }
    if (*grown == 0) return true;
  }
}

// A SYN from `src`, port 40000, to 192.0.2.1:22: the connection limit's port.
std::vector<uint8_t> syn_to_22(const char* src) {
  return packet::Builder().ipv4(src, "192.0.2.1").tcp(40000, 22, packet::kSyn).build();
}

// Gives the key of `src`'s SYNs `open` connections under its connection limit, as rld does from
// conntrack: a SYN is admitted once (writing the admitted SYNs' LRU, as each admitted SYN
// does), which leaves its key hash for the count.
bool hold_connections(BpfDatapath& dp, const char* src, uint32_t open) {
  if (auto r = DatapathTestHooks(dp).run(syn_to_22(src), 1); !r) {
    std::fprintf(stderr, "bench_xdp: connection SYN: %s\n", r.error().str().c_str());
    return false;
  }
  rl_conn_tuple t{};
  t.family = 4;
  inet_pton(AF_INET, src, &t.saddr[0]);
  inet_pton(AF_INET, "192.0.2.1", &t.daddr[0]);
  t.sport = 40000;
  t.dport = 22;
  auto taken = dp.take_admitted_syn(t);
  if (!taken || !*taken) {
    std::fprintf(stderr, "bench_xdp: the connection SYN left no entry\n");
    return false;
  }
  return dp.set_open_connections((*taken)->hash, open).ok();
}

// One path through the program: a program and the frame that takes it, and its cost.
struct Path {
  const char* name;
  int fd;
  const std::vector<uint8_t>* frame;
  double ns = 0;
};

// The table of paths measured (paths[0] the empty program, [3] and [4] the single-source drops,
// [5] the `sources`-source stream), and the ratios the targets are stated in.
void print_results(const std::vector<Path>& paths, uint32_t sources, size_t runtime_count,
                   double add_ms) {
  std::printf("rl data path, BPF_PROG_TEST_RUN, repeat %u, median of %d rounds\n", g_repeat,
              g_rounds);
  std::printf("policy: 1,000 allow/deny prefixes, 66 rules (the frames match the last two)\n");
  std::printf(
      "\"every field in use\": 5 more rules on TCP flags, TTL, length, ICMP code and fragment "
      "class\n\n");
  std::printf("%-36s %10s %10s %12s\n", "path", "ns/pkt", "Mpps", "x empty");
  const double floor_ns = paths[0].ns;
  for (const auto& p : paths)
    if (p.ns > 0)
      std::printf("%-36s %10.2f %10.1f %12.2f\n", p.name, p.ns, 1000.0 / p.ns,
                  floor_ns > 0 ? p.ns / floor_ns : 0.0);
  const double drop4 = paths[3].ns, drop6_ns = paths[4].ns, many = paths[5].ns;
  if (floor_ns > 0 && drop4 > 0)
    std::printf("\ndrop path / empty:                       %.2fx (target <= 8x)\n",
                drop4 / floor_ns);
  if (drop6_ns > 0 && many > 0)
    std::printf("%u-source stream / single-source drop:   %.2fx (target <= 3x, both IPv6)\n",
                sources, many / drop6_ns);
  std::printf("runtime lists: %zu entries added in %.1f ms (%.1f us each)\n", runtime_count, add_ms,
              runtime_count == 0 ? 0.0 : add_ms * 1000 / runtime_count);
}

}  // namespace

int main(int argc, char** argv) {
  if (!parse_args(argc, argv)) return 2;

  const rl::bench::EmptyProgram empty;
  auto dp = load(0);
  // RL_BENCH_SOURCES changes the stream's source count (to see how the cost follows the key
  // table's footprint in the CPU caches).
  const char* env = std::getenv("RL_BENCH_SOURCES");
  const uint32_t kSources = env ? std::strtoul(env, nullptr, 10) : 1'000'000;
  auto spread = load(kSources);
  auto with_fields = load(0, Shape::kFields);
  auto budgeted = load(kSources, Shape::kBudget);
  auto logged = load(0, Shape::kLog);
  auto conns = load(0, Shape::kConnections);
  // The same program with traffic sampling on (RL_BENCH_SAMPLE_SHIFT, default 10: 1 in 1,024),
  // its samples read by a thread as rld reads them, so the ring does not fill and shed.
  const char* shift_env = std::getenv("RL_BENCH_SAMPLE_SHIFT");
  const uint32_t kShift = shift_env ? std::strtoul(shift_env, nullptr, 10) : 10;
  auto sampled = load(0, Shape::kRealistic, kShift);
  // The same policy with runtime deny entries (RL_BENCH_RUNTIME_ENTRIES per family, default 1):
  // every packet then meets the runtime lists.
  auto runtime = load(0);
  const char* rt_env = std::getenv("RL_BENCH_RUNTIME_ENTRIES");
  const uint32_t kRuntime = rt_env ? std::strtoul(rt_env, nullptr, 10) : 1;
  const std::vector<Prefix> runtime_entries = runtime_prefixes(kRuntime);
  const double add_ms = add_runtime_entries(*runtime, runtime_entries);
  if (add_ms < 0) return 1;
  RingReader reader(sampled->samples_fd());

  using packet::Builder;
  auto v4 = [](const char* src, uint16_t port) {
    return Builder().ipv4(src, "192.0.2.1").udp(40000, port).payload(18).build();
  };
  auto v6 = [](const char* src, uint16_t port) {
    return Builder().ipv6(src, "2001:db8::1").udp(40000, port).build();
  };
  auto allow = v4("198.19.1.7", 80);
  auto pass = v4("198.18.0.1", 53);
  auto drop = v4("198.18.0.2", 80);
  auto drop6 = v6("2001:db8:1::1", 80);
  auto many6 = v6("2001:db8::", 80);
  // A source one of the runtime entries covers (the middle one added): `rlctl deny` at work.
  const uint32_t mid = std::min(kRuntime, 1u << 16) / 2;
  auto denied = v4(denied_source(mid, false).c_str(), 80);
  auto denied6 = v6(denied_source(mid, true).c_str(), 80);

  // SYNs of a connection limit: one source's admitted, another's refused at its count of 4.
  auto syn_admitted = syn_to_22("198.18.0.3");
  auto syn_refused = syn_to_22("198.18.0.4");
  if (!hold_connections(*conns, "198.18.0.4", 4)) return 1;

  int fd = dp->prog_fd();
  if (!warm_up({dp.get(), sampled.get(), with_fields.get(), runtime.get(), logged.get()},
               {drop, drop6}, *spread, many6, kSources))
    return 1;

  std::vector<Path> paths = {
      {"empty XDP program (floor)", empty.fd(), &pass},
      {"allow-listed source", fd, &allow},
      {"token bucket, admitted", fd, &pass},
      {"token bucket, dropped (IPv4)", fd, &drop},
      {"token bucket, dropped (IPv6)", fd, &drop6},
      {"N-source stream, dropped (IPv6)", spread->prog_fd(), &many6},
      {"N-source stream, budget (IPv6)", budgeted->prog_fd(), &many6},
      {"dropped (IPv4), every field in use", with_fields->prog_fd(), &drop},
      {"dropped (IPv6), every field in use", with_fields->prog_fd(), &drop6},
      {"token bucket, admitted, sampled", sampled->prog_fd(), &pass},
      {"token bucket, dropped (IPv4), sampled", sampled->prog_fd(), &drop},
      {"dropped (IPv4), runtime list in use", runtime->prog_fd(), &drop},
      {"dropped (IPv6), runtime list in use", runtime->prog_fd(), &drop6},
      {"denied by a runtime entry (IPv4)", runtime->prog_fd(), &denied},
      {"denied by a runtime entry (IPv6)", runtime->prog_fd(), &denied6},
      {"sliding log, dropped (IPv4)", logged->prog_fd(), &drop},
      {"sliding log, dropped (IPv6)", logged->prog_fd(), &drop6},
      {"connection limit, SYN admitted (IPv4)", conns->prog_fd(), &syn_admitted},
      {"connection limit, SYN refused (IPv4)", conns->prog_fd(), &syn_refused},
  };
  if (g_lines && !write_lines(g_lines, {fd, spread->prog_fd(), with_fields->prog_fd(),
                                        sampled->prog_fd(), budgeted->prog_fd()}))
    return 1;
  for (auto& p : paths)
    if (!g_only || std::strstr(p.name, g_only)) p.ns = measure(p.fd, *p.frame);

  print_results(paths, kSources, runtime_entries.size(), add_ms);
  if (!g_only || std::strstr("traffic sampling", g_only))
    std::printf(
        "traffic sampling 1 in %u, paired rounds: admitted %+.2f ns/pkt, dropped %+.2f ns/pkt\n",
        1u << kShift, measure_difference(fd, sampled->prog_fd(), pass),
        measure_difference(fd, sampled->prog_fd(), drop));
  reader.stop();
  print_counters(*sampled, *spread, *budgeted, *dp, reader.consumed());
  return 0;
}
