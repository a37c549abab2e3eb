// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/bpf_rule_tables.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "common/log.h"
#include "rl_layout.h"
#include "rl_xdp.skel.h"

namespace rl {
namespace {

// A packet reads the active generation once and then uses that generation's maps until it is
// done, a few microseconds at most. Before the controller rewrites a generation that was active
// it waits this long after the switch away from it, so no packet can still be reading it.
constexpr auto kGenerationGrace = std::chrono::milliseconds(50);

// One generation's table of `n` classes, packed RL_PORTS_PER_ENTRY to an array element (value
// v's is index(v)); an empty table (a field no rule names, which packets never read) is written
// as zeros.
template <typename Index>
void write_classes(rl_port_classes* map, const std::vector<uint16_t>& cls, uint32_t n,
                   Index&& index) {
  for (uint32_t v = 0; v < n; v++) map[index(v)].cls[rl_class_lane(v)] = cls.empty() ? 0 : cls[v];
}

// Removes one generation's entries from a trie (sources or destinations, of one family).
template <typename K>
Status clear_trie(const bpf_map* m, uint32_t gen) {
  MapRef<K, rl_src_entry> trie(m);
  auto keys = trie.keys();
  if (!keys) return keys.error();
  for (const auto& k : *keys)
    if (k.gen == gen)
      if (auto s = trie.remove(k); !s) return s;
  return {};
}

Status write_tries(const bpf_map* m4, const bpf_map* m6, uint32_t gen,
                   const std::vector<compiler::SourceEntry>& entries) {
  MapRef<rl_lpm4_key, rl_src_entry> v4(m4);
  MapRef<rl_lpm6_key, rl_src_entry> v6(m6);
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

Status check_limits(const compiler::CompiledRuleSet& rs, uint32_t max_rules, bool syn_cookies) {
  if (rs.rules.size() > max_rules)
    return Error{E2BIG, std::to_string(rs.rules.size()) + " rules; the data path holds " +
                            std::to_string(max_rules) + " (rld.yaml max_rules)"};
  if (rs.classes.size() > RL_MAX_CLASSES)
    return Error{E2BIG, "rule set exceeds the data path's rule classes"};
  if (!syn_cookies)
    for (size_t pos = 0; pos < rs.rules.size(); pos++)
      if (rs.rules[pos].flags & RL_RULE_F_SYN_COOKIES)
        return Error{ENOTSUP, "rule '" + rs.names[pos] +
                                  "': syn_cookies needs XDP's conntrack lookup, which this "
                                  "kernel does not offer (bpf_xdp_ct_lookup; with nf_conntrack "
                                  "as a module, load it before rld starts)"};
  return {};
}

}  // namespace

BpfRuleTables::BpfRuleTables(const rl_xdp& skel, rl_control* control, const BpfCounters& counters,
                             bool syn_cookies)
    : skel_(&skel),
      control_(control),
      counters_(&counters),
      syn_cookies_(syn_cookies),
      max_rules_(bpf_map__max_entries(skel.maps.rl_rules) / RL_GENERATIONS),
      gen_config_(skel.maps.rl_gen_config),
      rules_(skel.maps.rl_rules),
      budgets_(skel.maps.rl_new_sources),
      stacked_(skel.maps.rl_limits),
      meta_(skel.maps.rl_rule_meta),
      sources_(skel) {}

Result<std::unique_ptr<BpfRuleTables>> BpfRuleTables::open(const rl_xdp& skel, rl_control* control,
                                                           const BpfCounters& counters,
                                                           bool syn_cookies) {
  std::unique_ptr<BpfRuleTables> t(new BpfRuleTables(skel, control, counters, syn_cookies));
  if (Status s = mmap_arrays({{skel.maps.rl_bitmaps, &t->bitmaps_},
                              {skel.maps.rl_port_classes, &t->ports_},
                              {skel.maps.rl_byte_classes, &t->bytes_},
                              {skel.maps.rl_src_filter, &t->filter_}});
      !s)
    return s.error();
  return t;
}

uint32_t BpfRuleTables::epoch() const {
  return std::atomic_ref<uint32_t>(control_->active_gen).load();
}

uint32_t BpfRuleTables::active_generation() const { return epoch() & 1; }

Result<std::vector<std::pair<std::string, rl_rule>>> BpfRuleTables::active_rules() const {
  uint32_t gen = active_generation();
  auto cfg = gen_config_.lookup(gen);
  if (!cfg) return cfg.error();
  std::vector<std::pair<std::string, rl_rule>> out;
  for (uint32_t pos = 0; pos < cfg->rule_count && pos < max_rules_; pos++) {
    auto r = rules_.lookup(rl_rule_index(gen, pos));
    if (!r) return r.error();
    auto m = meta_.lookup(r->stats_slot);
    if (!m) return m.error();
    out.emplace_back(std::string(m->name, strnlen(m->name, sizeof(m->name))), *r);
  }
  return out;
}

Result<compiler::RuleIds> BpfRuleTables::rule_ids() const {
  auto rules = active_rules();
  if (!rules) return rules.error();
  compiler::RuleIds ids;
  for (const auto& [name, r] : *rules) {
    auto m = meta_.lookup(r.stats_slot);
    if (!m) return m.error();
    ids.by_name[name] = {r.id, r.stats_slot, m->signature};
    ids.next_id = std::max(ids.next_id, r.id + 1 + r.more_limits);
  }
  ids.next_id = std::max(ids.next_id, std::atomic_ref<uint32_t>(control_->next_rule_id).load());
  return ids;
}

Status BpfRuleTables::clear_generation(uint32_t gen) const {
  if (Status s = clear_trie<rl_lpm4_key>(skel_->maps.rl_dst_v4, gen); !s) return s;
  return clear_trie<rl_lpm6_key>(skel_->maps.rl_dst_v6, gen);
}

Status BpfRuleTables::write_rules(const compiler::CompiledRuleSet& rs, uint32_t gen) const {
  if (Status s = counters_->reset(rs.new_slots); !s) return s;
  for (size_t pos = 0; pos < rs.rules.size(); pos++) {
    const rl_rule& r = rs.rules[pos];
    const auto p = static_cast<uint32_t>(pos);
    const uint32_t idx = rl_rule_index(gen, p);
    if (pos < rs.new_sources.size())
      if (auto s = budgets_.update(idx, rs.new_sources[pos]); !s) return s;
    for (uint32_t l = 1; l <= r.more_limits; l++) {
      const rl_rule& limit = rs.more_limits.at(rl_stacked_index(p, l - 1));
      if (auto s = stacked_.update(rl_stacked_index(idx, l - 1), limit); !s) return s;
    }
    if (auto s = rules_.update(idx, r); !s) return s;
    rl_rule_meta m{};
    std::strncpy(m.name, rs.names[pos].c_str(), sizeof(m.name) - 1);
    m.signature = rs.ids.by_name.at(rs.names[pos]).signature;
    if (auto s = meta_.update(r.stats_slot, m); !s) return s;
  }
  return {};
}

void BpfRuleTables::write_tables(const compiler::CompiledRuleSet& rs, uint32_t gen) {
  // Each bitmap: its summary's words, then its rule words (rl_abi.h, rl_bitmaps).
  const uint32_t nsum = rl_summary_words(max_rules_), nwords = rl_rule_words(max_rules_);
  uint64_t* bm = bitmaps_.as<uint64_t>() + size_t{rl_bitmap_index(gen, 0)} * (nsum + nwords);
  for (size_t c = 0; c < rs.classes.size(); c++, bm += nsum + nwords) {
    std::fill_n(bm, nsum + nwords, 0);
    const auto& w = rs.classes[c].w;
    for (uint32_t i = 0; i < nwords && i < w.size(); i++)
      if (w[i]) {
        bm[i / 64] |= 1ULL << (i % 64);
        bm[nsum + i] = w[i];
      }
  }
  for (uint32_t t = 0; t < RL_PORT_TABLES; t++)
    write_classes(ports_.as<rl_port_classes>(), rs.port_classes[t], RL_PORT_VALUES,
                  [&](uint32_t v) { return rl_port_class_index(gen, t, v); });
  for (uint32_t t = 0; t < RL_BYTE_TABLES; t++)
    write_classes(bytes_.as<rl_port_classes>(), rs.byte_classes[t], RL_BYTE_VALUES,
                  [&](uint32_t v) { return rl_byte_class_index(gen, t, v); });
  for (uint32_t fam6 = 0; fam6 < 2; fam6++) {
    uint64_t* words = filter_.as<uint64_t>() + rl_src_filter_index(gen, fam6, 0);
    const auto& f = rs.source_filter[fam6];
    if (f.size() == RL_FILTER_WORDS)
      std::memcpy(words, f.data(), RL_FILTER_WORDS * sizeof(uint64_t));
    else
      std::memset(words, 0, RL_FILTER_WORDS * sizeof(uint64_t));
  }
}

Status BpfRuleTables::apply(const compiler::CompiledRuleSet& rs) {
  if (Status s = check_limits(rs, max_rules_, syn_cookies_); !s) return s;
  const uint32_t in_force = epoch();
  const uint32_t next = (in_force & 1) ^ 1;

  auto since = std::chrono::steady_clock::now() - last_switch_;
  if (since < kGenerationGrace) std::this_thread::sleep_for(kGenerationGrace - since);

  if (auto s = clear_generation(next); !s) return s.error().wrap("clear generation");
  if (Status s = write_rules(rs, next); !s) return s;
  write_tables(rs, next);
  auto active = gen_config_.lookup(in_force & 1);
  if (!active) return active.error();
  if (auto s = sources_.before_switch(rs.sources, next, *active); !s)
    return s.error().wrap("sources");
  if (auto s = write_tries(skel_->maps.rl_dst_v4, skel_->maps.rl_dst_v6, next, rs.destinations); !s)
    return s.error().wrap("destination");
  if (auto s = gen_config_.update(next, rs.config); !s) return s;

  std::atomic_ref<uint32_t>(control_->next_rule_id).store(rs.ids.next_id);
  // The switch: one aligned 32-bit store that packets read once each. Everything above is
  // visible before it (release order on the mmapped word). The epoch moves on by one, not back
  // to a generation number: a CPU's memo of its last match holds for one rule set, and two
  // switches bring its generation back with another (bpf/lib/memo.h).
  std::atomic_ref<uint32_t>(control_->active_gen).store(in_force + 1, std::memory_order_release);
  last_switch_ = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(kGenerationGrace);
  if (Status s = sources_.after_switch(rs.sources); !s)
    log::warn("source tries not brought level after a switch; the next rule set finishes it",
              {{"error", s.error().str()}});
  return {};
}

}  // namespace rl
