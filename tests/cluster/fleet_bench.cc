// SPDX-License-Identifier: GPL-2.0-only
// The fleet harness: N nodes, each the real sync (ClusterSync, RedisStore) over a simulated
// kernel, against one real redis-server, in simulated time. Prints what Redis spends, what each
// node sends and what the fleet admits of its heavy keys, for rl's scheme (the light stage and
// steps) and for the scheme before it (every key with a delta sent every pass), on the same
// workload and the same Redis, and the cost envoy ratelimit's model (an INCRBY and an EXPIRE per
// hit) has on it, measured on that Redis too. Figures: docs/benchmarks.md, "A fleet at scale".
//
//   ./build/tests/cluster/fleet_bench --nodes 100 --keys 100000 [--intervals 100]
//
// The workload. Every node sees every one of K keys; key k's fleet rate is Zipf (1/k), scaled so
// that key K/100 reaches the fleet limit at the end of the run: 1% of the keys pass it. The limit
// is set so that the least key still has a packet on every node every interval, the active keys
// that cost the older scheme an update each. The run is T sync intervals of 100 ms within one
// window (the Redis window is an hour, so that it never rolls during a run that takes longer
// than the time it simulates). Each interval every node's kernel admits its share of each key
// unless the key is blocked; then every node runs one pass, one after the other.
//
// The simulated kernel keeps a key light until the node admitted `light` of it (the exact
// count, where the kernel's sketch may promote a key earlier), then lists it with its exact
// count, as rl_cluster_admitted does.
#include <arpa/inet.h>

#include <hiredis/hiredis.h>
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster_store.h"
#include "cluster/light.h"
#include "cluster/redis_store.h"
#include "cluster/sync/cluster_sync.h"
#include "common/key_text.h"
#include "datapath/fake/fake_datapath.h"
#include "redis_cluster.h"
#include "redis_server.h"
#include "support/files.h"

namespace rl::testing {
namespace {

constexpr uint64_t kIntervalNs = 100'000'000;
constexpr uint64_t kWindowNs = 3'600'000'000'000ULL;
constexpr uint32_t kRuleId = 1;

struct Workload {
  size_t nodes = 10;
  size_t keys = 10'000;
  uint64_t intervals = 100;
  uint64_t limit = 0;  // per window; 0: the least that keeps every key active on every node
  // Key k's fleet units per interval (k from 1).
  double fleet_rate(size_t k) const {
    return static_cast<double>(limit) * static_cast<double>(keys) / 100.0 / static_cast<double>(k) /
           static_cast<double>(intervals);
  }
};

rl_key key_of(size_t k) {
  rl_key key{};
  key.rule_id = kRuleId;
  key.kind = RL_KEY_SRC_ADDR;
  key.family = 6;
  key.addr[0] = htonl(0x20010db8);
  key.addr[1] = htonl(static_cast<uint32_t>(k));
  return key;
}

size_t index_of(const rl_key& key) { return ntohl(key.addr[1]); }

// A node's kernel: what it admitted of every key, which keys are promoted and which blocked.
class FleetKernel : public FakeDatapath {
 public:
  FleetKernel(const Workload& w, bool light_stage)
      : w_(w), light_stage_(light_stage), keys_(w.keys + 1) {}

  // One interval of traffic: each unblocked key admits its share of the fleet rate.
  void admit(uint64_t now, std::vector<uint64_t>& fleet_admitted) {
    uint32_t light = 1;
    if (light_stage_)
      if (auto l = this->light.find(stats_slot_); l != this->light.end())
        light = std::max<uint32_t>(l->second.light, 1);
    for (size_t k = 1; k <= w_.keys; k++) {
      Key& s = keys_[k];
      if (s.blocked_until > now) continue;
      s.carry += w_.fleet_rate(k) / static_cast<double>(w_.nodes);
      auto units = static_cast<uint64_t>(s.carry);
      s.carry -= static_cast<double>(units);
      s.count += units;
      fleet_admitted[k] += units;
      if (!s.promoted && s.count >= light) s.promoted = true;
    }
  }

  Status cluster_admitted_each(const std::function<void(const ClusterCount&)>& fn) const override {
    for (size_t k = 1; k <= w_.keys; k++)
      if (keys_[k].promoted) fn(ClusterCount{key_of(k), keys_[k].count});
    return {};
  }
  Status cluster_set_over(const std::vector<std::pair<rl_key, uint64_t>>& until) override {
    for (const auto& [key, t] : until) keys_[index_of(key)].blocked_until = t;
    return {};
  }
  Result<uint64_t> cluster_prune_over(uint64_t) override { return 0; }
  void set_stats_slot(uint32_t s) { stats_slot_ = s; }

 private:
  struct Key {
    uint64_t count = 0;
    double carry = 0;
    bool promoted = false;
    uint64_t blocked_until = 0;
  };
  const Workload& w_;
  const bool light_stage_;
  std::vector<Key> keys_;
  uint32_t stats_slot_ = 0;
};

// The real store, counting what it is asked to send: each key's text and its packed delta and
// limit (the script's arguments), and the calls.
class CountingStore : public cluster::Store {
 public:
  explicit CountingStore(std::unique_ptr<cluster::Store> inner) : inner_(std::move(inner)) {}
  cluster::StoreResult<cluster::SyncReply> sync(
      const std::vector<cluster::KeyDelta>& deltas) override {
    for (const auto& d : deltas) bytes += d.key.size() + 16;
    keys += deltas.size();
    return inner_->sync(deltas);
  }
  cluster::StoreStatus heartbeat(const std::string& node) override {
    return inner_->heartbeat(node);
  }
  cluster::StoreResult<std::vector<cluster::Peer>> peers(std::chrono::milliseconds w) override {
    return inner_->peers(w);
  }
  bool connected() const override { return inner_->connected(); }
  uint64_t bytes = 0, keys = 0;

 private:
  std::unique_ptr<cluster::Store> inner_;
};

// CPU time of a Redis server's main thread, where it runs commands, in seconds.
double main_thread_cpu(const RedisServer& r) {
  uint64_t ns = 0;
  std::sscanf(read_text("/proc/" + std::to_string(r.pid()) + "/schedstat").c_str(), "%lu", &ns);
  return static_cast<double>(ns) / 1e9;
}

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "fleet_bench: %s\n", why.c_str());
  std::exit(1);
}

// Where the nodes sync: one redis-server, or a Redis Cluster of three masters.
class Backend {
 public:
  explicit Backend(const std::string& topology) {
    if (topology == "cluster") {
      auto c = RedisCluster::start({.masters = 3, .replicas = 0});
      if (!c) fail(c.error().str());
      cluster_ = std::move(*c);
      return;
    }
    auto r = RedisServer::start({.unix_socket = true});
    if (!r) fail(r.error().str());
    server_ = std::move(*r);
  }
  std::unique_ptr<cluster::Store> connect() const {
    cluster::RedisOptions o;
    o.command_timeout = std::chrono::seconds(60);
    if (cluster_) {
      o.cluster_nodes = cluster_->seeds();
      auto s = cluster::ClusterStore::create(o);
      if (!s) fail(s.error().str());
      return std::move(*s);
    }
    o.unix_socket = server_->unix_socket();
    auto s = cluster::RedisStore::connect(o);
    if (!s) fail(s.error().str());
    return std::move(*s);
  }
  // Redis's CPU so far, every master's summed.
  double cpu() const {
    if (!cluster_) return main_thread_cpu(*server_);
    double sum = 0;
    for (const auto& n : cluster_->nodes()) sum += main_thread_cpu(*n);
    return sum;
  }

 private:
  std::unique_ptr<RedisServer> server_;
  std::unique_ptr<RedisCluster> cluster_;
};

cluster::SyncRule fleet_rule(const Workload& w) {
  cluster::SyncRule v;
  v.name = "fleet";
  v.compiled.id = kRuleId;
  v.compiled.stats_slot = 3;
  v.compiled.key_kind = RL_KEY_SRC_ADDR;
  v.compiled.flags = RL_RULE_F_CLUSTER;
  v.compiled.v6_prefix = 128;
  v.limit = policy::ClusterLimit{{w.limit, kWindowNs, policy::Unit::kPackets},
                                 policy::RedisFailure::kOpen};
  return v;
}

struct Result {
  double redis_cpu_per_interval = 0;  // s
  double keys_per_interval = 0;       // key updates Redis applied
  double bytes_per_node_interval = 0;
  uint64_t intervals = 0;
  double heavy_min = 0, heavy_max = 0;  // heavy keys' fleet admitted / limit
  double heavy_worst_excess = 0;        // the most one went past its bound, / limit (<= 0: within)
};

// rl's scheme: the real ClusterSync of every node, one pass each per interval.
Result run_rl(const Workload& w, const Backend& redis, uint64_t intervals) {
  std::vector<std::unique_ptr<FleetKernel>> kernels;
  std::vector<CountingStore*> stores;
  std::vector<std::unique_ptr<cluster::ClusterSync>> syncs;
  const cluster::SyncRule rule = fleet_rule(w);
  std::chrono::steady_clock::time_point sim{};  // the simulated time the nodes' heartbeats follow
  for (size_t n = 0; n < w.nodes; n++) {
    kernels.push_back(std::make_unique<FleetKernel>(w, true));
    kernels.back()->set_stats_slot(rule.compiled.stats_slot);
    kernels.back()->now = kWindowNs;
    auto store = std::make_unique<CountingStore>(redis.connect());
    stores.push_back(store.get());
    cluster::ClusterConfig cfg;
    cfg.node = "node" + std::to_string(n);
    cfg.nodes = static_cast<uint32_t>(w.nodes);
    cfg.interval = std::chrono::hours(1);  // never on its own: run_pass() below
    cfg.clock = [&sim] { return sim; };    // a heartbeat every 10 simulated intervals
    syncs.push_back(std::make_unique<cluster::ClusterSync>(
        *kernels.back(), std::move(store), cfg,
        [rule] { return std::vector<cluster::SyncRule>{rule}; }));
  }
  std::vector<uint64_t> fleet(w.keys + 1);
  for (auto& s : syncs) s->run_pass();  // the light thresholds into the kernels
  const double cpu0 = redis.cpu();
  uint64_t keys0 = 0;
  for (auto* s : stores) keys0 += s->keys;
  for (uint64_t t = 1; t <= intervals; t++) {
    const uint64_t now = kWindowNs + t * kIntervalNs;
    sim += std::chrono::nanoseconds(kIntervalNs);
    for (size_t n = 0; n < w.nodes; n++) {
      kernels[n]->now = now;
      kernels[n]->admit(now, fleet);
    }
    for (auto& s : syncs) s->run_pass();
  }
  Result r;
  r.intervals = intervals;
  r.redis_cpu_per_interval = (redis.cpu() - cpu0) / static_cast<double>(intervals);
  uint64_t keys = 0, bytes = 0;
  for (auto* s : stores) keys += s->keys, bytes += s->bytes;
  r.keys_per_interval = static_cast<double>(keys - keys0) / static_cast<double>(intervals);
  r.bytes_per_node_interval = static_cast<double>(bytes) / static_cast<double>(w.nodes * intervals);
  // The heavy keys: those the workload takes past the limit within the run. The bound: the
  // limit, plus what the fleet admits of the key in the two intervals before every node has
  // its block (docs/cluster.md, "Worst-case overshoot", with RTT 0 as the nodes take turns).
  r.heavy_min = 1e9;
  r.heavy_worst_excess = -1e9;
  for (size_t k = 1; k <= w.keys / 100; k++) {
    double got = static_cast<double>(fleet[k]) / static_cast<double>(w.limit);
    double bound = static_cast<double>(w.limit) + 2 * w.fleet_rate(k) + 2 * w.nodes;
    r.heavy_min = std::min(r.heavy_min, got);
    r.heavy_max = std::max(r.heavy_max, got);
    r.heavy_worst_excess =
        std::max(r.heavy_worst_excess, (static_cast<double>(fleet[k]) - bound) / bound);
  }
  return r;
}

// The scheme before the light stage: every key with a delta sent by every node every pass,
// with the headroom of that scheme, through the same store. Measured over a few intervals: its
// cost is the same every interval while no key is blocked.
Result run_every(const Workload& w, const Backend& redis, uint64_t intervals) {
  std::vector<std::unique_ptr<CountingStore>> stores;
  for (size_t n = 0; n < w.nodes; n++)
    stores.push_back(std::make_unique<CountingStore>(redis.connect()));
  std::vector<double> carry(w.nodes * (w.keys + 1));
  const cluster::SyncRule rule = fleet_rule(w);
  const double cpu0 = redis.cpu();
  for (uint64_t t = 1; t <= intervals; t++)
    for (size_t n = 0; n < w.nodes; n++) {
      std::vector<cluster::KeyDelta> deltas;
      deltas.reserve(w.keys);
      for (size_t k = 1; k <= w.keys; k++) {
        double& c = carry[n * (w.keys + 1) + k];
        c += w.fleet_rate(k) / static_cast<double>(w.nodes);
        auto units = static_cast<uint64_t>(c);
        c -= static_cast<double>(units);
        if (!units) continue;
        cluster::KeyDelta d;
        d.rule = "every";
        d.key = key_text(key_of(k), rule.compiled);
        d.delta = units;
        d.limit = w.limit - std::min<uint64_t>(w.limit / 2, units * w.nodes);
        d.window_ms = kWindowNs / 1'000'000;
        deltas.push_back(std::move(d));
      }
      if (auto s = stores[n]->sync(deltas); !s) fail(s.error().str());
    }
  Result r;
  r.intervals = intervals;
  r.redis_cpu_per_interval = (redis.cpu() - cpu0) / static_cast<double>(intervals);
  uint64_t keys = 0, bytes = 0;
  for (auto& s : stores) keys += s->keys, bytes += s->bytes;
  r.keys_per_interval = static_cast<double>(keys) / static_cast<double>(intervals);
  r.bytes_per_node_interval = static_cast<double>(bytes) / static_cast<double>(w.nodes * intervals);
  return r;
}

// envoy ratelimit's model: an INCRBY and an EXPIRE per hit, pipelined. Redis's CPU per hit,
// measured on `hits` of them over as many keys.
double envoy_cpu_per_hit(const RedisServer& redis, size_t hits) {
  redisContext* c = redisConnectUnix(redis.unix_socket().c_str());
  if (!c || c->err) {
    std::fprintf(stderr, "fleet_bench: cannot connect for the INCRBY model\n");
    std::exit(1);
  }
  const double cpu0 = main_thread_cpu(redis);
  const size_t kBatch = 1000;
  for (size_t done = 0; done < hits; done += kBatch) {
    for (size_t i = done; i < done + kBatch; i++) {
      std::string key = "envoy_" + std::to_string(i % 100'000) + "_60";
      redisAppendCommand(c, "INCRBY %s 1", key.c_str());
      redisAppendCommand(c, "EXPIRE %s 60", key.c_str());
    }
    for (size_t i = 0; i < 2 * kBatch; i++) {
      void* reply = nullptr;
      if (redisGetReply(c, &reply) != REDIS_OK) std::exit(1);
      freeReplyObject(reply);
    }
  }
  const double per_hit = (main_thread_cpu(redis) - cpu0) / static_cast<double>(hits);
  redisFree(c);
  return per_hit;
}

int main_(int argc, char** argv) {
  CLI::App app{"The fleet harness: N nodes' real sync against one real redis-server."};
  Workload w;
  uint64_t every_intervals = 3;
  bool check = false;
  std::string topology = "standalone";
  app.add_option("--nodes", w.nodes, "Nodes (default 10)")->check(CLI::Range(1, 1000));
  app.add_option("--keys", w.keys, "Active keys per node (default 10,000)")
      ->check(CLI::Range(100, 1'000'000));
  app.add_option("--intervals", w.intervals, "Sync intervals the run lasts (default 100)")
      ->check(CLI::Range(10, 10'000));
  app.add_option("--every-intervals", every_intervals,
                 "Intervals the older scheme is measured over (default 3)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--topology", topology, "standalone (default) or cluster (three masters)")
      ->check(CLI::IsMember({"standalone", "cluster"}));
  app.add_flag("--check", check,
               "Exit 1 unless rl's scheme does at least 10x less Redis work and holds every heavy "
               "key within its bound (the smoke test's)");
  CLI11_PARSE(app, argc, argv);
  // The least key (k = K) must have a unit per node per interval: L K/100/K/T >= N.
  w.limit = 100 * w.nodes * w.intervals;

  Backend redis(topology);
  // The envoy model is measured on a standalone server of its own.
  auto alone = RedisServer::start({.unix_socket = true});
  if (!alone) fail(alone.error().str());
  cluster::Light l = cluster::light_for(w.limit, w.nodes);
  std::printf(
      "fleet (%s Redis): %zu nodes x %zu active keys, Zipf, 1%% over the limit of %lu per window; "
      "%lu intervals of 100 ms; light below %u, step %lu, hidden %lu (%.1f%% of the "
      "limit)\n",
      topology.c_str(), w.nodes, w.keys, (unsigned long)w.limit, (unsigned long)w.intervals,
      l.light, (unsigned long)l.step, (unsigned long)l.hidden,
      100.0 * static_cast<double>(l.hidden) / static_cast<double>(w.limit));
  Result every = run_every(w, redis, every_intervals);
  Result rl = run_rl(w, redis, w.intervals);
  double hits_per_interval = 0;
  for (size_t k = 1; k <= w.keys; k++) hits_per_interval += w.fleet_rate(k);
  double envoy = envoy_cpu_per_hit(**alone, 200'000) * hits_per_interval;

  auto row = [&](const char* scheme, const Result& r) {
    std::printf("| %s | %lu | %.0f | %.3f | %.0f |\n", scheme, (unsigned long)r.intervals,
                r.keys_per_interval * 10, r.redis_cpu_per_interval * 10,
                r.bytes_per_node_interval * 10);
  };
  std::printf("| scheme | intervals measured | key updates/s | Redis CPU-s/s | bytes/s a node |\n");
  std::printf("|---|---|---|---|---|\n");
  row("every key, every pass", every);
  row("rl: light stage and steps", rl);
  std::printf("| envoy model: INCRBY + EXPIRE per hit | - | %.0f | %.3f | - |\n",
              hits_per_interval * 2 * 10, envoy * 10);
  const double ratio = every.redis_cpu_per_interval / rl.redis_cpu_per_interval;
  std::printf(
      "Redis work: %.0fx less than every key every pass, %.0fx less than the envoy "
      "model. Heavy keys (%zu): the fleet admitted %.2f to %.2f of the limit; worst "
      "excess over the bound %+.1f%%\n",
      ratio, envoy / rl.redis_cpu_per_interval, w.keys / 100, rl.heavy_min, rl.heavy_max,
      100 * rl.heavy_worst_excess);
  if (check && (ratio < 10 || rl.heavy_worst_excess > 0)) {
    std::fprintf(stderr, "fleet_bench: check failed\n");
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace rl::testing

int main(int argc, char** argv) { return rl::testing::main_(argc, argv); }
