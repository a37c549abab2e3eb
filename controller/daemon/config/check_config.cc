// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/config/check_config.h"

#include "compiler/compiler.h"
#include "daemon/config/config_options.h"
#include "daemon/config/redis_config.h"
#include "policy/loader.h"

namespace rl::daemon {

using cluster::StoreStatus;

ConfigCheck check_config(const Config& cfg, bool connect) {
  ConfigCheck c;
  std::string s = "rld would run with:\n";
  for (const auto& o : config_options()) {
    std::string v = option_text(o, cfg);
    if (o.secret && !v.empty()) v = "(set)";
    s += "  " + o.path() + ": " + (v.empty() ? "''" : v) + "\n";
  }
  if (!cfg.cluster_enabled()) {
    s += "cluster limits: off (no redis_host, redis_socket, redis_sentinels or "
         "redis_cluster_nodes)\n";
  } else if (auto store = make_redis_store(cfg); !store) {
    c.errors.push_back(store.error().str());
  } else {
    std::string tried;
    if (connect) {
      StoreStatus answered = (*store)->check();
      if (answered)
        tried = " (answered)";
      else
        c.errors.push_back("cluster: " + answered.error().str());
    }
    s += std::string("cluster limits: on, Redis ") + redis_topology(cfg) + ", " +
         (*store)->server() + tried + "\n";
  }
  if (cfg.interfaces.empty()) c.warnings.emplace_back(kNoInterfaceWarning);

  auto loaded = policy::load_directory(cfg.policy_dir);
  if (loaded.no_files) {
    // What a fresh install holds: rld starts without rules and passes every packet.
    c.summary = s + "policy: none: " + cfg.policy_dir +
                " holds no policy files (*.yaml, *.yml); rld would start without rules and pass "
                "every packet\n";
    return c;
  }
  for (const auto& e : loaded.errors) c.errors.push_back(e.str());
  if (loaded.ok()) {
    compiler::CompileOptions co;
    co.cluster_nodes = std::max<uint32_t>(cfg.cluster_nodes, 1);
    auto compiled = compiler::compile(loaded.policy, {}, co);
    if (!compiled) c.errors.push_back(cfg.policy_dir + ": error: " + compiled.error().message);
    s += "policy: " + std::to_string(loaded.policy.rules.size()) + " rules, " +
         std::to_string(loaded.policy.sets.size()) + " sets from " + cfg.policy_dir + "\n";
    for (const auto& r : loaded.policy.rules)
      s += "  rule " + r.name + " (" + r.where.str() + ")\n";
  }
  c.summary = s;
  return c;
}

}  // namespace rl::daemon
