// SPDX-License-Identifier: GPL-2.0-only
#include "redis_cluster.h"

#include <map>
#include <thread>

#include "process.h"

namespace rl::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// The field of CLUSTER INFO named `field`, "" if missing.
std::string info_field(const std::string& info, const std::string& field) {
  size_t at = info.find(field + ":");
  if (at == std::string::npos) return "";
  size_t from = at + field.size() + 1;
  return info.substr(from, info.find_first_of("\r\n", from) - from);
}

}  // namespace

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
    auto s = RedisServer::start({.cluster = true, .host = opts.host, .netns = opts.netns});
    if (!s) return s.error();
    argv.push_back(c->address(**s));
    c->nodes_.push_back(std::move(*s));
  }
  argv.insert(argv.end(), {"--cluster-replicas", std::to_string(opts.replicas), "--cluster-yes"});
  Output out = run(argv, 60s);
  if (!out.ok()) return Error{0, "redis-cli --cluster create: " + out.describe() + out.out};
  std::string why;
  if (!c->wait_healthy(30s, &why)) return Error{ETIMEDOUT, "the cluster never formed: " + why};
  return c;
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
