// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/config/redis_config.h"

#include "cluster/cluster_store.h"
#include "cluster/redis_store.h"

namespace rl::daemon {
namespace {

Result<std::vector<cluster::Endpoint>> endpoints(const std::vector<std::string>& texts,
                                                 const char* setting) {
  std::vector<cluster::Endpoint> out;
  for (const std::string& s : texts) {
    auto ep = cluster::parse_endpoint(s);
    if (!ep) return static_cast<const Error&>(ep.error()).wrap(std::string("cluster.") + setting);
    out.push_back(*ep);
  }
  return out;
}

}  // namespace

const char* redis_topology(const Config& cfg) {
  if (!cfg.redis_cluster_nodes.empty()) return "cluster";
  if (!cfg.redis_sentinels.empty()) return "sentinel";
  return "standalone";
}

Result<std::unique_ptr<cluster::Store>> make_redis_store(const Config& cfg) {
  cluster::RedisOptions ro;
  ro.host = cfg.redis_host.empty() ? ro.host : cfg.redis_host;
  ro.port = cfg.redis_port;
  ro.unix_socket = cfg.redis_socket;
  ro.user = cfg.redis_user;
  ro.password = cfg.redis_password;
  ro.db = cfg.redis_db;
  ro.connect_timeout = std::chrono::milliseconds(cfg.redis_connect_timeout_ms);
  ro.command_timeout = std::chrono::milliseconds(cfg.redis_command_timeout_ms);
  ro.key_prefix = cfg.redis_key_prefix;
  ro.tls.enabled = cfg.redis_tls;
  ro.tls.ca_file = cfg.redis_tls_ca_file;
  ro.tls.cert_file = cfg.redis_tls_cert_file;
  ro.tls.key_file = cfg.redis_tls_key_file;
  ro.tls.server_name = cfg.redis_tls_server_name;
  auto sentinels = endpoints(cfg.redis_sentinels, "redis_sentinels");
  if (!sentinels) return sentinels.error();
  ro.sentinel.sentinels = std::move(*sentinels);
  ro.sentinel.master_name = cfg.redis_master_name;
  ro.sentinel.user = cfg.redis_sentinel_user;
  ro.sentinel.password = cfg.redis_sentinel_password;
  auto nodes = endpoints(cfg.redis_cluster_nodes, "redis_cluster_nodes");
  if (!nodes) return nodes.error();
  ro.cluster_nodes = std::move(*nodes);
  // The error's kind matters only to the sync loop: here the message is what is wanted.
  if (ro.cluster_nodes.empty()) {
    auto s = cluster::RedisStore::create(ro);
    if (!s) return static_cast<const Error&>(s.error()).wrap("cluster");
    return std::unique_ptr<cluster::Store>(std::move(*s));
  }
  auto s = cluster::ClusterStore::create(ro);
  if (!s) return static_cast<const Error&>(s.error()).wrap("cluster");
  return std::unique_ptr<cluster::Store>(std::move(*s));
}

}  // namespace rl::daemon
