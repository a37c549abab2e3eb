// SPDX-License-Identifier: GPL-2.0-only
// The control protocol's keys, each written here and nowhere else.
#include "control/protocol.h"

namespace rl::control {
namespace {

// A member as its key: always, a std::optional when set, a Nullable as null when not.
template <class T>
void put(Json& j, const char* key, const T& v) {
  j[key] = v;
}
template <class T>
void put(Json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}
template <class T>
void put(Json& j, const char* key, const Nullable<T>& v) {
  j[key] = v ? Json(*v) : Json(nullptr);
}

// What a client reads leniently: a key an older rld did not send keeps the default.
template <class T>
void get(const Json& j, const char* key, T& v) {
  if (auto it = j.find(key); it != j.end()) it->get_to(v);
}
template <class T>
void get(const Json& j, const char* key, std::optional<T>& v) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null())
    v.reset();
  else
    v = it->get<T>();
}
template <class T>
void get(const Json& j, const char* key, Nullable<T>& v) {
  get(j, key, static_cast<std::optional<T>&>(v));
}

// What a request must have: a missing key or one of the wrong type is "bad arguments".
template <class T>
void need(const Json& j, const char* key, T& v) {
  j.at(key).get_to(v);
}

}  // namespace

// A message whose keys are its members' names, each member written and read as put and get do.
#define RL_PUT_MEMBER(m) put(j, #m, v.m);
#define RL_GET_MEMBER(m) get(j, #m, v.m);
#define RL_MEMBERS_JSON(T, ...)                                           \
  void to_json(Json& j, const T& v) {                                     \
    j = Json::object();                                                   \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(RL_PUT_MEMBER, __VA_ARGS__)) \
  }                                                                       \
  void from_json(const Json& j, T& v) {                                   \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(RL_GET_MEMBER, __VA_ARGS__)) \
  }

// ---- Envelope ------------------------------------------------------------------------------

Json request(const std::string& cmd, Json args) {
  return Json{{"v", kProtocolVersion}, {"cmd", cmd}, {"args", std::move(args)}};
}

Json ok(Json data) {
  return Json{{"v", kProtocolVersion}, {"ok", true}, {"data", std::move(data)}};
}

Json fail(const std::string& error, Json errors) {
  return Json{
      {"v", kProtocolVersion}, {"ok", false}, {"error", error}, {"errors", std::move(errors)}};
}

int version_of(const Json& message) { return message.value("v", 0); }

std::string command_of(const Json& request) { return request.value("cmd", ""); }

Json args_of(const Json& request) { return request.value("args", Json::object()); }

Reply read_reply(const Json& response) {
  Reply r;
  r.ok = response.value("ok", false);
  if (r.ok) {
    if (auto it = response.find("data"); it != response.end()) r.data = *it;
    return r;
  }
  r.error = response.value("error", "request failed");
  for (const auto& e : response.value("errors", Json::array()))
    r.errors.push_back(e.get<std::string>());
  return r;
}

// ---- Requests ------------------------------------------------------------------------------

void to_json(Json& j, const NoArgs&) { j = Json::object(); }
void from_json(const Json&, NoArgs&) {}

void to_json(Json& j, const AttachRequest& v) {
  j = {{"interface", v.interface}};
  put(j, "mode", v.mode);
}
void from_json(const Json& j, AttachRequest& v) {
  need(j, "interface", v.interface);
  get(j, "mode", v.mode);
}

void to_json(Json& j, const InterfaceRequest& v) { j = {{"interface", v.interface}}; }
void from_json(const Json& j, InterfaceRequest& v) { need(j, "interface", v.interface); }

void to_json(Json& j, const PolicyShowRequest& v) { j = {{"name", v.name}}; }
void from_json(const Json& j, PolicyShowRequest& v) { need(j, "name", v.name); }

void to_json(Json& j, const PolicyFile& v) { j = {{"path", v.path}, {"content", v.content}}; }
void from_json(const Json& j, PolicyFile& v) {
  need(j, "path", v.path);
  need(j, "content", v.content);
}

void to_json(Json& j, const PolicyFilesRequest& v) { j = {{"files", v.files}}; }
void from_json(const Json& j, PolicyFilesRequest& v) { need(j, "files", v.files); }

void to_json(Json& j, const AclAddRequest& v) {
  j = {{"list", v.list}, {"cidr", v.cidr}, {"ttl_seconds", v.ttl_seconds}};
}
void from_json(const Json& j, AclAddRequest& v) {
  need(j, "list", v.list);
  need(j, "cidr", v.cidr);
  v.ttl_seconds = j.value("ttl_seconds", uint64_t{0});
}

void to_json(Json& j, const AclDelRequest& v) {
  j = {{"cidr", v.cidr}};
  if (!v.list.empty()) j["list"] = v.list;
}
void from_json(const Json& j, AclDelRequest& v) {
  need(j, "cidr", v.cidr);
  v.list = j.value("list", "");
}

void to_json(Json& j, const OverrideAddRequest& v) {
  j = {{"rule", v.rule},
       {"cidr", v.cidr},
       {"rate", v.rate},
       {"burst", v.burst},
       {"ttl_seconds", v.ttl_seconds}};
  if (!v.limit.empty()) j["limit"] = v.limit;
}
void from_json(const Json& j, OverrideAddRequest& v) {
  need(j, "rule", v.rule);
  need(j, "cidr", v.cidr);
  need(j, "rate", v.rate);
  v.limit = j.value("limit", "");
  v.burst = j.value("burst", uint64_t{0});
  v.ttl_seconds = j.value("ttl_seconds", uint64_t{0});
}

void to_json(Json& j, const OverrideDelRequest& v) {
  j = {{"rule", v.rule}, {"cidr", v.cidr}};
  if (!v.limit.empty()) j["limit"] = v.limit;
}
void from_json(const Json& j, OverrideDelRequest& v) {
  need(j, "rule", v.rule);
  need(j, "cidr", v.cidr);
  v.limit = j.value("limit", "");
}

void to_json(Json& j, const UnblockRequest& v) { j = {{"address", v.address}}; }
void from_json(const Json& j, UnblockRequest& v) { need(j, "address", v.address); }

void to_json(Json& j, const TopRequest& v) {
  j = {{"rule", v.rule}, {"n", v.n}, {"by", v.by}};
  put(j, "window_seconds", v.window_seconds);
}
void from_json(const Json& j, TopRequest& v) {
  v.by = j.value("by", kByDrops);
  v.rule = j.value("rule", "");
  v.n = j.value("n", 10);
  if (j.contains("window_seconds")) v.window_seconds = j.at("window_seconds").get<int>();
}

void to_json(Json& j, const KeyShowRequest& v) { j = {{"key", v.key}, {"rule", v.rule}}; }
void from_json(const Json& j, KeyShowRequest& v) {
  need(j, "key", v.key);
  v.rule = j.value("rule", "");
}

// ---- Responses -----------------------------------------------------------------------------

RL_MEMBERS_JSON(InterfaceMode, name, mode)
RL_MEMBERS_JSON(ReloadState, ok, trigger, at, errors)
RL_MEMBERS_JSON(ReloadCounts, ok, failed)
RL_MEMBERS_JSON(KeysState, tracked, blocked, capacity, capacity_in_use, counted_ms_ago)
RL_MEMBERS_JSON(SetState, name, source, directory, prefixes, files, updated)
RL_MEMBERS_JSON(StatusResponse, version, interfaces, policy_dir, pin_root, pins_outlive_rld,
                pin_warning, adopted, generation, data_path_generation, rules, last_reload,
                last_good_reload, reloads, keys, event_loop, uptime_seconds, reload_running, sets,
                ready, degraded, not_ready)
RL_MEMBERS_JSON(AttachResponse, interface, mode, replaced, warning)
RL_MEMBERS_JSON(DetachResponse, interface)
RL_MEMBERS_JSON(PolicyRule, position, name, priority, action, match, limit, where)
RL_MEMBERS_JSON(PolicyListResponse, rules)
RL_MEMBERS_JSON(RuleCounters, matched_packets, matched_bytes, passed_packets, passed_bytes,
                dropped_packets, dropped_bytes, monitored_packets, monitored_bytes)
RL_MEMBERS_JSON(PolicyShowResponse, name, priority, where, match, limit, action, block_seconds,
                report, precise_clock, id, counters)
RL_MEMBERS_JSON(PolicyDiffResponse, changes)
RL_MEMBERS_JSON(ReloadResponse, generation, rules, changes)
RL_MEMBERS_JSON(AclAddResponse, list, cidr, ttl_seconds)
RL_MEMBERS_JSON(AclDelResponse, cidr)
RL_MEMBERS_JSON(AclEntry, list, cidr, expires_in_seconds)
RL_MEMBERS_JSON(AclListResponse, entries)
RL_MEMBERS_JSON(OverrideView, rule, limit, cidr, rate, burst, expires_in_seconds)
RL_MEMBERS_JSON(OverrideListResponse, entries, capacity_per_family)
RL_MEMBERS_JSON(UnblockResponse, address, keys_reset)
RL_MEMBERS_JSON(Offender, rule, key, drops, blocked, last_seen)
RL_MEMBERS_JSON(TopDropsResponse, offenders)
RL_MEMBERS_JSON(TrafficKey, rule, key, pps, pps_error, bytes_per_second, share, dropped_share,
                packets, packets_error, samples, table_error_samples)
RL_MEMBERS_JSON(TopTrafficResponse, by, sample_shift, sample_ratio, window_seconds, samples,
                sampling_error, sampled_bytes, samples_shed, capacity, table_error_samples, keys)
RL_MEMBERS_JSON(KeyState, unit, blocked, blocked_for_seconds, algorithm, tokens, burst,
                tat_ahead_seconds, count, limit, fresh)
RL_MEMBERS_JSON(KeyShowResponse, address, rules)
RL_MEMBERS_JSON(LimitRefused, name, refused_packets, refused_bytes)
RL_MEMBERS_JSON(RuleRates, interval_seconds, matched_pps, passed_pps, dropped_pps, monitored_pps)
RL_MEMBERS_JSON(RuleStats, name, action, counters, limits, rates)
RL_MEMBERS_JSON(PacketsBytes, packets, bytes)
RL_MEMBERS_JSON(StatsResponse, rules, global)
RL_MEMBERS_JSON(ClusterServer, addr, slots, up, calls, errors, moved, ask, round_trip_us)
RL_MEMBERS_JSON(ClusterPeer, node, last_seen_ms)
RL_MEMBERS_JSON(ClusterBlock, rule, key, remaining_ms)
RL_MEMBERS_JSON(ClusterStatusResponse, node, redis_up, last_sync_ms_ago, syncs, early_syncs,
                keys_last_sync, keys_synced_total, last_pass_ms, pending_keys, pending_dropped,
                errors, last_error, topology, redis, masters_changed, servers, peers, blocked)
RL_MEMBERS_JSON(ValidateReport, valid, errors, rules)

// ---- key.show: a note or a key, and the first limit's fields also at the rule's top level ----

void to_json(Json& j, const KeyLimit& v) {
  j = Json::object();
  if (v.note) {
    j["note"] = *v.note;
  } else {
    j["key"] = v.key;
    j["tracked"] = v.tracked;
    put(j, "state", v.state);
    j["drops"] = v.drops;
    put(j, "last_drop", v.last_drop);
    put(j, "override", v.override_by);
  }
  put(j, "limit", v.limit);
  put(j, "index", v.index);
}
void from_json(const Json& j, KeyLimit& v) {
  get(j, "limit", v.limit);
  get(j, "index", v.index);
  get(j, "note", v.note);
  get(j, "key", v.key);
  get(j, "tracked", v.tracked);
  get(j, "state", v.state);
  get(j, "drops", v.drops);
  get(j, "last_drop", v.last_drop);
  get(j, "override", v.override_by);
}

void to_json(Json& j, const KeyShowRule& v) {
  // The first limit also at the top level, where a client that reads no `limits` finds it.
  KeyLimit first = v.limits.empty() ? KeyLimit{} : v.limits.front();
  first.limit.reset();
  first.index.reset();
  j = first;
  j["rule"] = v.rule;
  j["limits"] = v.limits;
}
void from_json(const Json& j, KeyShowRule& v) {
  get(j, "rule", v.rule);
  // An rld that predates `limits` sends the rule's one limit at the top level.
  if (j.contains("limits"))
    get(j, "limits", v.limits);
  else
    v.limits = {j.get<KeyLimit>()};
}

}  // namespace rl::control
