// SPDX-License-Identifier: GPL-2.0-only
// rld's side of cluster-wide limits: the Redis store and the sync thread, made from rld's
// configuration when it names a Redis (cluster/sync/cluster_sync.h does the syncing).
#include <unistd.h>

#include <algorithm>

#include "cluster/sync_memory.h"
#include "common/log.h"
#include "daemon/config/redis_config.h"
#include "daemon/daemon.h"

namespace rl::daemon {

std::vector<cluster::SyncRule> cluster_rules(const std::vector<RuleView>& rules) {
  std::vector<cluster::SyncRule> out;
  for (const auto& v : rules)
    if (v.rule.cluster) out.push_back({v.name, v.compiled, *v.rule.cluster});
  return out;
}

// Where the cluster's Redis is, as the start log and cluster status name it.
std::string Daemon::redis_text() const {
  std::string s;
  if (!cfg_.redis_cluster_nodes.empty()) {
    s = "redis cluster via";
    for (const auto& a : cfg_.redis_cluster_nodes) s += " " + a;
  } else if (!cfg_.redis_sentinels.empty()) {
    s = "sentinel master " + cfg_.redis_master_name + " via";
    for (const auto& a : cfg_.redis_sentinels) s += " " + a;
  } else {
    s = cfg_.redis_socket.empty() ? cfg_.redis_host + ":" + std::to_string(cfg_.redis_port)
                                  : cfg_.redis_socket;
  }
  return cfg_.redis_tls ? s + " over TLS" : s;
}

// Created without connecting: rld starts (and enforces local limits) while Redis is down. What
// it refuses (a CA file that cannot be read, a user without a password, sentinels without a
// master name) only an edit of the configuration mends.
Status Daemon::make_cluster_store() {
  if (!cfg_.cluster_enabled()) return {};
  auto store = make_redis_store(cfg_);
  if (!store) return Error{kNotConfiguredErrno, store.error().str()};
  store_ = std::move(*store);
  return {};
}

Status Daemon::start_cluster() {
  ClusterConfig cc;
  cc.node = cfg_.node_name;
  if (cc.node.empty()) {
    char host[256] = {};
    ::gethostname(host, sizeof(host) - 1);
    cc.node = host;
  }
  cfg_.node_name = cc.node;
  cc.interval = std::chrono::milliseconds(cfg_.sync_interval_ms);
  cc.topology = redis_topology(cfg_);
  cc.nodes = std::max<uint32_t>(cfg_.cluster_nodes, 1);
  cluster_ = std::make_unique<ClusterSync>(*dp_, std::move(store_), cc,
                                           [this] { return cluster_rules(policies_->rules()); });
  offenders_->on_cluster_sync([this] { cluster_->wake(); });
  cluster::keep_sync_buffers_mapped();
  cluster_->start();
  log::info("cluster sync started", {{"node", cc.node},
                                     {"redis", redis_text()},
                                     {"interval_ms", std::to_string(cfg_.sync_interval_ms)}});
  return {};
}

}  // namespace rl::daemon
