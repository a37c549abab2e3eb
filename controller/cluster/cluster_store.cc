// SPDX-License-Identifier: GPL-2.0-only
#include "cluster/cluster_store.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <exception>
#include <numeric>
#include <set>

#include "common/log.h"

namespace rl::cluster {
namespace {

std::string addr_of(const std::string& host, int port) { return host + ":" + std::to_string(port); }

// The share key of deltas sent to a master behind ASKING: apart from its ordinary share, since
// one store runs one sync at a time.
std::string ask_key(const std::string& addr) { return addr + " ask"; }

// The calls a failed master cannot be asked again before the slot map is read anew.
bool map_may_be_stale(ErrorKind k) {
  return k == ErrorKind::kRedirect || k == ErrorKind::kClusterDown ||
         k == ErrorKind::kUnreachable || k == ErrorKind::kTimeout ||
         k == ErrorKind::kConnectionLost || k == ErrorKind::kReadOnly;
}

}  // namespace

ClusterStore::ClusterStore(const RedisOptions& opts, std::shared_ptr<const TlsContext> tls)
    : opts_(opts),
      tls_(std::move(tls)),
      seeds_(opts.cluster_nodes),
      nodes_key_(opts.key_prefix + ":nodes") {
  opts_.cluster_nodes.clear();
  opts_.sentinel = {};
  opts_.unix_socket.clear();
  opts_.cluster_node = true;
  opts_.spread = kClusterSpread;
  for (const std::string& tag : spread_tags(kClusterSpread)) bucket_slot_.push_back(key_slot(tag));
}

StoreResult<std::unique_ptr<ClusterStore>> ClusterStore::create(const RedisOptions& opts) {
  try {
    if (opts.cluster_nodes.empty())
      return StoreError{ErrorKind::kInvalid, EINVAL, "redis options: no cluster nodes"};
    for (const Endpoint& e : opts.cluster_nodes) {
      if (!e.unix_socket.empty() || e.host.empty())
        return StoreError{ErrorKind::kInvalid, EINVAL,
                          "redis options: a cluster node is host:port, not " + e.str()};
    }
    // The masters' stores are made of these options: check them as such.
    auto tls = TlsContext::create_if_enabled(opts.tls);
    if (!tls) return tls.error();
    if (auto s = RedisStore::create(opts, *tls); !s) return s.error();
    return std::unique_ptr<ClusterStore>(new ClusterStore(opts, std::move(*tls)));
  } catch (const std::exception& e) {
    return StoreError{ErrorKind::kResource, ENOMEM, std::string("cluster store: ") + e.what()};
  }
}

StoreResult<ClusterStore::Node*> ClusterStore::node(const std::string& host, int port) {
  const std::string addr = addr_of(host, port);
  auto it = nodes_.find(addr);
  if (it != nodes_.end()) return &it->second;
  RedisOptions o = opts_;
  o.host = host;
  o.port = port;
  auto store = RedisStore::create(o, tls_);
  if (!store) return store.error();
  Node& n = nodes_[addr];
  n.store = std::move(*store);
  n.health.addr = addr;
  return &n;
}

StoreStatus ClusterStore::refresh_slots() {
  std::vector<Endpoint> candidates;
  std::set<std::string> seen;
  auto add = [&](const std::string& host, int port) {
    if (seen.insert(addr_of(host, port)).second) candidates.push_back({host, port, ""});
  };
  // Masters that answered last first, the seeds next, masters that failed last: a dead one
  // costs a connect timeout.
  auto up = [&](const SlotMap::Node& m) {
    auto it = nodes_.find(m.addr());
    return it == nodes_.end() || it->second.health.up;
  };
  for (const auto& m : map_.masters)
    if (up(m)) add(m.host, m.port);
  for (const auto& s : seeds_) add(s.host, s.port);
  for (const auto& m : map_.masters) add(m.host, m.port);
  StoreError last{ErrorKind::kUnreachable, 0, "no cluster node to ask"};
  for (const Endpoint& ep : candidates) {
    auto conn = RedisConn::connect(ep, opts_.connect_timeout, tls_.get());
    if (!conn) {
      last = conn.error();
      continue;
    }
    StoreStatus s = StoreStatus::Ok();
    if (!opts_.password.empty())
      s = opts_.user.empty() ? conn->append({"AUTH", opts_.password})
                             : conn->append({"AUTH", opts_.user, opts_.password});
    if (s) s = conn->append({"CLUSTER", "SLOTS"});
    if (!s) return s;
    Exchange ex = conn->exchange(RedisConn::Clock::now() + opts_.command_timeout);
    if (ex.failure) {
      last = ex.failure->wrap(ep.str() + ": CLUSTER SLOTS");
      continue;
    }
    const redisReply& auth = *ex.replies.front();
    if (ex.replies.size() == 2 && auth.type == REDIS_REPLY_ERROR) {
      last =
          StoreError{ErrorKind::kAuth, 0, ep.str() + ": AUTH: " + std::string(auth.str, auth.len)};
      continue;
    }
    const redisReply& slots = *ex.replies.back();
    if (slots.type == REDIS_REPLY_ERROR) {
      // Its kind decides: NOPERM for CLUSTER SLOTS is a permission to grant, not a bad reply.
      const std::string text(slots.str, slots.len);
      last = StoreError{reply_error_kind(text), 0, ep.str() + ": CLUSTER SLOTS: " + text};
      continue;
    }
    auto map = parse_cluster_slots(slots, ep.host);
    if (!map || map->unserved() == kSlots) {
      last = map ? StoreError{ErrorKind::kClusterDown, 0, ep.str() + ": serves no slots"}
                 : map.error().wrap(ep.str());
      continue;
    }
    stats_.slot_map_reads++;
    if (map_known_ && !(*map == map_)) {
      stats_.topology_changes++;
      std::string masters;
      for (const auto& m : map->masters) masters += (masters.empty() ? "" : " ") + m.addr();
      log::warn("redis cluster slots moved",
                {{"masters", masters}, {"unserved_slots", std::to_string(map->unserved())}});
    }
    map_ = std::move(*map);
    map_known_ = true;
    // Stores of servers that no longer serve slots go; one is made again if a slot returns.
    std::erase_if(nodes_, [&](const auto& n) {
      return std::none_of(map_.masters.begin(), map_.masters.end(),
                          [&](const SlotMap::Node& m) { return m.addr() == n.first; });
    });
    map_stale_ = map_.unserved() > 0;
    return StoreStatus::Ok();
  }
  return last.wrap("redis cluster: slot map");
}

StoreStatus ClusterStore::ensure_slots() {
  if (map_known_ && !map_stale_) return StoreStatus::Ok();
  StoreStatus s = refresh_slots();
  if (!s && !map_known_) return s;
  return StoreStatus::Ok();  // a stale map still routes most keys right; MOVED mends the rest
}

void ClusterStore::route(const std::vector<KeyDelta>& deltas, const std::vector<size_t>& indices,
                         std::map<std::string, Share>& shares, SyncReply& out) const {
  for (size_t i : indices) {
    const uint16_t slot = bucket_slot_[spread_bucket(deltas[i].key, kClusterSpread)];
    const int16_t owner = map_.owner[slot];
    if (owner < 0) {
      if (out.retry_reason.empty())
        out.retry_reason = "slot " + std::to_string(slot) + " has no master";
      out.retry.push_back(i);
      continue;
    }
    const auto& m = map_.masters[static_cast<size_t>(owner)];
    Share& s = shares[addr_of(m.host, m.port)];
    s.host = m.host;
    s.port = m.port;
    s.indices.push_back(i);
  }
}

size_t ClusterStore::run_round(const std::vector<KeyDelta>& deltas,
                               std::map<std::string, Share>& shares, SyncReply& out,
                               std::map<std::string, Share>& next) {
  struct Flight {
    Node* node;
    const Share* share;
    std::unique_ptr<SyncStream> stream;
  };
  // Every share on its way before any reply is read: the masters work at once.
  std::vector<Flight> flights;
  size_t answered = 0;
  for (auto& [key, share] : shares) {
    auto n = node(share.host, share.port);
    if (!n) {
      out.retry.insert(out.retry.end(), share.indices.begin(), share.indices.end());
      continue;
    }
    auto stream = share.ask ? (*n)->store->begin_asking_sync() : (*n)->store->begin_sync();
    for (size_t i : share.indices) stream->add(deltas[i]);
    stream->flush();
    flights.push_back({*n, &share, std::move(stream)});
  }
  for (Flight& f : flights) {
    const auto& idx = f.share->indices;
    ServerHealth& h = f.node->health;
    h.calls++;
    auto reply = f.stream->finish();
    if (!reply) {
      h.errors++;
      h.up = false;
      if (map_may_be_stale(reply.error().kind)) map_stale_ = true;
      if (out.retry_reason.empty()) out.retry_reason = reply.error().str();
      out.retry.insert(out.retry.end(), idx.begin(), idx.end());
      continue;
    }
    answered++;
    h.up = true;
    h.round_trip = reply->round_trip;
    out.round_trip = std::max(out.round_trip, reply->round_trip);
    out.server_time_ms = std::max(out.server_time_ms, reply->server_time_ms);
    for (OverLimit o : reply->over) {
      o.index = idx[o.index];
      out.over.push_back(o);
    }
    for (size_t r : reply->rejected) out.rejected.push_back(idx[r]);
    if (out.rejected_reason.empty()) out.rejected_reason = reply->rejected_reason;
    for (size_t r : reply->retry) out.retry.push_back(idx[r]);
    if (out.retry_reason.empty() && !reply->retry.empty())
      out.retry_reason = h.addr + ": the cluster is down for a slot";
    for (const auto& red : reply->redirected) {
      (red.ask ? h.ask : h.moved)++;
      (red.ask ? stats_.ask : stats_.moved)++;
      // MOVED: the map is out of date; the deltas go where the reply says, which is where the
      // slot is now, and the map is read again after the round.
      if (!red.ask) map_stale_ = true;
      const std::string to = addr_of(red.host, red.port);
      Share& s = next[red.ask ? ask_key(to) : to];
      s.host = red.host;
      s.port = red.port;
      s.ask = red.ask;
      for (size_t r : red.indices) s.indices.push_back(idx[r]);
    }
  }
  return answered;
}

StoreResult<SyncReply> ClusterStore::sync(const std::vector<KeyDelta>& deltas) {
  const std::string what = "sync of " + std::to_string(deltas.size()) + " key(s)";
  try {
    SyncReply out;
    if (deltas.empty()) return out;
    if (StoreStatus s = ensure_slots(); !s) {
      connected_ = false;
      return s.error().wrap(what);
    }
    std::vector<size_t> all(deltas.size());
    std::iota(all.begin(), all.end(), 0);
    std::map<std::string, Share> shares;
    route(deltas, all, shares, out);
    size_t asked = 0, answered = 0;  // masters, over the rounds
    for (int round = 0; round < kMaxRounds && !shares.empty(); round++) {
      asked += shares.size();
      std::map<std::string, Share> next;
      // A master's ordinary share and an ASK share for it go in turns: one sync per store.
      std::map<std::string, Share> asks;
      for (auto it = shares.begin(); it != shares.end();)
        if (it->second.ask) {
          asks.insert(shares.extract(it++));
        } else {
          ++it;
        }
      answered += run_round(deltas, shares, out, next);
      if (!asks.empty()) answered += run_round(deltas, asks, out, next);
      if (map_stale_) (void)refresh_slots();
      shares = std::move(next);
    }
    for (const auto& [key, share] : shares) {
      if (out.retry_reason.empty()) out.retry_reason = "still redirected after 3 rounds";
      out.retry.insert(out.retry.end(), share.indices.begin(), share.indices.end());
    }
    // Every master failed: as one server down, so the caller's failure policy applies.
    if (asked > 0 && answered == 0) {
      connected_ = false;
      return StoreError{ErrorKind::kUnreachable, 0,
                        what + ": no master answered: " + out.retry_reason};
    }
    connected_ = out.retry.empty();
    std::sort(out.over.begin(), out.over.end(),
              [](const OverLimit& a, const OverLimit& b) { return a.index < b.index; });
    std::sort(out.rejected.begin(), out.rejected.end());
    std::sort(out.retry.begin(), out.retry.end());
    return out;
  } catch (const std::exception& e) {
    return StoreError{ErrorKind::kResource, ENOMEM, what + ": " + e.what()};
  }
}

template <typename Call>
auto ClusterStore::on_slot_owner(const std::string& key, Call call)
    -> decltype(call(std::declval<Store&>())) {
  using R = decltype(call(std::declval<Store&>()));
  if (StoreStatus s = ensure_slots(); !s) return R(s.error());
  const uint16_t slot = key_slot(key);
  for (int attempt = 0;; attempt++) {
    const int16_t owner = map_.owner[slot];
    if (owner < 0) {
      if (attempt == 0 && refresh_slots()) continue;
      return R(StoreError{ErrorKind::kClusterDown, 0,
                          "redis cluster: slot " + std::to_string(slot) + " has no master"});
    }
    const auto& m = map_.masters[static_cast<size_t>(owner)];
    auto n = node(m.host, m.port);
    if (!n) return R(n.error());
    R r = call(*(*n)->store);
    (*n)->health.calls++;
    (*n)->health.up = static_cast<bool>(r);
    connected_ = static_cast<bool>(r);
    if (r) return r;
    (*n)->health.errors++;
    if (attempt > 0 || !map_may_be_stale(r.error().kind)) return r;
    map_stale_ = true;
    if (!refresh_slots()) return r;
  }
}

StoreStatus ClusterStore::check() {
  if (StoreStatus s = refresh_slots(); !s) return s;
  std::string failed;
  ErrorKind kind = ErrorKind::kUnreachable;
  for (const auto& m : map_.masters) {
    auto n = node(m.host, m.port);
    StoreStatus s = n ? (*n)->store->check_connection() : StoreStatus(n.error());
    if (s) continue;
    kind = s.error().kind;
    failed += (failed.empty() ? "" : "; ") + s.error().str();
  }
  if (!failed.empty()) return StoreError{kind, 0, "redis cluster: " + failed};
  if (auto p = peers(std::chrono::milliseconds(0)); !p) return p.error();
  return StoreStatus::Ok();
}

StoreStatus ClusterStore::heartbeat(const std::string& node) {
  return on_slot_owner(nodes_key_, [&](Store& s) { return s.heartbeat(node); });
}

StoreResult<std::vector<Peer>> ClusterStore::peers(std::chrono::milliseconds within) {
  return on_slot_owner(nodes_key_, [&](Store& s) { return s.peers(within); });
}

std::string ClusterStore::server() const {
  if (!map_known_) {
    std::string s = "redis cluster, slots not known yet; seeds";
    for (const auto& e : seeds_) s += " " + addr_of(e.host, e.port);
    return tls_ ? s + " over TLS" : s;
  }
  std::string s = "redis cluster of " + std::to_string(map_.masters.size()) + " masters:";
  for (const auto& m : map_.masters) s += " " + m.addr();
  return tls_ ? s + " over TLS" : s;
}

std::vector<ServerHealth> ClusterStore::servers() const {
  std::vector<ServerHealth> out;
  for (size_t i = 0; i < map_.masters.size(); i++) {
    const std::string addr = map_.masters[i].addr();
    auto it = nodes_.find(addr);
    ServerHealth h = it == nodes_.end() ? ServerHealth{} : it->second.health;
    h.addr = addr;
    h.slots = map_.slots_of(i);
    out.push_back(h);
  }
  return out;
}

}  // namespace rl::cluster
