// SPDX-License-Identifier: GPL-2.0-only
#include "redis_cluster.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "process.h"

namespace rl::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
constexpr size_t kSlots = 16384;

// The field of CLUSTER INFO named `field`, "" if missing.
std::string info_field(const std::string& info, const std::string& field) {
  size_t at = info.find(field + ":");
  if (at == std::string::npos) return "";
  size_t from = at + field.size() + 1;
  return info.substr(from, info.find_first_of("\r\n", from) - from);
}

}  // namespace

std::vector<std::string> documented_acl_addition(const std::string& permission) {
  std::ifstream doc(RL_DOCS_CLUSTER);
  for (std::string line; std::getline(doc, line);) {
    if (line.rfind("ACL SETUSER rld +", 0) != 0) continue;
    std::vector<std::string> argv;
    std::istringstream words(line);
    for (std::string w; words >> w;) argv.push_back(w);
    if (std::find(argv.begin(), argv.end(), permission) != argv.end()) return argv;
  }
  return {};
}

Status grant_documented_acl(const std::vector<RedisServer*>& servers, const std::string& password,
                            const std::string& permission) {
  const auto base = documented_acl(password), addition = documented_acl_addition(permission);
  if (base.empty() || addition.empty())
    return Error{ENOENT, "docs/cluster.md has no ACL SETUSER line for " + permission};
  for (RedisServer* s : servers)
    for (const auto& line : {base, addition}) {
      auto r = s->command(line);
      if (!r) return r.error();
      if (r->is_error()) return Error{EPROTO, "ACL SETUSER: " + r->str};
    }
  return Status::Ok();
}

std::string RedisCluster::cli() {
#ifdef RL_REDIS_CLI
  return RL_REDIS_CLI;
#else
  return "";
#endif
}

Result<std::unique_ptr<RedisCluster>> RedisCluster::start(const RedisClusterOptions& opts) {
  if (cli().empty()) return Error{ENOENT, "redis-cli was not found at build time"};
  std::unique_ptr<RedisCluster> c(new RedisCluster());
  c->opts_ = opts;
  const size_t n = opts.masters * (1 + opts.replicas);
  std::vector<std::string> argv;
  if (!opts.netns.empty()) argv = {"ip", "netns", "exec", opts.netns};
  argv.insert(argv.end(), {cli(), "--cluster", "create"});
  for (size_t i = 0; i < n; i++) {
    auto s = RedisServer::start({.cluster = true,
                                 .host = opts.host,
                                 .netns = opts.netns,
                                 .tls_cert = opts.tls_cert,
                                 .tls_key = opts.tls_key,
                                 .tls_ca = opts.tls_ca});
    if (!s) return s.error();
    argv.push_back(c->address(**s));
    c->nodes_.push_back(std::move(*s));
  }
  if (opts.masters >= 3) {
    argv.insert(argv.end(), {"--cluster-replicas", std::to_string(opts.replicas), "--cluster-yes"});
    if (!opts.tls_cert.empty())
      argv.insert(argv.end(), {"--tls", "--cacert", opts.tls_ca, "--cert", opts.tls_cert, "--key",
                               opts.tls_key});
    Output out = run(argv, 60s);
    if (!out.ok()) return Error{0, "redis-cli --cluster create: " + out.describe() + out.out};
  } else if (Status s = c->join_by_hand(); !s) {
    return s.error();
  }
  std::string why;
  if (!c->wait_healthy(30s, &why)) return Error{ETIMEDOUT, "the cluster never formed: " + why};
  return c;
}

// redis-cli wants three masters at least; fewer (a capacity baseline) are joined as it would:
// even slot ranges, then every node meets the first.
Status RedisCluster::join_by_hand() {
  if (opts_.replicas != 0) return Error{EINVAL, "fewer than 3 masters: no replicas"};
  const size_t n = nodes_.size();
  for (size_t i = 0; i < n; i++) {
    auto added = nodes_[i]->command({"CLUSTER", "ADDSLOTSRANGE", std::to_string(i * kSlots / n),
                                     std::to_string((i + 1) * kSlots / n - 1)});
    if (!added || added->is_error())
      return Error{EPROTO, "CLUSTER ADDSLOTSRANGE: " + (added ? added->str : added.error().str())};
    if (i == 0) continue;
    auto met =
        nodes_[i]->command({"CLUSTER", "MEET", opts_.host, std::to_string(nodes_[0]->port())});
    if (!met || met->is_error())
      return Error{EPROTO, "CLUSTER MEET: " + (met ? met->str : met.error().str())};
  }
  return Status::Ok();
}

std::string RedisCluster::address(const RedisServer& s) const {
  return opts_.host + ":" + std::to_string(s.port());
}

std::vector<cluster::Endpoint> RedisCluster::seeds() const {
  std::vector<cluster::Endpoint> out;
  for (const auto& s : nodes_) out.push_back({opts_.host, s->port(), ""});
  return out;
}

Result<std::string> RedisCluster::id(RedisServer& s) {
  auto r = s.command({"CLUSTER", "MYID"});
  if (!r) return r.error();
  if (r->is_error()) return Error{EPROTO, "CLUSTER MYID: " + r->str};
  return r->str;
}

Status RedisCluster::migrate_slot(uint16_t slot, RedisServer& to) {
  RedisServer* from = master_of(slot);
  if (!from) return Error{ENOENT, "no master serves slot " + std::to_string(slot)};
  auto from_id = id(*from), to_id = id(to);
  if (!from_id) return from_id.error();
  if (!to_id) return to_id.error();
  const std::string n = std::to_string(slot);
  auto step = [](Result<RedisValue> r, const std::string& what) -> Status {
    if (!r) return r.error();
    if (r->is_error()) return Error{EPROTO, what + ": " + r->str};
    return Status::Ok();
  };
  if (Status s = step(to.command({"CLUSTER", "SETSLOT", n, "IMPORTING", *from_id}), "IMPORTING");
      !s)
    return s;
  if (Status s = step(from->command({"CLUSTER", "SETSLOT", n, "MIGRATING", *to_id}), "MIGRATING");
      !s)
    return s;
  for (;;) {
    auto keys = from->command({"CLUSTER", "GETKEYSINSLOT", n, "100"});
    if (!keys) return keys.error();
    if (keys->elements.empty()) break;
    std::vector<std::string> migrate = {"MIGRATE", opts_.host, std::to_string(to.port()), "", "0",
                                        "5000",    "KEYS"};
    for (const auto& k : keys->elements) migrate.push_back(k.str);
    if (Status s = step(from->command(migrate), "MIGRATE"); !s) return s;
  }
  // Masters only: a replica refuses SETSLOT and learns the slot's owner from its master.
  for (auto& node : nodes_) {
    if (!node->running()) continue;
    auto role = node->command({"ROLE"});
    if (!role || role->elements.empty() || role->elements[0].str != "master") continue;
    if (Status s = step(node->command({"CLUSTER", "SETSLOT", n, "NODE", *to_id}), "SETSLOT"); !s)
      return s;
  }
  return Status::Ok();
}

RedisServer* RedisCluster::master_of(uint16_t slot) {
  for (auto& asked : nodes_) {
    if (!asked->running()) continue;
    auto slots = asked->command({"CLUSTER", "SLOTS"});
    if (!slots || slots->type != RedisValue::Type::kArray) continue;
    for (const auto& range : slots->elements) {
      if (range.elements.size() < 3 || slot < range.elements[0].integer ||
          slot > range.elements[1].integer)
        continue;
      for (auto& s : nodes_)
        if (s->running() && s->port() == range.elements[2].elements[1].integer) return s.get();
    }
    return nullptr;
  }
  return nullptr;
}

bool RedisCluster::healthy(std::string* why) {
  std::map<std::string, std::string> views;  // node -> its CLUSTER SLOTS, as text
  for (auto& s : nodes_) {
    if (!s->running()) continue;
    auto info = s->command({"CLUSTER", "INFO"});
    if (!info || info_field(info->str, "cluster_state") != "ok" ||
        info_field(info->str, "cluster_slots_ok") != "16384") {
      if (why) *why = address(*s) + ": " + (info ? info->str : info.error().str());
      return false;
    }
    auto slots = s->command({"CLUSTER", "SLOTS"});
    if (!slots) return false;
    std::map<long long, long long> owners;  // first slot -> master port, sorted
    for (const auto& range : slots->elements)
      if (range.elements.size() >= 3)
        owners[range.elements[0].integer] = range.elements[2].elements[1].integer;
    std::string view;
    for (auto [from, port] : owners)
      view += std::to_string(from) + "@" + std::to_string(port) + " ";
    views[address(*s)] = view;
  }
  for (const auto& [node, view] : views) {
    if (view != views.begin()->second) {
      if (why)
        *why =
            node + " sees " + view + "; " + views.begin()->first + " sees " + views.begin()->second;
      return false;
    }
  }
  return true;
}

bool RedisCluster::wait_healthy(std::chrono::seconds limit, std::string* why) {
  for (auto end = Clock::now() + limit; Clock::now() < end; std::this_thread::sleep_for(100ms))
    if (healthy(why)) return true;
  return false;
}

}  // namespace rl::testing
