// SPDX-License-Identifier: GPL-2.0-only
// How rl's costs follow a policy's size: for rule counts and source sets of growing size, the
// compile and write times, the process's memory and the kernel maps', and ns per packet through
// BPF_PROG_TEST_RUN, beside an empty XDP program measured in the same configuration. Not a test:
// it prints figures.
//
//   sudo ./build/bench/bench_scale [--rules 10,1000,10000] [--prefixes 1000,100000,1000000]
//                                  [--repeat N] [--rounds R]
//
// Rule i matches UDP to port 2000 + i, every other one only from the set. The last one, on port
// 80, matches only from the set and admits everything on one key for the rule, so that what a
// packet costs beyond the empty program is the lookups and one key's judgement. The set holds
// `prefixes` IPv4 /24s spread over the unicast space and as many IPv6 /48s, and the frames'
// prefixes (198.18.0.0/24, 2001:db8::/32).
//
// The frames: one IPv4 source over and over (the CPU's memo of its last match skips the lookups,
// as for a flood from one source), and IPv6 streams whose every packet has another source
// (rl_bench_src_spread), which meet the source trie and the rule bitmaps each time: from inside
// the set to the last rule, and from outside it (3fff::/20), which no rule matches.
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "compiler/compiler.h"
#include "datapath/bpf_datapath.h"
#include "packet.h"
#include "prog_run.h"

namespace {

using namespace rl;
using Clock = std::chrono::steady_clock;

std::vector<uint32_t> g_rules = {10, 1000, 10000};
std::vector<uint32_t> g_prefixes = {1000, 100'000, 1'000'000};
uint32_t g_repeat = 1'000'000;
int g_rounds = 5;

std::vector<uint32_t> parse_list(const char* text) {
  std::vector<uint32_t> out;
  for (const char* p = text; *p;) {
    char* end = nullptr;
    out.push_back(static_cast<uint32_t>(std::strtoul(p, &end, 10)));
    p = *end == ',' ? end + 1 : end;
    if (end == p && *p) break;
  }
  return out;
}

bool parse_args(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    if (!std::strcmp(argv[i], "--rules") && i + 1 < argc)
      g_rules = parse_list(argv[++i]);
    else if (!std::strcmp(argv[i], "--prefixes") && i + 1 < argc)
      g_prefixes = parse_list(argv[++i]);
    else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc)
      g_repeat = std::strtoul(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc)
      g_rounds = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: %s [--rules N,...] [--prefixes N,...] [--repeat N] [--rounds R]\n",
                   argv[0]);
      return false;
    }
  }
  return true;
}

// `n` prefixes of each family as a blocklist spreads them (IPv4 /24s over the unicast space,
// IPv6 /48s over 2400::/12), none in 198.18.0.0/15 or 2001:db8::/32, then the frames' own.
policy::SourceSet listed(uint32_t n) {
  policy::SourceSet s;
  s.name = "listed";
  s.prefixes.reserve(2 * size_t{n} + 2);
  uint32_t made = 0;
  for (uint64_t v = 1u << 16; made < n; v += 13) {
    uint32_t a = static_cast<uint32_t>((v << 8) & 0xffffffffu);
    if ((a >> 17) == (0xc612u >> 1)) continue;
    Address addr;
    addr.family = 4;
    uint32_t be = htonl(a);
    std::memcpy(addr.bytes.data(), &be, 4);
    s.prefixes.push_back(Prefix::of(addr, 24));
    made++;
  }
  for (uint64_t k = 0; k < n; k++) {
    uint64_t hi = 0x240000000000ULL + k * 4099;
    Address addr;
    addr.family = 6;
    for (int b = 0; b < 6; b++) addr.bytes[b] = static_cast<uint8_t>(hi >> (40 - 8 * b));
    s.prefixes.push_back(Prefix::of(addr, 48));
  }
  s.prefixes.push_back(*Prefix::parse("198.18.0.0/24"));
  s.prefixes.push_back(*Prefix::parse("2001:db8::/32"));
  return s;
}

policy::Policy policy_of(uint32_t rules, uint32_t prefixes) {
  policy::Policy p;
  p.sets.push_back(listed(prefixes));
  for (uint32_t i = 0; i + 1 < rules; i++) {
    policy::Rule r;
    r.name = "rule" + std::to_string(i);
    r.priority = static_cast<int>(i);
    r.match.protocol = 17;
    r.match.ports = {{static_cast<uint16_t>(2000 + i), static_cast<uint16_t>(2000 + i)}};
    if (i % 2) r.match.sources = {"listed"};
    r.limit.rate = {100, 1'000'000'000ULL, policy::Unit::kPackets};
    r.limit.burst = 100;
    p.rules.push_back(r);
  }
  policy::Rule last;
  last.name = "listed";
  last.priority = static_cast<int>(rules);
  last.match.protocol = 17;
  last.match.ports = {{80, 80}};
  last.match.sources = {"listed"};
  last.key = policy::KeyKind::kRule;
  last.limit.rate = {1'000'000'000, 1'000'000'000ULL, policy::Unit::kPackets};
  last.limit.burst = 1'000'000'000;
  p.rules.push_back(last);
  return p;
}

// The kernel's memory for this process's BPF maps, by map name (every data path loaded before
// is gone by then).
std::map<std::string, uint64_t> map_memory() {
  std::map<std::string, uint64_t> out;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    int fd = std::atoi(e->d_name);
    if (fd <= 2) continue;
    bpf_map_info info{};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0 || info.type == 0) continue;
    out[info.name] += rl::bench::memlock(fd);
  }
  closedir(d);
  return out;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;
}

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

struct Row {
  uint32_t rules = 0, prefixes = 0;
  double compile_ms = 0, write_ms = 0, rss_mib = 0;
  double tries_mib = 0, bitmaps_mib = 0, maps_mib = 0;
  double floor_ns = 0, one4 = 0, hit6 = 0, miss6 = 0, overrides6 = 0;
};

void fail(const char* what, const std::string& why) {
  std::fprintf(stderr, "bench_scale: %s: %s\n", what, why.c_str());
  std::exit(1);
}

Row run(uint32_t rules, uint32_t prefixes, int empty_fd) {
  Row row{rules, prefixes};
  const auto p = policy_of(rules, prefixes);
  // The rule table as an operator sizes it: the default, or rld.yaml max_rules for more rules.
  compiler::CompileOptions co;
  co.max_rules = std::max<uint32_t>(RL_DEFAULT_MAX_RULES, (rules + 63) / 64 * 64);
  auto t = Clock::now();
  auto c = compiler::compile(p, {}, co);
  if (!c) fail("compile", c.error().str());
  row.compile_ms = ms_since(t);
  LoadOptions o;
  o.max_rules = co.max_rules;
  o.bench_src_spread = 1u << 20;
  auto dp = BpfDatapath::load(o);
  if (!dp) fail("load", dp.error().str());
  t = Clock::now();
  if (auto s = (*dp)->apply(*c); !s) fail("apply", s.error().str());
  row.write_ms = ms_since(t);
  row.rss_mib = peak_rss_mib();
  for (const auto& [name, bytes] : map_memory()) {
    const double mib = bytes / 1048576.0;
    row.maps_mib += mib;
    if (name == "rl_src_v4" || name == "rl_src_v6") row.tries_mib += mib;
    if (name == "rl_bitmaps") row.bitmaps_mib += mib;
  }

  using packet::Builder;
  const auto one4 = Builder().ipv4("198.18.0.2", "192.0.2.1").udp(40000, 80).payload(18).build();
  auto v6 = [](const char* src) {
    return Builder().ipv6(src, "2001:db8::1").udp(40000, 80).build();
  };
  const auto hit6 = v6("2001:db8:1::2");
  const auto miss6 = v6("3fff:0:1::2");
  const int fd = (*dp)->prog_fd();
  for (const auto* f : {&one4, &hit6, &miss6}) rl::bench::ns_per_run(fd, *f, 1000, 1);
  row.floor_ns = rl::bench::ns_per_run(empty_fd, one4, g_repeat, g_rounds);
  row.one4 = rl::bench::ns_per_run(fd, one4, g_repeat, g_rounds);
  row.hit6 = rl::bench::ns_per_run(fd, hit6, g_repeat, g_rounds);
  row.miss6 = rl::bench::ns_per_run(fd, miss6, g_repeat, g_rounds);

  // The last rule with a runtime override that covers none of the stream: its trie is asked.
  OverrideEntry e;
  e.prefix = *Prefix::parse("3fff:ffff::/32");
  e.value.limit = c->rules.back();
  if (auto s = (*dp)->override_set(e); !s) fail("override", s.error().str());
  row.overrides6 = rl::bench::ns_per_run(fd, hit6, g_repeat, g_rounds);
  return row;
}

void print(const std::vector<Row>& rows) {
  std::printf("rl policy size, BPF_PROG_TEST_RUN, repeat %u, median of %d rounds\n", g_repeat,
              g_rounds);
  std::printf(
      "one4: one IPv4 source to the last rule (the memo); hit6, miss6: a new IPv6 source every "
      "packet, inside the set to the last rule, outside it to no rule\n\n");
  std::printf("%6s %9s %9s %8s %6s %7s %8s %7s %7s %7s %7s %7s %8s %8s\n", "rules", "prefixes",
              "compile", "write", "rss", "tries", "bitmaps", "maps", "empty", "one4", "hit6",
              "miss6", "hit6 ovr", "hit6/1st");
  std::printf("%6s %9s %9s %8s %6s %7s %8s %7s %7s %7s %7s %7s %8s %8s\n", "", "per fam", "ms",
              "ms", "MiB", "MiB", "MiB", "MiB", "ns", "ns", "ns", "ns", "ns", "");
  std::map<uint32_t, double> first;  // prefixes -> hit6 at the fewest rules
  for (const auto& r : rows)
    if (!first.count(r.prefixes)) first[r.prefixes] = r.hit6;
  for (const auto& r : rows)
    std::printf("%6u %9u %9.1f %8.1f %6.0f %7.1f %8.1f %7.1f %7.2f %7.2f %7.2f %7.2f %8.2f %8.2f\n",
                r.rules, r.prefixes, r.compile_ms, r.write_ms, r.rss_mib, r.tries_mib,
                r.bitmaps_mib, r.maps_mib, r.floor_ns, r.one4, r.hit6, r.miss6, r.overrides6,
                r.hit6 / first[r.prefixes]);
  std::printf(
      "\nrss: the process's peak so far (the policy's model, the compiler's output and the "
      "writer's batches); tries: rl_src_v4/v6; maps: every map of the data path; hit6 ovr: hit6 "
      "with the last rule holding a runtime override that covers none of the stream; hit6/1st: "
      "hit6 over hit6 at the fewest rules with the same set\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (!parse_args(argc, argv)) return 2;
  const rl::bench::EmptyProgram empty;
  std::vector<Row> rows;
  for (uint32_t prefixes : g_prefixes)
    for (uint32_t rules : g_rules) {
      rows.push_back(run(rules, prefixes, empty.fd()));
      std::fprintf(stderr, "bench_scale: %u rules, %u prefixes done\n", rules, prefixes);
    }
  print(rows);
  return 0;
}
