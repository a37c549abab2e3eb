// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/loader.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/fd.h"
#include "datapath/compat.h"
#include "datapath/pins.h"
#include "rl_hash.h"
#include "rl_layout.h"
#include "rl_xdp.skel.h"

namespace rl {
namespace {

uint32_t round_up_pow2(uint32_t v) {
  uint32_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

// Maps whose size follows the key table's: an adopted table keeps its pinned size, and a table
// pinned without one of them cannot be adopted (its keys would have no summary).
bool sized_by_key_table(const rl_xdp& skel, const bpf_map* m) {
  return m == skel.maps.rl_keys || m == skel.maps.rl_key_summary;
}

struct PinnedLayout {
  bool present = false;
  bool other_abi = false;  // pinned by an rld with another data path layout: replace, not adopt
  uint32_t abi = 0;
  uint32_t key_sets = 0;
  uint64_t hash_seed = 0;
  std::string mismatch;  // why the maps of the same ABI cannot be adopted
};

std::string pinned_path(const std::string& root, const bpf_map* m) {
  return pinned_map_path(root, bpf_map__name(m));
}

// What a previous rld left pinned: the ABI must match to be adopted, and the key table's size
// is taken over (re-sizing would drop every key's state). Pins that cannot be adopted, another
// ABI or a map of another shape under the same ABI, are replaced rather than refused.
Result<PinnedLayout> pinned_layout(const std::string& root, const rl_xdp& skel) {
  PinnedLayout out;
  const std::string control = bpf_map__name(skel.maps.rl_control);
  UniqueFd control_fd(bpf_obj_get(pinned_map_path(root, control).c_str()));
  if (!control_fd) {
    if (errno == ENOENT) return out;
    return errno_error("open pinned " + control + " under " + root);
  }
  auto c = compat::read_pinned_control(control_fd.get(), control);
  if (!c) return c.error();
  out.abi = c->abi_version;
  if (c->abi_version != RL_ABI_VERSION) {
    out.other_abi = true;
    return out;
  }
  const bpf_map* m;
  bpf_object__for_each_map(m, skel.obj) {
    if (bpf_map__is_internal(m)) continue;
    out.mismatch = pinned_map_mismatch(root, m, sized_by_key_table(skel, m));
    if (!out.mismatch.empty()) {
      out.other_abi = true;
      return out;
    }
  }
  const std::string keys = bpf_map__name(skel.maps.rl_keys);
  UniqueFd keys_fd(bpf_obj_get(pinned_map_path(root, keys).c_str()));
  if (!keys_fd) return errno_error("open pinned " + keys + " under " + root);
  bpf_map_info info{};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(keys_fd.get(), &info, &len) != 0)
    return errno_error("inspect pinned " + keys);
  out.present = true;
  out.key_sets = info.max_entries;
  out.hash_seed = c->hash_seed;
  return out;
}

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

Status set_size(bpf_map* m, uint32_t n) {
  if (int err = bpf_map__set_max_entries(m, n); err)
    return errno_error(std::string("size ") + bpf_map__name(m), err);
  return {};
}

// The maps that follow max_rules (rl_layout.h), sized before the pins are compared with them.
Status size_rule_maps(const LoadOptions& opts, rl_xdp& skel) {
  if (std::string why = max_rules_problem(opts.max_rules); !why.empty()) return Error{EINVAL, why};
  const uint32_t rules = rl_rule_entries(opts.max_rules), ids = rl_rule_ids(opts.max_rules);
  const std::pair<bpf_map*, uint32_t> sizes[] = {
      {skel.maps.rl_rules, rules},
      {skel.maps.rl_new_sources, rules},
      {skel.maps.rl_limits, rules * (RL_MAX_LIMITS - 1)},
      {skel.maps.rl_rule_meta, ids},
      {skel.maps.rl_rule_stats, ids},
      {skel.maps.rl_limit_stats, ids * RL_MAX_LIMITS},
      {skel.maps.rl_override_slots, ids},
      {skel.maps.rl_cluster_light, ids},
  };
  for (const auto& [m, n] : sizes)
    if (Status s = set_size(m, n); !s) return s;
  if (int err = bpf_map__set_value_size(skel.maps.rl_bitmaps, rl_bitmap_value_size(opts.max_rules));
      err)
    return errno_error("size rl_bitmaps' value", err);
  skel.rodata->rl_bitmap_words = rl_rule_words(opts.max_rules);
  skel.rodata->rl_bitmap_summary_words = rl_summary_words(opts.max_rules);
  return {};
}

// Adopts the maps pinned under opts.pin_root, or sets them aside for another layout's.
Status adopt_pins(const LoadOptions& opts, LoadedSkeleton& out) {
  auto pinned = pinned_layout(opts.pin_root, *out.skel);
  if (!pinned) return pinned.error();
  if (pinned->other_abi) {
    // Fresh maps, pinned only once the interfaces run the new program (take_over_pins):
    // until then the old program keeps enforcing with its own maps.
    out.replaced_abi = pinned->abi;
    return {};
  }
  if (pinned->present) {
    out.adopted = true;
    out.key_sets = pinned->key_sets;
    out.hash_seed = pinned->hash_seed;  // the adopted keys were placed with it
  }
  bpf_map* m;
  bpf_object__for_each_map(m, out.skel->obj) {
    if (bpf_map__is_internal(m)) continue;
    if (int err = bpf_map__set_pin_path(m, pinned_path(opts.pin_root, m).c_str()); err)
      return errno_error(std::string("pin path for ") + bpf_map__name(m), err);
  }
  return {};
}

// The program's load-time constants and the maps' sizes.
Status configure(const LoadOptions& opts, LoadedSkeleton& out) {
  rl_xdp* skel = out.skel.get();
  skel->rodata->rl_key_low_bits = rl_set_low_bits(out.key_sets);
  skel->rodata->rl_hash_seed = out.hash_seed;
  skel->rodata->rl_trace_decisions = opts.trace_decisions ? 1 : 0;
  skel->rodata->rl_bench_src_spread = opts.bench_src_spread;
  if (opts.traffic_sample_shift > RL_TRAFFIC_SAMPLE_SHIFT_MAX)
    return Error{EINVAL, "traffic_sample_shift " + std::to_string(opts.traffic_sample_shift) +
                             " is above " + std::to_string(RL_TRAFFIC_SAMPLE_SHIFT_MAX)};
  skel->rodata->rl_traffic_sample_shift = opts.traffic_sample_shift;
  out.syn_cookies = opts.syn_cookies && kernel_has_ct_lookup();
  skel->rodata->rl_syncookies_available = out.syn_cookies ? 1 : 0;
  if (Status s = set_size(skel->maps.rl_keys, out.key_sets); !s) return s;
  if (Status s = set_size(skel->maps.rl_key_summary, rl_summary_lines(out.key_sets)); !s) return s;
  if (!out.adopted)
    return set_size(skel->maps.rl_cluster_admitted, std::max<uint32_t>(opts.cluster_keys, 64));
  return {};
}

}  // namespace

void SkeletonDeleter::operator()(rl_xdp* s) const { rl_xdp__destroy(s); }

std::string max_rules_problem(uint32_t max_rules) {
  if (max_rules >= 64 && max_rules <= RL_MAX_RULES_CAP && max_rules % 64 == 0) return "";
  return "max_rules " + std::to_string(max_rules) + " is not a multiple of 64 from 64 to " +
         std::to_string(RL_MAX_RULES_CAP);
}

std::string pinned_map_mismatch(const std::string& root, const bpf_map* m, bool sized_by_keys) {
  std::string name = bpf_map__name(m);
  UniqueFd fd(bpf_obj_get(pinned_map_path(root, name).c_str()));
  if (!fd) return name + " missing or unreadable";
  bpf_map_info info{};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(fd.get(), &info, &len) != 0) return name + " unreadable";
  if (info.type != bpf_map__type(m) || info.key_size != bpf_map__key_size(m) ||
      info.value_size != bpf_map__value_size(m) || info.map_flags != bpf_map__map_flags(m) ||
      (!sized_by_keys && info.max_entries != bpf_map__max_entries(m)))
    return name + " has another shape";
  return "";
}

Result<UniqueFd> open_replaced_map(const std::string& root, const bpf_map* like) {
  const std::string name = bpf_map__name(like);
  if (std::string why = pinned_map_mismatch(root, like, false); !why.empty())
    return Error{EPROTO, "the replaced data path's " + why};
  UniqueFd fd(bpf_obj_get(pinned_map_path(root, name).c_str()));
  if (!fd && errno == ENOENT) return Error{EPROTO, "the replaced data path has no " + name};
  if (!fd) return errno_error("open the replaced data path's " + name);
  return fd;
}

Result<LoadedSkeleton> load_skeleton(const LoadOptions& opts) {
  LoadedSkeleton out;
  out.skel.reset(rl_xdp__open());
  if (!out.skel) return errno_error("open rl_xdp skeleton");
  out.key_sets = round_up_pow2(std::max<uint32_t>(opts.key_capacity / RL_WAYS, 1));
  if (getrandom(&out.hash_seed, sizeof(out.hash_seed), 0) != sizeof(out.hash_seed))
    return errno_error("key hash seed");
  if (Status s = size_rule_maps(opts, *out.skel); !s) return s.error();
  if (!opts.pin_root.empty())
    if (Status s = adopt_pins(opts, out); !s) return s.error();
  if (Status s = configure(opts, out); !s) return s.error();
  if (int err = rl_xdp__load(out.skel.get()); err)
    return errno_error("load rl_xdp (verifier)", err);
  return out;
}

Status take_over_pins(const rl_xdp& skel, const std::string& root) {
  bpf_map* m;
  bpf_object__for_each_map(m, skel.obj) {
    if (bpf_map__is_internal(m)) continue;
    std::string path = pinned_path(root, m);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return errno_error("unpin old " + path);
    if (int err = bpf_map__pin(m, path.c_str()); err) return errno_error("pin " + path, err);
  }
  return {};
}

Status unpin_maps(const rl_xdp& skel) {
  bpf_map* m;
  bpf_object__for_each_map(m, skel.obj) {
    if (bpf_map__is_internal(m) || !bpf_map__pin_path(m)) continue;
    if (int err = bpf_map__unpin(m, nullptr); err && err != -ENOENT)
      return errno_error(std::string("unpin ") + bpf_map__pin_path(m), err);
  }
  return {};
}

}  // namespace rl
