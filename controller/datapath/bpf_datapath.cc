// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/bpf_datapath.h"

#include <bpf/btf.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "common/clock.h"
#include "datapath/pins.h"
#include "rl_hash.h"
#include "rl_layout.h"
#include "rl_xdp.skel.h"

namespace rl {
namespace {

// A packet reads the active generation once and then uses that generation's maps until it is
// done, a few microseconds at most. Before the controller rewrites a generation that was active
// it waits this long after the switch away from it, so no packet can still be reading it.
constexpr auto kGenerationGrace = std::chrono::milliseconds(50);

uint32_t round_up_pow2(uint32_t v) {
  uint32_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

// Maps whose size follows the key table's: an adopted table keeps its pinned size, and a table
// pinned without one of them cannot be adopted (its keys would have no summary).
bool sized_by_key_table(const std::string& name) {
  return name == "rl_keys" || name == "rl_key_summary";
}

// One generation's table of `n` classes, packed RL_PORTS_PER_ENTRY to an array element (value
// v's is index(v)); an empty table (a field no rule names, which packets never read) is written
// as zeros.
template <typename Index>
void write_classes(rl_port_classes* map, const std::vector<uint16_t>& cls, uint32_t n,
                   Index&& index) {
  for (uint32_t v = 0; v < n; v++) map[index(v)].cls[rl_class_lane(v)] = cls.empty() ? 0 : cls[v];
}

template <typename K>
MapRef<K, rl_src_entry> trie(const bpf_map* m) {
  return MapRef<K, rl_src_entry>(bpf_map__fd(m), bpf_map__name(m));
}

struct PinnedLayout {
  bool present = false;
  bool other_abi = false;  // pinned by an rld with another data path layout: replace, not adopt
  uint32_t abi = 0;
  uint32_t key_sets = 0;
  uint64_t hash_seed = 0;
  std::string mismatch;  // why the maps of the same ABI cannot be adopted
};

// Why a pinned map cannot be reused as `m` (libbpf would refuse to load), or "". The key
// table's size is the pinned one's when adopting, so only its shape is compared.
std::string pinned_map_mismatch(const std::string& root, const bpf_map* m) {
  std::string name = bpf_map__name(m);
  UniqueFd fd(bpf_obj_get(pinned_map_path(root, name).c_str()));
  if (!fd)
    return errno == ENOENT && !sized_by_key_table(name) ? "" : name + " missing or unreadable";
  bpf_map_info info{};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(fd.get(), &info, &len) != 0) return name + " unreadable";
  bool sized_here = sized_by_key_table(name);
  if (info.type != bpf_map__type(m) || info.key_size != bpf_map__key_size(m) ||
      info.value_size != bpf_map__value_size(m) || info.map_flags != bpf_map__map_flags(m) ||
      (!sized_here && info.max_entries != bpf_map__max_entries(m)))
    return name + " has another shape";
  return "";
}

// What a previous rld left pinned: the ABI must match to be adopted, and the key table's size
// is taken over (re-sizing would drop every key's state). Pins that cannot be adopted, another
// ABI or a map of another shape under the same ABI, are replaced rather than refused.
Result<PinnedLayout> pinned_layout(const std::string& root, const bpf_object* obj) {
  PinnedLayout out;
  UniqueFd control(bpf_obj_get(pinned_map_path(root, "rl_control").c_str()));
  if (!control) {
    if (errno == ENOENT) return out;
    return errno_error("open pinned rl_control under " + root);
  }
  // Another layout's rl_control may be larger than this one's: the kernel writes the whole
  // value. Its first words, abi_version among them, keep their place in every layout.
  bpf_map_info cinfo{};
  uint32_t clen = sizeof(cinfo);
  if (bpf_obj_get_info_by_fd(control.get(), &cinfo, &clen) != 0)
    return errno_error("inspect pinned rl_control");
  std::vector<uint8_t> value(std::max<size_t>(cinfo.value_size, sizeof(rl_control)));
  uint32_t zero = 0;
  if (bpf_map_lookup_elem(control.get(), &zero, value.data()) != 0)
    return errno_error("read pinned rl_control");
  rl_control c{};
  std::memcpy(&c, value.data(), sizeof(c));
  out.abi = c.abi_version;
  if (c.abi_version != RL_ABI_VERSION) {
    out.other_abi = true;
    return out;
  }
  const bpf_map* m;
  bpf_object__for_each_map(m, obj) {
    if (bpf_map__is_internal(m)) continue;
    out.mismatch = pinned_map_mismatch(root, m);
    if (!out.mismatch.empty()) {
      out.other_abi = true;
      return out;
    }
  }
  UniqueFd keys(bpf_obj_get(pinned_map_path(root, "rl_keys").c_str()));
  if (!keys) return errno_error("open pinned rl_keys under " + root);
  bpf_map_info info{};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(keys.get(), &info, &len) != 0)
    return errno_error("inspect pinned rl_keys");
  out.present = true;
  out.key_sets = info.max_entries;
  out.hash_seed = c.hash_seed;
  return out;
}

}  // namespace

void SkeletonDeleter::operator()(rl_xdp* s) const { rl_xdp__destroy(s); }

BpfDatapath::BpfDatapath(rl_xdp* skel) : skel_(skel) {}

namespace {

// Whether XDP programs can look up conntrack here (bpf_xdp_ct_lookup in the kernel's BTF, or in
// the nf_conntrack module's while it is loaded): SYN cookies need it. Read once per process.
bool kernel_has_ct_lookup() {
  static const bool found = [] {
    btf* vmlinux = btf__load_vmlinux_btf();
    if (!vmlinux) return false;
    bool f = btf__find_by_name_kind(vmlinux, "bpf_xdp_ct_lookup", BTF_KIND_FUNC) > 0;
    if (!f) {
      if (btf* mod = btf__load_module_btf("nf_conntrack", vmlinux)) {
        f = btf__find_by_name_kind(mod, "bpf_xdp_ct_lookup", BTF_KIND_FUNC) > 0;
        btf__free(mod);
      }
    }
    btf__free(vmlinux);
    return f;
  }();
  return found;
}

}  // namespace

Result<std::unique_ptr<BpfDatapath>> BpfDatapath::load(const LoadOptions& opts) {
  rl_xdp* skel = rl_xdp__open();
  if (!skel) return errno_error("open rl_xdp skeleton");
  std::unique_ptr<BpfDatapath> dp(new BpfDatapath(skel));

  uint32_t sets = round_up_pow2(std::max<uint32_t>(opts.key_capacity / RL_WAYS, 1));
  uint64_t seed = 0;
  if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed)) return errno_error("key hash seed");
  if (!opts.pin_root.empty()) {
    auto pinned = pinned_layout(opts.pin_root, skel->obj);
    if (!pinned) return pinned.error();
    if (pinned->other_abi) {
      // Fresh maps, pinned only once the interfaces run the new program (take_over_pins):
      // until then the old program keeps enforcing with its own maps.
      dp->replaced_abi_ = pinned->abi;
      dp->pin_root_ = opts.pin_root;
    } else if (pinned->present) {
      dp->adopted_ = true;
      sets = pinned->key_sets;
      seed = pinned->hash_seed;  // the adopted keys were placed with it
    }
    bpf_map* m;
    bpf_object__for_each_map(m, skel->obj) {
      if (pinned->other_abi || bpf_map__is_internal(m)) continue;
      if (int err =
              bpf_map__set_pin_path(m, pinned_map_path(opts.pin_root, bpf_map__name(m)).c_str());
          err)
        return errno_error(std::string("pin path for ") + bpf_map__name(m), err);
    }
  }
  dp->key_sets_ = sets;
  dp->hash_seed_ = seed;
  dp->key_low_bits_ = rl_set_low_bits(sets);
  skel->rodata->rl_key_low_bits = dp->key_low_bits_;
  skel->rodata->rl_hash_seed = seed;
  skel->rodata->rl_trace_decisions = opts.trace_decisions ? 1 : 0;
  skel->rodata->rl_bench_src_spread = opts.bench_src_spread;
  if (opts.traffic_sample_shift > RL_TRAFFIC_SAMPLE_SHIFT_MAX)
    return Error{EINVAL, "traffic_sample_shift " + std::to_string(opts.traffic_sample_shift) +
                             " is above " + std::to_string(RL_TRAFFIC_SAMPLE_SHIFT_MAX)};
  skel->rodata->rl_traffic_sample_shift = opts.traffic_sample_shift;
  dp->traffic_sample_shift_ = opts.traffic_sample_shift;
  dp->syn_cookies_ = opts.syn_cookies && kernel_has_ct_lookup();
  skel->rodata->rl_syncookies_available = dp->syn_cookies_ ? 1 : 0;
  if (int err = bpf_map__set_max_entries(skel->maps.rl_keys, sets); err)
    return errno_error("size rl_keys", err);
  if (int err = bpf_map__set_max_entries(skel->maps.rl_key_summary, rl_summary_lines(sets)); err)
    return errno_error("size rl_key_summary", err);
  if (!dp->adopted_)
    if (int err = bpf_map__set_max_entries(skel->maps.rl_cluster_admitted,
                                           std::max<uint32_t>(opts.cluster_keys, 64));
        err)
      return errno_error("size rl_cluster_admitted", err);
  if (int err = rl_xdp__load(skel); err) return errno_error("load rl_xdp (verifier)", err);
  if (auto s = dp->init(); !s) return s.error();
  if (auto s = dp->calibrate_coarse_clock(); !s) return s.error();
  if (dp->replaced_abi_)
    if (auto s = dp->carry_runtime_entries(dp->replaced_abi_); !s) return s.error();
  if (opts.key_table_full) {
    // Split as growth does, a doubling per grace period: an adopted table's keys move to the
    // sets packets will look in, and a fresh one has none to move.
    auto grown = dp->growth_->grow_to(dp->key_sets_, dp->key_sets_);
    if (!grown) return grown.error();
  }
  return dp;
}

Status BpfDatapath::init() {
  auto control = mmap_array(skel_->maps.rl_control);
  if (!control) return control.error();
  control_ = std::move(*control);
  auto bitmaps = mmap_array(skel_->maps.rl_bitmaps);
  if (!bitmaps) return bitmaps.error();
  bitmaps_ = std::move(*bitmaps);
  auto ports = mmap_array(skel_->maps.rl_port_classes);
  if (!ports) return ports.error();
  ports_ = std::move(*ports);
  auto bytes = mmap_array(skel_->maps.rl_byte_classes);
  if (!bytes) return bytes.error();
  bytes_ = std::move(*bytes);
  auto filter = mmap_array(skel_->maps.rl_src_filter);
  if (!filter) return filter.error();
  filter_ = std::move(*filter);
  auto keys = mmap_array(skel_->maps.rl_keys);
  if (!keys) return keys.error();
  keys_ = std::move(*keys);
  auto summary = mmap_array(skel_->maps.rl_key_summary);
  if (!summary) return summary.error();
  summary_ = std::move(*summary);
  auto offenders = mmap_array(skel_->maps.rl_offenders);
  if (!offenders) return offenders.error();
  offenders_ = std::move(*offenders);
  auto runtime_filter = mmap_array(skel_->maps.rl_runtime_filter);
  if (!runtime_filter) return runtime_filter.error();
  runtime_filter_map_ = std::move(*runtime_filter);
  runtime_filter_ = std::make_unique<RuntimeFilter>(
      std::span<uint64_t>(runtime_filter_map_.as<uint64_t>(), RL_RUNTIME_FILTER_ENTRIES),
      rcu_grace_period);
  auto hosts_v4 = mmap_array(skel_->maps.rl_hosts_v4);
  if (!hosts_v4) return hosts_v4.error();
  hosts_v4_ = std::move(*hosts_v4);
  auto hosts_v6 = mmap_array(skel_->maps.rl_hosts_v6);
  if (!hosts_v6) return hosts_v6.error();
  hosts_v6_ = std::move(*hosts_v6);
  hosts_ = std::make_unique<HostTable>(
      std::span<rl_host_set4>(hosts_v4_.as<rl_host_set4>(), RL_HOST_SETS_V4),
      std::span<rl_host_set6>(hosts_v6_.as<rl_host_set6>(), RL_HOST_SETS_V6), hash_seed_);
  auto* ctl = control_.as<rl_control>();
  ctl->hash_seed = hash_seed_;
  ctl->abi_version = RL_ABI_VERSION;
  if (Status s = load_runtime_lists(); !s) return s;
  // A fresh table starts at its smallest; an adopted one keeps the sets its keys are in.
  std::atomic_ref<uint32_t> active(ctl->key_sets_active);
  const uint32_t smallest = 1u << key_low_bits_;
  if (active.load() < smallest || active.load() > key_sets_) active.store(smallest);
  growth_ = std::make_unique<KeySetGrowth>(
      std::span<rl_set>(keys_.as<rl_set>(), key_sets_),
      std::span<rl_set_summary>(summary_.as<rl_set_summary>(), rl_summary_lines(key_sets_)),
      &ctl->key_sets_active, key_low_bits_, rcu_grace_period);
  return {};
}

int BpfDatapath::prog_fd() const { return bpf_program__fd(skel_->progs.rl_xdp); }

Status BpfDatapath::take_over_pins() {
  if (!replaced_abi_) return {};
  bpf_map* m;
  bpf_object__for_each_map(m, skel_->obj) {
    if (bpf_map__is_internal(m)) continue;
    std::string path = pinned_map_path(pin_root_, bpf_map__name(m));
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return errno_error("unpin old " + path);
    if (int err = bpf_map__pin(m, path.c_str()); err) return errno_error("pin " + path, err);
  }
  replaced_abi_ = 0;
  return {};
}

Status BpfDatapath::unpin_fresh_maps() {
  if (adopted_ || replaced_abi_) return {};
  bpf_map* m;
  bpf_object__for_each_map(m, skel_->obj) {
    if (bpf_map__is_internal(m) || !bpf_map__pin_path(m)) continue;
    if (int err = bpf_map__unpin(m, nullptr); err && err != -ENOENT)
      return errno_error(std::string("unpin ") + bpf_map__pin_path(m), err);
  }
  return {};
}

uint64_t BpfDatapath::now_ns() const {
  uint64_t test = std::atomic_ref<__u64>(skel_->bss->rl_clock_override_ns).load();
  if (test) return test;
  LIBBPF_OPTS(bpf_test_run_opts, o);
  if (bpf_prog_test_run_opts(bpf_program__fd(skel_->progs.rl_clock), &o) == 0)
    return std::atomic_ref<__u64>(skel_->bss->rl_clock_ns).load();
  timespec ts{};  // not reachable on kernels that load rl_xdp at all
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return timespec_ns(ts);
}

Result<BpfDatapath::ClockReading> BpfDatapath::read_clocks() const {
  LIBBPF_OPTS(bpf_test_run_opts, o);
  if (bpf_prog_test_run_opts(bpf_program__fd(skel_->progs.rl_clock), &o) != 0)
    return errno_error("run rl_clock");
  const auto* bss = skel_->bss;
  ClockReading r;
  r.precise_ns = std::atomic_ref<const __u64>(bss->rl_clock_ns).load();
  r.packet_ns = std::atomic_ref<const __u64>(bss->rl_clock_packet_ns).load();
  r.jiffies = std::atomic_ref<const __u64>(bss->rl_clock_jiffies[0]).load();
  r.jiffies_steady = r.jiffies == std::atomic_ref<const __u64>(bss->rl_clock_jiffies[1]).load();
  r.jiffy_ns = std::atomic_ref<const __u64>(bss->rl_jiffy_ns).load();
  return r;
}

// Packets read the coarse clock as jiffies * tick + base (bpf/lib/clock.h). The tick is
// CLOCK_MONOTONIC_COARSE's resolution (the kernel's TICK_NSEC). Jiffy j starts at monotonic time
// j * tick + base: the kernel counts a jiffy once its boundary has passed, so every reading of
// the precise time t within jiffy j bounds the base from above, t - j * tick >= base, and the
// reading just after a boundary meets it. Readings run back to back until jiffies have moved
// twice (a whole jiffy seen, its start included); the smallest bound is the base, a few
// microseconds late. Tick and base are written before the program is attached, base first, so a
// packet never scales by a tick without its base. Without a tick, packets keep calling the
// kernel's coarse clock.
Status BpfDatapath::calibrate_coarse_clock() {
  const std::optional<uint64_t> resolution = coarse_clock_resolution_ns();
  if (!resolution) return errno_error("resolution of CLOCK_MONOTONIC_COARSE");
  const uint64_t tick = *resolution;
  if (tick == 0 || tick > kMaxJiffyNs) return {};
  std::optional<uint64_t> base, first_jiffy;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(4 * tick) +
                        std::chrono::milliseconds(100);
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = read_clocks();
    if (!r) return r.error();
    if (!r->jiffies_steady) continue;  // a tick between the reads: which jiffy t fell in is unknown
    if (!first_jiffy) first_jiffy = r->jiffies;
    // Compared modulo 2^64: jiffies start near 2^32, so the base wraps.
    uint64_t b = r->precise_ns - r->jiffies * tick;
    if (!base || static_cast<int64_t>(b - *base) < 0) base = b;
    if (r->jiffies - *first_jiffy >= 2) break;
  }
  if (!base) return Error{EAGAIN, "the coarse clock: jiffies never held still"};
  std::atomic_ref<__u64>(skel_->bss->rl_jiffies_base_ns).store(*base);
  std::atomic_ref<__u64>(skel_->bss->rl_jiffy_ns).store(tick);
  return {};
}

int BpfDatapath::events_fd() const { return bpf_map__fd(skel_->maps.rl_events); }
int BpfDatapath::samples_fd() const { return bpf_map__fd(skel_->maps.rl_samples); }
int BpfDatapath::keys_fd() const { return bpf_map__fd(skel_->maps.rl_keys); }

uint32_t BpfDatapath::epoch() const {
  return std::atomic_ref<uint32_t>(control_.as<rl_control>()->active_gen).load();
}

uint32_t BpfDatapath::active_generation() const { return epoch() & 1; }

Result<std::vector<std::pair<std::string, rl_rule>>> BpfDatapath::active_rules() const {
  uint32_t gen = active_generation();
  MapRef<uint32_t, rl_gen_config> gcfg(bpf_map__fd(skel_->maps.rl_gen_config), "rl_gen_config");
  MapRef<uint32_t, rl_rule> rules(bpf_map__fd(skel_->maps.rl_rules), "rl_rules");
  MapRef<uint32_t, rl_rule_meta> meta(bpf_map__fd(skel_->maps.rl_rule_meta), "rl_rule_meta");
  auto cfg = gcfg.lookup(gen);
  if (!cfg) return cfg.error();
  std::vector<std::pair<std::string, rl_rule>> out;
  for (uint32_t pos = 0; pos < cfg->rule_count && pos < RL_MAX_RULES; pos++) {
    auto r = rules.lookup(rl_rule_index(gen, pos));
    if (!r) return r.error();
    auto m = meta.lookup(r->stats_slot);
    if (!m) return m.error();
    out.emplace_back(std::string(m->name, strnlen(m->name, sizeof(m->name))), *r);
  }
  return out;
}

Result<compiler::RuleIds> BpfDatapath::rule_ids() const {
  auto rules = active_rules();
  if (!rules) return rules.error();
  MapRef<uint32_t, rl_rule_meta> meta(bpf_map__fd(skel_->maps.rl_rule_meta), "rl_rule_meta");
  compiler::RuleIds ids;
  for (const auto& [name, r] : *rules) {
    auto m = meta.lookup(r.stats_slot);
    if (!m) return m.error();
    ids.by_name[name] = {r.id, r.stats_slot, m->signature};
    ids.next_id = std::max(ids.next_id, r.id + 1 + r.more_limits);
  }
  ids.next_id = std::max(ids.next_id,
                         std::atomic_ref<uint32_t>(control_.as<rl_control>()->next_rule_id).load());
  return ids;
}

namespace {

// Removes one generation's entries from a pair of per-family tries (sources or destinations).
Status clear_tries(bpf_map* m4, bpf_map* m6, uint32_t gen) {
  auto v4 = trie<rl_lpm4_key>(m4);
  auto keys4 = v4.keys();
  if (!keys4) return keys4.error();
  for (const auto& k : *keys4)
    if (k.gen == gen)
      if (auto s = v4.remove(k); !s) return s;
  auto v6 = trie<rl_lpm6_key>(m6);
  auto keys6 = v6.keys();
  if (!keys6) return keys6.error();
  for (const auto& k : *keys6)
    if (k.gen == gen)
      if (auto s = v6.remove(k); !s) return s;
  return {};
}

Status write_tries(bpf_map* m4, bpf_map* m6, uint32_t gen,
                   const std::vector<compiler::SourceEntry>& entries) {
  auto v4 = trie<rl_lpm4_key>(m4);
  auto v6 = trie<rl_lpm6_key>(m6);
  for (const auto& e : entries) {
    if (e.prefix.addr.family == 4) {
      rl_lpm4_key k{rl_trie_prefixlen(e.prefix.len), gen, {}};
      std::memcpy(k.addr, e.prefix.addr.bytes.data(), 4);
      if (auto s = v4.update(k, e.value); !s) return s.error().wrap(e.prefix.str());
    } else {
      rl_lpm6_key k{rl_trie_prefixlen(e.prefix.len), gen, {}};
      std::memcpy(k.addr, e.prefix.addr.bytes.data(), 16);
      if (auto s = v6.update(k, e.value); !s) return s.error().wrap(e.prefix.str());
    }
  }
  return {};
}

}  // namespace

Status BpfDatapath::clear_generation(uint32_t gen) {
  if (auto s = clear_tries(skel_->maps.rl_src_v4, skel_->maps.rl_src_v6, gen); !s) return s;
  return clear_tries(skel_->maps.rl_dst_v4, skel_->maps.rl_dst_v6, gen);
}

Status BpfDatapath::apply(const compiler::CompiledRuleSet& rs) {
  if (rs.rules.size() > RL_MAX_RULES || rs.classes.size() > RL_MAX_CLASSES)
    return Error{E2BIG, "rule set exceeds the data path's limits"};
  if (!syn_cookies_)
    for (size_t pos = 0; pos < rs.rules.size(); pos++)
      if (rs.rules[pos].flags & RL_RULE_F_SYN_COOKIES)
        return Error{ENOTSUP, "rule '" + rs.names[pos] +
                                  "': syn_cookies needs XDP's conntrack lookup, which this "
                                  "kernel does not offer (bpf_xdp_ct_lookup; with nf_conntrack "
                                  "as a module, load it before rld starts)"};
  const uint32_t in_force = epoch();
  const uint32_t next = (in_force & 1) ^ 1;

  auto since = std::chrono::steady_clock::now() - last_switch_;
  if (since < kGenerationGrace) std::this_thread::sleep_for(kGenerationGrace - since);

  if (auto s = clear_generation(next); !s) return s.error().wrap("clear generation");

  MapRef<uint32_t, rl_rule> rules(bpf_map__fd(skel_->maps.rl_rules), "rl_rules");
  MapRef<uint32_t, rl_rule> budgets(bpf_map__fd(skel_->maps.rl_new_sources), "rl_new_sources");
  MapRef<uint32_t, rl_rule> stacked(bpf_map__fd(skel_->maps.rl_limits), "rl_limits");
  MapRef<uint32_t, rl_rule_meta> meta(bpf_map__fd(skel_->maps.rl_rule_meta), "rl_rule_meta");
  PerCpuArrayRef<rl_rule_counters> stats(bpf_map__fd(skel_->maps.rl_rule_stats), "rl_rule_stats");
  PerCpuArrayRef<rl_counter> limit_stats(bpf_map__fd(skel_->maps.rl_limit_stats), "rl_limit_stats");
  for (uint32_t slot : rs.new_slots) {
    if (auto s = stats.reset(slot); !s) return s;
    for (uint32_t l = 0; l < RL_MAX_LIMITS; l++)
      if (auto s = limit_stats.reset(rl_limit_stats_index(slot, l)); !s) return s;
  }
  for (size_t pos = 0; pos < rs.rules.size(); pos++) {
    const rl_rule& r = rs.rules[pos];
    const uint32_t idx = rl_rule_index(next, static_cast<uint32_t>(pos));
    if (pos < rs.new_sources.size())
      if (auto s = budgets.update(idx, rs.new_sources[pos]); !s) return s;
    for (uint32_t l = 1; l <= r.more_limits; l++) {
      const rl_rule& limit = rs.more_limits.at(rl_stacked_index(static_cast<uint32_t>(pos), l - 1));
      if (auto s = stacked.update(rl_stacked_index(idx, l - 1), limit); !s) return s;
    }
    if (auto s = rules.update(idx, r); !s) return s;
    rl_rule_meta m{};
    std::strncpy(m.name, rs.names[pos].c_str(), sizeof(m.name) - 1);
    m.signature = rs.ids.by_name.at(rs.names[pos]).signature;
    if (auto s = meta.update(r.stats_slot, m); !s) return s;
  }

  rl_bitmap* bm = bitmaps_.as<rl_bitmap>() + rl_bitmap_index(next, 0);
  std::memcpy(bm, rs.classes.data(), rs.classes.size() * sizeof(rl_bitmap));

  for (uint32_t t = 0; t < RL_PORT_TABLES; t++)
    write_classes(ports_.as<rl_port_classes>(), rs.port_classes[t], RL_PORT_VALUES,
                  [&](uint32_t v) { return rl_port_class_index(next, t, v); });
  for (uint32_t t = 0; t < RL_BYTE_TABLES; t++)
    write_classes(bytes_.as<rl_port_classes>(), rs.byte_classes[t], RL_BYTE_VALUES,
                  [&](uint32_t v) { return rl_byte_class_index(next, t, v); });

  for (uint32_t fam6 = 0; fam6 < 2; fam6++) {
    uint64_t* words = filter_.as<uint64_t>() + rl_src_filter_index(next, fam6, 0);
    const auto& f = rs.source_filter[fam6];
    if (f.size() == RL_FILTER_WORDS)
      std::memcpy(words, f.data(), RL_FILTER_WORDS * sizeof(uint64_t));
    else
      std::memset(words, 0, RL_FILTER_WORDS * sizeof(uint64_t));
  }

  if (auto s = write_tries(skel_->maps.rl_src_v4, skel_->maps.rl_src_v6, next, rs.sources); !s)
    return s;
  if (auto s = write_tries(skel_->maps.rl_dst_v4, skel_->maps.rl_dst_v6, next, rs.destinations); !s)
    return s.error().wrap("destination");

  MapRef<uint32_t, rl_gen_config> gcfg(bpf_map__fd(skel_->maps.rl_gen_config), "rl_gen_config");
  if (auto s = gcfg.update(next, rs.config); !s) return s;

  std::atomic_ref<uint32_t>(control_.as<rl_control>()->next_rule_id).store(rs.ids.next_id);
  // The switch: one aligned 32-bit store that packets read once each. Everything above is
  // visible before it (release order on the mmapped word). The epoch moves on by one, not back
  // to a generation number: a CPU's memo of its last match holds for one rule set, and two
  // switches bring its generation back with another (bpf/lib/memo.h).
  std::atomic_ref<uint32_t>(control_.as<rl_control>()->active_gen)
      .store(in_force + 1, std::memory_order_release);
  last_switch_ = std::chrono::steady_clock::now();
  return {};
}

namespace {

rl_runtime_lpm4_key runtime_key4(const Prefix& p) {
  rl_runtime_lpm4_key k{p.len, {}};
  std::memcpy(k.addr, p.addr.bytes.data(), 4);
  return k;
}
rl_runtime_lpm6_key runtime_key6(const Prefix& p) {
  rl_runtime_lpm6_key k{p.len, {}};
  std::memcpy(k.addr, p.addr.bytes.data(), 16);
  return k;
}

// rl_control.runtime_acl_v4/v6 count each family's entries (hosts and prefixes), so that packets
// skip the lookups while a family has none. rld's main loop is their only writer, and each add or
// remove moves its family's count by one: counting by listing the trie made every change a pass
// over it, quadratic in the entries an operator adds (bench/results/2026-11-24-runtime-lists.md).
// The count goes up before an entry goes in and down after one is gone, so a packet never reads
// fewer than the maps hold (0 would skip an entry); load_runtime_lists() recounts, which mends a
// count a crash left too high.
template <typename K>
Status runtime_put(const MapRef<K, rl_runtime_entry>& map, uint32_t& count, const K& key,
                   const rl_runtime_entry& e) {
  std::atomic_ref<uint32_t> n(count);
  n.fetch_add(1);
  Status s = map.update(key, e, BPF_NOEXIST);
  if (s) return s;
  n.fetch_sub(1);
  if (s.error().err != EEXIST) return s;
  return map.update(key, e, BPF_EXIST);  // a new expiry or list for the same prefix
}

// Whether the entry was there.
template <typename K>
Result<bool> runtime_erase(const MapRef<K, rl_runtime_entry>& map, uint32_t& count, const K& key) {
  if (bpf_map_delete_elem(map.fd(), &key) != 0) {
    if (errno == ENOENT) return false;
    return errno_error("delete " + map.name());
  }
  std::atomic_ref<uint32_t>(count).fetch_sub(1);
  return true;
}

// A family's runtime maps (rl_abi.h): its hosts' hash and its prefixes' trie, one key type.
template <typename K>
struct RuntimeMaps {
  MapRef<K, rl_runtime_entry> hosts, trie;
  RuntimeMaps(const bpf_map* h, const bpf_map* t)
      : hosts(bpf_map__fd(h), bpf_map__name(h)), trie(bpf_map__fd(t), bpf_map__name(t)) {}
  RuntimeMaps(MapRef<K, rl_runtime_entry> h, MapRef<K, rl_runtime_entry> t)
      : hosts(std::move(h)), trie(std::move(t)) {}
};

// Whether a map holds no entry at all.
template <typename K>
Result<bool> map_empty(const MapRef<K, rl_runtime_entry>& map) {
  K next{};
  if (bpf_map_get_next_key(map.fd(), nullptr, &next) == 0) return false;
  if (errno == ENOENT) return true;
  return errno_error("iterate " + map.name());
}

// Erases a host's entry from the family's hosts' hash, if the hash may hold any; packets stop
// asking a hash once it is empty.
template <typename K>
Result<bool> runtime_hash_erase(const RuntimeMaps<K>& m, RuntimeFilter& filter, uint32_t fam6,
                                uint32_t& count, const K& key) {
  if (!filter.hash_may_hold(fam6)) return false;
  auto gone = runtime_erase(m.hosts, count, key);
  if (!gone || !*gone) return gone;
  auto empty = map_empty(m.hosts);
  if (!empty) return empty.error();
  if (*empty) filter.hash_emptied(fam6);
  return true;
}

// A host's entry goes to its set of the host table, or to the hosts' hash when the set has no
// way free. Once the table holds it, a copy elsewhere goes: in the hash (its set was full
// before), or in the trie, where an rld before the hash put hosts.
template <typename K>
Status runtime_host_put(HostTable& table, RuntimeFilter& filter, const RuntimeMaps<K>& m,
                        uint32_t& count, const Prefix& host, const K& key,
                        const rl_runtime_entry& e) {
  const uint32_t fam6 = host.addr.family == 6;
  std::atomic_ref<uint32_t> n(count);
  n.fetch_add(1);  // up before the entry is in, as runtime_put counts
  auto put = table.put(host.addr, e.flags, e.expires_ns);
  if (put != HostTable::Put::kAdded) n.fetch_sub(1);
  if (put == HostTable::Put::kFull) {
    filter.hash_in_use(fam6);
    return runtime_put(m.hosts, count, key, e);
  }
  if (auto moved = runtime_hash_erase(m, filter, fam6, count, key); !moved) return moved.error();
  auto legacy = runtime_erase(m.trie, count, key);
  return legacy ? Status{} : Status(legacy.error());
}

template <typename K>
Result<bool> runtime_host_erase(HostTable& table, RuntimeFilter& filter, const RuntimeMaps<K>& m,
                                uint32_t& count, const Prefix& host, const K& key) {
  if (table.erase(host.addr)) {
    std::atomic_ref<uint32_t>(count).fetch_sub(1);
    return true;
  }
  auto gone = runtime_hash_erase(m, filter, host.addr.family == 6, count, key);
  if (!gone || *gone) return gone;
  return runtime_erase(m.trie, count, key);
}

// Every entry of a family, with the map holding it: the hosts' hash in batches of thousands per
// syscall, the trie (which has no batch operations) a key at a time.
template <typename K, typename Fn>
Status runtime_each(const RuntimeMaps<K>& m, Fn&& fn) {
  auto hosts = m.hosts.entries();
  if (!hosts) return hosts.error();
  for (const auto& [k, e] : *hosts) fn(m.hosts, k, e);
  auto keys = m.trie.keys();
  if (!keys) return keys.error();
  for (const auto& k : *keys) {
    auto e = m.trie.find(k);
    if (!e) return e.error();
    if (*e) fn(m.trie, k, **e);  // else removed meanwhile
  }
  return {};
}

template <typename K>
Prefix runtime_prefix(const K& k, uint8_t family) {
  Address a;
  a.family = family;
  std::memcpy(a.bytes.data(), k.addr, sizeof(k.addr));
  return Prefix::of(a, static_cast<uint8_t>(k.prefixlen));
}

template <typename K>
Status runtime_list(const RuntimeMaps<K>& m, uint8_t family, std::vector<RuntimeEntry>& out) {
  return runtime_each(m, [&](const auto&, const K& k, const rl_runtime_entry& e) {
    out.push_back({runtime_prefix(k, family), e.flags, e.expires_ns});
  });
}

// The hash holds only exact keys (`host_hash`: ask it). A trie lookup answers the longest match at
// most the key's length: the entry it finds is the key's own only if its length is the key's.
template <typename K>
Result<std::optional<RuntimeEntry>> runtime_find(const RuntimeMaps<K>& m, uint8_t family,
                                                 const K& key, bool host_hash) {
  auto entry = [&](const rl_runtime_entry& e) {
    return std::optional<RuntimeEntry>(
        RuntimeEntry{runtime_prefix(key, family), e.flags, e.expires_ns});
  };
  if (host_hash) {
    auto e = m.hosts.find(key);
    if (!e) return e.error();
    if (*e) return entry(**e);
  }
  auto e = m.trie.find(key);
  if (!e) return e.error();
  if (*e && (*e)->prefixlen == key.prefixlen) return entry(**e);
  return std::optional<RuntimeEntry>();
}

// Writes the entry's length into entries an rld before rl_runtime_entry.prefixlen left at 0,
// so that packets can look past them once expired and runtime_find can tell them apart.
template <typename K>
Status runtime_stamp_lengths(const RuntimeMaps<K>& m) {
  std::vector<std::tuple<const MapRef<K, rl_runtime_entry>*, K, rl_runtime_entry>> stale;
  Status s = runtime_each(m, [&](const auto& map, const K& k, rl_runtime_entry e) {
    if (e.prefixlen == k.prefixlen) return;
    e.prefixlen = k.prefixlen;
    stale.emplace_back(&map, k, e);
  });
  if (!s) return s;
  for (const auto& [map, k, e] : stale)
    if (Status u = map->update(k, e, BPF_EXIST); !u && u.error().err != ENOENT) return u;
  return {};
}

RuntimeMaps<rl_runtime_lpm4_key> runtime_v4(const rl_xdp& skel) {
  return {skel.maps.rl_host_acl_v4, skel.maps.rl_runtime_v4};
}
RuntimeMaps<rl_runtime_lpm6_key> runtime_v6(const rl_xdp& skel) {
  return {skel.maps.rl_host_acl_v6, skel.maps.rl_runtime_v6};
}

// The runtime maps of the data path this one replaces, pinned under `root` (carry_runtime_entries),
// each opened only if its shape is this build's map's.
class ReplacedRuntimeMaps {
 public:
  explicit ReplacedRuntimeMaps(std::string root) : root_(std::move(root)) {}

  template <typename K>
  Status list(const bpf_map* hosts, const bpf_map* trie, uint8_t family,
              std::vector<RuntimeEntry>& out) {
    auto h = open(hosts);
    if (!h) return h.error();
    auto t = open(trie);
    if (!t) return t.error();
    RuntimeMaps<K> m(MapRef<K, rl_runtime_entry>(h->get(), bpf_map__name(hosts)),
                     MapRef<K, rl_runtime_entry>(t->get(), bpf_map__name(trie)));
    return runtime_list(m, family, out);
  }

  // The host table's entries, read from a copy of its sets.
  Status list_hosts(const bpf_map* v4, const bpf_map* v6, std::vector<RuntimeEntry>& out) {
    auto sets4 = copy_sets<rl_host_set4>(v4);
    if (!sets4) return sets4.error();
    auto sets6 = copy_sets<rl_host_set6>(v6);
    if (!sets6) return sets6.error();
    HostTable(*sets4, *sets6, 0).each([&](const RuntimeEntry& e) { out.push_back(e); });
    return {};
  }

 private:
  // EPROTO: the map is not pinned, or has another shape.
  Result<UniqueFd> open(const bpf_map* like) {
    const std::string name = bpf_map__name(like);
    if (std::string why = pinned_map_mismatch(root_, like); !why.empty())
      return Error{EPROTO, "the replaced data path's " + why};
    UniqueFd fd(bpf_obj_get(pinned_map_path(root_, name).c_str()));
    if (!fd && errno == ENOENT) return Error{EPROTO, "the replaced data path has no " + name};
    if (!fd) return errno_error("open the replaced data path's " + name);
    return fd;
  }

  template <typename Set>
  Result<std::vector<Set>> copy_sets(const bpf_map* like) {
    auto fd = open(like);
    if (!fd) return fd.error();
    std::vector<Set> sets(bpf_map__max_entries(like));
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t len = (sets.size() * sizeof(Set) + page - 1) & ~(page - 1);
    void* p = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd->get(), 0);
    if (p == MAP_FAILED)
      return errno_error("mmap the replaced data path's " + std::string(bpf_map__name(like)));
    MmapRegion region(p, len);
    std::memcpy(sets.data(), p, sets.size() * sizeof(Set));
    return sets;
  }

  std::string root_;
};

}  // namespace

// The operators' runtime entries outlive a layout change: read from the replaced data path's maps
// and written into this one's before any interface runs it, so no packet meets the new program
// without them. The old maps are read as this build's own, which is right only for the layouts
// whose runtime maps are this one's (RL_RUNTIME_LAYOUT_SINCE_ABI, abi/rl_abi.h), each map's shape
// checked as well. Expired entries are left behind; the others keep their expiry (CLOCK_MONOTONIC,
// which pins do not outlive).
Status BpfDatapath::carry_runtime_entries(uint32_t old_abi) {
  if (old_abi < RL_RUNTIME_LAYOUT_SINCE_ABI || old_abi > RL_ABI_VERSION) {
    runtime_carry_error_ = "the runtime maps of ABI " + std::to_string(old_abi) +
                           " are unknown to this build, which reads those of ABI " +
                           std::to_string(RL_RUNTIME_LAYOUT_SINCE_ABI) + " to " +
                           std::to_string(RL_ABI_VERSION);
    return {};
  }
  ReplacedRuntimeMaps old(pin_root_);
  std::vector<RuntimeEntry> entries;
  Status s = old.list<rl_runtime_lpm4_key>(skel_->maps.rl_host_acl_v4, skel_->maps.rl_runtime_v4, 4,
                                           entries);
  if (s)
    s = old.list<rl_runtime_lpm6_key>(skel_->maps.rl_host_acl_v6, skel_->maps.rl_runtime_v6, 6,
                                      entries);
  if (s) s = old.list_hosts(skel_->maps.rl_hosts_v4, skel_->maps.rl_hosts_v6, entries);
  if (!s) {
    if (s.error().err != EPROTO) return s.error().wrap("read the replaced runtime entries");
    runtime_carry_error_ = s.error().message;
    return {};
  }
  const uint64_t now = now_ns();
  std::erase_if(entries,
                [now](const RuntimeEntry& e) { return e.expires_ns && e.expires_ns <= now; });
  // Shortest prefixes first: the runtime filter then never has to lower its length and rebuild.
  std::stable_sort(
      entries.begin(), entries.end(),
      [](const RuntimeEntry& a, const RuntimeEntry& b) { return a.prefix.len < b.prefix.len; });
  for (const auto& e : entries)
    if (Status put = runtime_acl_set(e.prefix, e.flags, e.expires_ns); !put)
      return put.error().wrap("carry the runtime entry " + e.prefix.str());
  carried_runtime_ = entries.size();
  return {};
}

template <typename Fn>
auto BpfDatapath::runtime_family(const Prefix& prefix, Fn&& fn) const {
  auto* ctl = control_.as<rl_control>();
  if (prefix.addr.family == 4)
    return fn(runtime_v4(*skel_), ctl->runtime_acl_v4, runtime_key4(prefix));
  return fn(runtime_v6(*skel_), ctl->runtime_acl_v6, runtime_key6(prefix));
}

Status BpfDatapath::runtime_acl_set(const Prefix& prefix, uint32_t flags, uint64_t expires_ns) {
  rl_runtime_entry e{flags, prefix.len, expires_ns};
  // The filter first: a packet must never find an entry whose filter bit is clear.
  if (Status s = runtime_filter_->add(prefix, [this] { return runtime_prefixes(); }); !s) return s;
  return runtime_family(prefix, [&](const auto& m, uint32_t& count, const auto& key) -> Status {
    if (prefix.is_host())
      return runtime_host_put(*hosts_, *runtime_filter_, m, count, prefix, key, e);
    return runtime_put(m.trie, count, key, e);
  });
}

Status BpfDatapath::runtime_acl_remove(const Prefix& prefix) {
  Result<bool> gone =
      runtime_family(prefix, [&](const auto& m, uint32_t& count, const auto& key) -> Result<bool> {
        if (prefix.is_host())
          return runtime_host_erase(*hosts_, *runtime_filter_, m, count, prefix, key);
        return runtime_erase(m.trie, count, key);
      });
  if (!gone) return gone.error();
  if (!*gone) return {};
  return runtime_filter_->removed([this] { return runtime_prefixes(); });
}

Result<std::vector<Prefix>> BpfDatapath::runtime_prefixes() const {
  auto entries = runtime_acl_list();
  if (!entries) return entries.error();
  std::vector<Prefix> out;
  out.reserve(entries->size());
  for (const auto& e : *entries) out.push_back(e.prefix);
  return out;
}

Result<std::vector<BpfDatapath::RuntimeEntry>> BpfDatapath::runtime_acl_list() const {
  std::vector<RuntimeEntry> out;
  hosts_->each([&](const RuntimeEntry& e) { out.push_back(e); });
  if (Status s = runtime_list(runtime_v4(*skel_), 4, out); !s) return s.error();
  if (Status s = runtime_list(runtime_v6(*skel_), 6, out); !s) return s.error();
  return out;
}

Result<std::optional<BpfDatapath::RuntimeEntry>> BpfDatapath::runtime_acl_find(
    const Prefix& prefix) const {
  if (prefix.is_host())
    if (auto e = hosts_->find(prefix.addr)) return e;
  const bool hash = prefix.is_host() && runtime_filter_->hash_may_hold(prefix.addr.family == 6);
  return runtime_family(prefix, [&](const auto& m, uint32_t&, const auto& key) {
    return runtime_find(m, prefix.addr.family, key, hash);
  });
}

Result<std::vector<BpfDatapath::ClusterCount>> BpfDatapath::cluster_admitted() const {
  std::vector<ClusterCount> out;
  if (Status s = cluster_admitted_each([&](const ClusterCount& c) { out.push_back(c); }); !s)
    return s.error();
  return out;
}

Status BpfDatapath::cluster_admitted_each(
    const std::function<void(const ClusterCount&)>& fn) const {
  int ncpus = libbpf_num_possible_cpus();
  if (ncpus <= 0) return Error{EINVAL, "cannot tell the number of CPUs"};
  return lookup_batches<rl_key, uint64_t>(bpf_map__fd(skel_->maps.rl_cluster_admitted),
                                          "rl_cluster_admitted", ncpus,
                                          [&](const rl_key& k, const uint64_t* per_cpu) {
                                            uint64_t sum = 0;
                                            for (int c = 0; c < ncpus; c++) sum += per_cpu[c];
                                            fn(ClusterCount{k, sum});
                                          });
}

Status BpfDatapath::cluster_set_over(const rl_key& key, uint64_t until_ns) {
  rl_cluster_over v{until_ns};
  return MapRef<rl_key, rl_cluster_over>(bpf_map__fd(skel_->maps.rl_cluster_over),
                                         "rl_cluster_over")
      .update(key, v);
}

Status BpfDatapath::cluster_set_over(const std::vector<std::pair<rl_key, uint64_t>>& until_ns) {
  if (until_ns.empty()) return {};
  std::vector<rl_key> keys;
  std::vector<rl_cluster_over> values;
  keys.reserve(until_ns.size());
  values.reserve(until_ns.size());
  for (const auto& [k, until] : until_ns) {
    keys.push_back(k);
    values.push_back(rl_cluster_over{until});
  }
  return MapRef<rl_key, rl_cluster_over>(bpf_map__fd(skel_->maps.rl_cluster_over),
                                         "rl_cluster_over")
      .update(keys, values);
}

Result<uint64_t> BpfDatapath::cluster_prune_over(uint64_t now_ns) {
  // Every sync pass runs this: a batch read and a batch delete, not two syscalls per entry.
  MapRef<rl_key, rl_cluster_over> m(bpf_map__fd(skel_->maps.rl_cluster_over), "rl_cluster_over");
  auto entries = m.entries();
  if (!entries) return entries.error();
  std::vector<rl_key> expired;
  for (const auto& [k, v] : *entries)
    if (v.until_ns <= now_ns) expired.push_back(k);
  if (Status s = m.remove(expired); !s) {
    // An entry may have gone meanwhile (rlctl unblock): fall back to one at a time.
    for (const auto& k : expired)
      if (Status r = m.remove(k); !r) return r.error();
  }
  return entries->size() - expired.size();
}

uint32_t BpfDatapath::key_sets_active() const { return growth_->active(); }

uint32_t BpfDatapath::key_resets() const {
  return std::atomic_ref<__u32>(skel_->bss->rl_key_resets).load();
}

std::array<uint32_t, 2> BpfDatapath::sets_of(uint64_t hash) const {
  const uint32_t wide = rl_set_wide(rl_key_tag(hash), hash, key_low_bits_);
  const uint32_t active = key_sets_active();
  // 2^level sets: the table before the doubling under way.
  return {rl_set_index(wide, active), rl_set_index(wide, 1u << key_sets_level(active))};
}

Result<uint32_t> BpfDatapath::grow_key_table(uint64_t tracked) {
  uint32_t want = key_sets_wanted(tracked, key_sets_active(), key_sets_);
  if (want <= key_sets_active()) return 0u;
  return growth_->grow_to(want);
}

// The slot is reset the way a claim resets it; a packet of the key racing with the reset may
// keep its own update, which is what it would have got a moment earlier anyway. A key whose set
// is splitting meanwhile (grow_key_table, on another thread) is in its new set, its old one, or
// both for a grace period: both are looked at.
size_t BpfDatapath::reset_key(const rl_key& key) {
  const uint64_t hash = rl_key_hash(&key, hash_seed_);
  const auto sets = sets_of(hash);
  const uint32_t tag = rl_key_tag(hash);
  size_t n = 0;
  for (size_t i = 0; i < sets.size(); i++) {
    if (i > 0 && sets[i] == sets[0]) continue;
    for (auto& slot : keys_.as<rl_set>()[sets[i]].way) {
      if (std::atomic_ref<__u32>(slot.tag).load() != tag) continue;
      std::atomic_ref<__u64>(slot.state).store(0);
      std::atomic_ref<__u32>(slot.idle).store(0);
      n++;
    }
  }
  // After the stores: a CPU's memo may hold the key's refusal, good only under the count it read
  // before the word (bpf/lib/memo.h).
  if (n) std::atomic_ref<__u32>(skel_->bss->rl_key_resets).fetch_add(1);
  return n;
}

std::optional<rl_slot> BpfDatapath::read_key(const rl_key& key) const {
  const uint64_t hash = key_hash(key);
  const uint32_t tag = rl_key_tag(hash);
  for (uint32_t s : sets_of(hash))  // its set first, then the one it was in before a split
    for (const auto& slot : keys_.as<const rl_set>()[s].way) {
      rl_slot copy{};
      copy.tag = std::atomic_ref<__u32>(const_cast<__u32&>(slot.tag)).load();
      if (copy.tag != tag) continue;
      copy.idle = std::atomic_ref<__u32>(const_cast<__u32&>(slot.idle)).load();
      copy.state = std::atomic_ref<__u64>(const_cast<__u64&>(slot.state)).load();
      return copy;
    }
  return std::nullopt;
}

uint64_t BpfDatapath::key_hash(const rl_key& key) const { return rl_key_hash(&key, hash_seed_); }

uint64_t BpfDatapath::offender_drops(uint64_t hash) const {
  return offenders_.as<const rl_offender>()[rl_offender_index(hash)].drops;
}

std::pair<uint64_t, uint64_t> BpfDatapath::key_table_usage(uint64_t now_ns) const {
  uint64_t used = 0, blocked = 0;
  const rl_set* sets = keys_.as<const rl_set>();
  // Only the sets in use hold keys. A key's set comes from its seeded hash, so every stride-th
  // set is an unbiased sample.
  const uint32_t active = key_sets_active();
  uint32_t stride = active > kUsageScanSets ? (active + kUsageScanSets - 1) / kUsageScanSets : 1;
  uint64_t scanned = 0;
  for (uint32_t i = 0; i < active; i += stride, scanned++)
    for (const auto& slot : sets[i].way) {
      if (slot.tag == RL_TAG_FREE) continue;
      // A slot whose state is fresh again holds no information: it does not count as tracked.
      bool is_blocked = rl_state_blocked(slot.state, now_ns);
      if (is_blocked || !rl_idle_passed(slot.idle, now_ns)) used++;
      if (is_blocked) blocked++;
    }
  if (scanned == 0) return {0, 0};
  return {used * active / scanned, blocked * active / scanned};
}

// The runtime lists' counts, which let packets skip the lookups while a family has no entry (the
// common case), and their filter, from one listing of the hashes and tries (pinned ones may hold
// entries). Once, at load: each change after it moves the count itself (runtime_put,
// runtime_erase) and tells the filter.
Status BpfDatapath::load_runtime_lists() {
  if (Status s = runtime_stamp_lengths(runtime_v4(*skel_)); !s) return s;
  if (Status s = runtime_stamp_lengths(runtime_v6(*skel_)); !s) return s;
  // Hosts in a hash: ones whose set was full, or an rld's before the host table.
  for (uint32_t fam6 = 0; fam6 < 2; fam6++) {
    auto empty = fam6 ? map_empty(runtime_v6(*skel_).hosts) : map_empty(runtime_v4(*skel_).hosts);
    if (!empty) return empty.error();
    if (!*empty) runtime_filter_->hash_in_use(fam6);
  }
  auto runtime = runtime_prefixes();
  if (!runtime) return runtime.error();
  const auto v6 = static_cast<uint32_t>(std::count_if(
      runtime->begin(), runtime->end(), [](const Prefix& p) { return p.addr.family == 6; }));
  auto* ctl = control_.as<rl_control>();
  std::atomic_ref<uint32_t>(ctl->runtime_acl_v4).store(static_cast<uint32_t>(runtime->size()) - v6);
  std::atomic_ref<uint32_t>(ctl->runtime_acl_v6).store(v6);
  return runtime_filter_->rebuild(*runtime);
}

Result<GlobalCounters> BpfDatapath::global_counters() const {
  PerCpuArrayRef<rl_counter> m(bpf_map__fd(skel_->maps.rl_global_stats), "rl_global_stats");
  GlobalCounters out{};
  for (uint32_t i = 0; i < RL_GC_MAX; i++) {
    auto v = m.lookup(i);
    if (!v) return v.error();
    for (const auto& c : *v) {
      out[i].pkts += c.pkts;
      out[i].bytes += c.bytes;
    }
  }
  return out;
}

Result<rl_rule_counters> BpfDatapath::rule_counters(uint32_t stats_slot) const {
  PerCpuArrayRef<rl_rule_counters> m(bpf_map__fd(skel_->maps.rl_rule_stats), "rl_rule_stats");
  auto v = m.lookup(stats_slot);
  if (!v) return v.error();
  rl_rule_counters sum{};
  for (const auto& c : *v) {
    sum.passed_pkts += c.passed_pkts;
    sum.passed_bytes += c.passed_bytes;
    sum.dropped_pkts += c.dropped_pkts;
    sum.dropped_bytes += c.dropped_bytes;
    sum.monitored_pkts += c.monitored_pkts;
    sum.monitored_bytes += c.monitored_bytes;
  }
  // The data path does not write matched_* (rl_abi.h).
  sum.matched_pkts = sum.passed_pkts + sum.dropped_pkts;
  sum.matched_bytes = sum.passed_bytes + sum.dropped_bytes;
  return sum;
}

Result<std::array<rl_counter, RL_MAX_LIMITS>> BpfDatapath::limit_counters(
    uint32_t stats_slot) const {
  PerCpuArrayRef<rl_counter> m(bpf_map__fd(skel_->maps.rl_limit_stats), "rl_limit_stats");
  std::array<rl_counter, RL_MAX_LIMITS> out{};
  for (uint32_t l = 0; l < RL_MAX_LIMITS; l++) {
    auto v = m.lookup(rl_limit_stats_index(stats_slot, l));
    if (!v) return v.error();
    for (const auto& c : *v) {
      out[l].pkts += c.pkts;
      out[l].bytes += c.bytes;
    }
  }
  return out;
}

Result<BpfDatapath::RunResult> BpfDatapath::run(const std::vector<uint8_t>& frame, uint32_t repeat,
                                                std::vector<uint8_t>* out) const {
  // Room for what the program may grow the frame to (a SYN-ACK's options).
  std::vector<uint8_t> buf(out ? frame.size() + 256 : 0);
  LIBBPF_OPTS(
      bpf_test_run_opts, opts, .data_in = frame.data(), .data_out = out ? buf.data() : nullptr,
      .data_size_in = static_cast<uint32_t>(frame.size()),
      .data_size_out = static_cast<uint32_t>(buf.size()), .repeat = static_cast<int>(repeat));
  if (bpf_prog_test_run_opts(prog_fd(), &opts) != 0) return errno_error("BPF_PROG_TEST_RUN");
  if (out) {
    buf.resize(opts.data_size_out);
    *out = std::move(buf);
  }
  return RunResult{opts.retval, opts.duration};
}

void BpfDatapath::set_clock(uint64_t ns) {
  std::atomic_ref<__u64>(skel_->bss->rl_clock_override_ns).store(ns);
}

rl_decision BpfDatapath::last_decision() const { return skel_->bss->rl_trace; }

}  // namespace rl
