// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/bpf_datapath.h"

#include "datapath/map.h"
#include "rl_xdp.skel.h"

namespace rl {

BpfDatapath::~BpfDatapath() = default;

Result<std::unique_ptr<BpfDatapath>> BpfDatapath::load(const LoadOptions& opts) {
  auto loaded = load_skeleton(opts);
  if (!loaded) return loaded.error();
  std::unique_ptr<BpfDatapath> dp(new BpfDatapath(std::move(*loaded)));
  if (Status s = dp->init(opts); !s) return s.error();
  if (Status s = dp->clock_->calibrate(); !s) return s.error();
  if (dp->replaced_abi())
    if (Status s = dp->runtime_->carry_from(opts.pin_root, dp->replaced_abi(), dp->now_ns()); !s)
      return s.error();
  if (dp->replaced_abi())
    if (Status s = dp->overrides_->carry_from(opts.pin_root, dp->replaced_abi()); !s)
      return s.error();
  if (opts.key_table_full)
    if (auto grown = dp->keys_->grow_full(); !grown) return grown.error();
  return dp;
}

Status BpfDatapath::init(const LoadOptions& opts) {
  rl_xdp& skel = *loaded_.skel;
  traffic_sample_shift_ = opts.traffic_sample_shift;
  if (loaded_.replaced_abi) pin_root_ = opts.pin_root;
  auto control = mmap_array(skel.maps.rl_control);
  if (!control) return control.error();
  control_ = std::move(*control);
  auto* ctl = control_.as<rl_control>();
  counters_ = std::make_unique<BpfCounters>(skel);
  cluster_ = std::make_unique<BpfClusterMaps>(skel);
  connections_ = std::make_unique<BpfConnections>(skel);
  clock_ = std::make_unique<BpfClock>(skel);
  auto rules = BpfRuleTables::open(skel, ctl, *counters_, loaded_.syn_cookies);
  if (!rules) return rules.error();
  rules_ = std::move(*rules);
  auto runtime = BpfRuntimeLists::open(skel, ctl, loaded_.hash_seed);
  if (!runtime) return runtime.error();
  runtime_ = std::move(*runtime);
  auto overrides = BpfOverrides::open(skel);
  if (!overrides) return overrides.error();
  overrides_ = std::move(*overrides);
  auto keys = BpfKeyTable::open(skel, ctl, loaded_.key_sets, loaded_.hash_seed);
  if (!keys) return keys.error();
  keys_ = std::move(*keys);
  ctl->hash_seed = loaded_.hash_seed;
  ctl->abi_version = RL_ABI_VERSION;
  return runtime_->load();
}

int BpfDatapath::prog_fd() const { return bpf_program__fd(loaded_.skel->progs.rl_xdp); }

Status BpfDatapath::take_over_pins() {
  if (!loaded_.replaced_abi) return {};
  if (Status s = rl::take_over_pins(*loaded_.skel, pin_root_); !s) return s;
  loaded_.replaced_abi = 0;
  return {};
}

Status BpfDatapath::unpin_fresh_maps() {
  if (loaded_.adopted || loaded_.replaced_abi) return {};
  return unpin_maps(*loaded_.skel);
}

}  // namespace rl
