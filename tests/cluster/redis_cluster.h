// SPDX-License-Identifier: GPL-2.0-only
// A real Redis Cluster for tests: masters and replicas, each a RedisServer in cluster mode,
// joined by `redis-cli --cluster create` as operators build one, with the slots split into
// even ranges. The destructor kills every node.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cluster/redis_conn.h"
#include "common/result.h"
#include "redis_server.h"

namespace rl::testing {

struct RedisClusterOptions {
  size_t masters = 3;   // fewer than 3 (redis-cli's minimum) are joined by hand
  size_t replicas = 1;  // per master; none with fewer than 3 masters
  std::string host = "127.0.0.1";
  std::string netns;                      // as RedisServerOptions::netns
  std::string tls_cert, tls_key, tls_ca;  // as RedisServerOptions: every node TLS only
};

// The line of docs/cluster.md that adds `permission` to rld's ACL user ("ACL SETUSER rld
// +role"), as a command's words; empty if there is none.
std::vector<std::string> documented_acl_addition(const std::string& permission);

// Creates rld's user on each server from docs/cluster.md: the base line, then the line that adds
// `permission` (ACL users are per server: every master and replica needs them).
Status grant_documented_acl(const std::vector<RedisServer*>& servers, const std::string& password,
                            const std::string& permission);

class RedisCluster {
 public:
  // redis-cli, "" if the build did not find it.
  static std::string cli();
  static Result<std::unique_ptr<RedisCluster>> start(const RedisClusterOptions& opts = {});

  const std::vector<std::unique_ptr<RedisServer>>& nodes() const { return nodes_; }
  std::string address(const RedisServer& s) const;
  // The nodes as the store's seeds.
  std::vector<cluster::Endpoint> seeds() const;
  // The live master serving `slot`, asked of a live node; nullptr if none does.
  RedisServer* master_of(uint16_t slot);
  Result<std::string> id(RedisServer& s);
  // Moves `slot` and its keys to `to` as `redis-cli --cluster reshard` does: IMPORTING and
  // MIGRATING, MIGRATE of every key, then SETSLOT NODE on every live node.
  Status migrate_slot(uint16_t slot, RedisServer& to);
  // Every live node says cluster_state:ok and agrees on who serves every slot.
  bool healthy(std::string* why = nullptr);
  bool wait_healthy(std::chrono::seconds limit, std::string* why = nullptr);

 private:
  Status join_by_hand();

  RedisClusterOptions opts_;
  std::vector<std::unique_ptr<RedisServer>> nodes_;
};

}  // namespace rl::testing
