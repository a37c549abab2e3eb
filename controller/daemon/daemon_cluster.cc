// SPDX-License-Identifier: GPL-2.0-only
// rld's side of cluster-wide limits: the Redis store and the sync thread, made from rld's
// configuration when it names a Redis (cluster/sync/cluster_sync.h does the syncing).
#include <unistd.h>

#include <algorithm>

#include "cluster/cluster_store.h"
#include "cluster/redis_store.h"
#include "cluster/sync_memory.h"
#include "common/log.h"
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
  if (!cfg_.redis_cluster_nodes.empty()) {
    std::string s = "redis cluster via";
    for (const auto& a : cfg_.redis_cluster_nodes) s += " " + a;
    return s;
  }
  if (!cfg_.redis_sentinels.empty()) {
    std::string s = "sentinel master " + cfg_.redis_master_name + " via";
    for (const auto& a : cfg_.redis_sentinels) s += " " + a;
    return s;
  }
  return cfg_.redis_socket.empty() ? cfg_.redis_host + ":" + std::to_string(cfg_.redis_port)
                                   : cfg_.redis_socket;
}

Status Daemon::start_cluster() {
  cluster::RedisOptions ro;
  ro.host = cfg_.redis_host.empty() ? ro.host : cfg_.redis_host;
  ro.port = cfg_.redis_port;
  ro.unix_socket = cfg_.redis_socket;
  ro.user = cfg_.redis_user;
  ro.password = cfg_.redis_password;
  ro.db = cfg_.redis_db;
  ro.connect_timeout = std::chrono::milliseconds(cfg_.redis_connect_timeout_ms);
  ro.command_timeout = std::chrono::milliseconds(cfg_.redis_command_timeout_ms);
  ro.key_prefix = cfg_.redis_key_prefix;
  for (const std::string& s : cfg_.redis_sentinels) {
    auto ep = cluster::parse_endpoint(s);
    if (!ep) return static_cast<const Error&>(ep.error()).wrap("cluster.redis_sentinels");
    ro.sentinel.sentinels.push_back(*ep);
  }
  ro.sentinel.master_name = cfg_.redis_master_name;
  ro.sentinel.user = cfg_.redis_sentinel_user;
  ro.sentinel.password = cfg_.redis_sentinel_password;
  for (const std::string& s : cfg_.redis_cluster_nodes) {
    auto ep = cluster::parse_endpoint(s);
    if (!ep) return static_cast<const Error&>(ep.error()).wrap("cluster.redis_cluster_nodes");
    ro.cluster_nodes.push_back(*ep);
  }
  // Created without connecting: rld starts (and enforces local limits) while Redis is down.
  std::unique_ptr<cluster::Store> store;
  if (ro.cluster_nodes.empty()) {
    auto s = cluster::RedisStore::create(ro);
    // rld's start reports the message; the error's kind matters only to the sync loop.
    if (!s) return static_cast<const Error&>(s.error()).wrap("cluster");
    store = std::move(*s);
  } else {
    auto s = cluster::ClusterStore::create(ro);
    if (!s) return static_cast<const Error&>(s.error()).wrap("cluster");
    store = std::move(*s);
  }
  ClusterConfig cc;
  cc.node = cfg_.node_name;
  if (cc.node.empty()) {
    char host[256] = {};
    ::gethostname(host, sizeof(host) - 1);
    cc.node = host;
  }
  cfg_.node_name = cc.node;
  cc.interval = std::chrono::milliseconds(cfg_.sync_interval_ms);
  cc.topology = !ro.cluster_nodes.empty()        ? "cluster"
                : !ro.sentinel.sentinels.empty() ? "sentinel"
                                                 : "standalone";
  cc.nodes = std::max<uint32_t>(cfg_.cluster_nodes, 1);
  cluster_ = std::make_unique<ClusterSync>(*dp_, std::move(store), cc,
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
