// SPDX-License-Identifier: GPL-2.0-only
// rld's control protocol: one JSON request and one JSON response per connection on a Unix
// socket (mode 0600, root), each a single line.
//   -> {"v":1,"cmd":"status","args":{}}
//   <- {"v":1,"ok":true,"data":{...}}   or   {"v":1,"ok":false,"error":"...","errors":[...]}
// A client and a daemon of different versions refuse each other with a clear error.
//
// Every command is declared here once: its name, its request (args) and its response (data) as
// structs with to_json/from_json (protocol.cc), which rld's handlers fill and rlctl reads, so
// the two sides name the same keys by construction: a response's keys are its members' names.
// from_json reads what an older rld may leave out with a default; to_json writes exactly the
// keys rld has always sent (a std::optional only when set, a Nullable as null when not).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace rl::control {

constexpr int kProtocolVersion = 1;
constexpr size_t kMaxMessageBytes = 16 << 20;  // policy files travel in requests
// Where rld listens and rlctl calls unless configured otherwise.
inline constexpr const char* kDefaultSocketPath = "/run/rl/rld.sock";

using Json = nlohmann::json;

// The one way rl turns JSON into text: bytes that are not UTF-8 (a policy file's contents in an
// error, a file name) become U+FFFD instead of making nlohmann throw and the process abort.
inline std::string to_text(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

// A value the protocol sends as null when it has none (a std::optional is left out instead).
template <class T>
struct Nullable : std::optional<T> {
  using std::optional<T>::optional;
  Nullable() = default;
  Nullable(std::optional<T> v) : std::optional<T>(std::move(v)) {}
};

// The envelope.
Json request(const std::string& cmd, Json args = Json::object());
Json ok(Json data = Json::object());
Json fail(const std::string& error, Json errors = Json::array());
// A request's or response's protocol version (0 when it names none), a request's command (""
// when it names none) and its arguments ({} when it has none).
int version_of(const Json& message);
std::string command_of(const Json& request);
Json args_of(const Json& request);
// A response, read: its data when ok, else its error and the error lines.
struct Reply {
  bool ok = false;
  Json data;
  std::string error;  // "request failed" when rld gave none
  std::vector<std::string> errors;
};
Reply read_reply(const Json& response);

// ---- Requests ------------------------------------------------------------------------------

struct NoArgs {};

struct AttachRequest {
  std::string interface;
  std::optional<std::string> mode;  // rld's configured mode when left out
};
struct InterfaceRequest {
  std::string interface;
};
struct PolicyShowRequest {
  std::string name;
};
struct PolicyFile {
  std::string path;  // as the operator gave it; rld installs it by its file name
  std::string content;
};
struct PolicyFilesRequest {
  std::vector<PolicyFile> files;
};
struct AclAddRequest {
  std::string list;  // "allow" or "deny"
  std::string cidr;
  uint64_t ttl_seconds = 0;  // 0: never expires
};
struct AclDelRequest {
  std::string list;  // "" for either list
  std::string cidr;
};
struct OverrideAddRequest {
  std::string rule;
  std::string limit;  // a stacked limit's name; "" for the rule's own
  std::string cidr;
  std::string rate;          // as a policy writes it: "1000/s", "10MB/s"
  uint64_t burst = 0;        // token buckets; 0: the rate's amount
  uint64_t ttl_seconds = 0;  // 0: never expires
};
struct OverrideDelRequest {
  std::string rule;
  std::string limit;  // "" for the rule's own
  std::string cidr;
};
struct UnblockRequest {
  std::string address;
};
struct TopRequest {
  std::string by = "drops";  // or "traffic"
  std::string rule;          // "" for every rule
  int n = 10;
  std::optional<int> window_seconds;  // drops: how far back (300 when left out)
};
struct KeyShowRequest {
  std::string key;
  std::string rule;
};

// ---- Responses -----------------------------------------------------------------------------

struct InterfaceMode {
  std::string name, mode;
};
struct ReloadState {
  bool ok = false;
  std::string trigger;
  Nullable<int64_t> at;  // unix seconds; null before the first reload
  std::vector<std::string> errors;
};
struct ReloadCounts {
  uint64_t ok = 0, failed = 0;
};
struct KeysState {
  uint64_t tracked = 0, blocked = 0, capacity = 0, capacity_in_use = 0;
  int64_t counted_ms_ago = 0;
};
struct SetState {
  std::string name;
  std::string source;  // "inline", or the path of the file or directory it is read from
  bool directory = false;
  uint64_t prefixes = 0, files = 0;
  Nullable<int64_t> updated;  // unix seconds its prefixes last changed in force
};
struct StatusResponse {
  std::string version;
  std::vector<InterfaceMode> interfaces;
  std::string policy_dir, pin_root;
  bool pins_outlive_rld = true;
  std::string pin_warning;
  bool adopted = false;
  uint64_t generation = 0, data_path_generation = 0, rules = 0;
  ReloadState last_reload;
  Nullable<int64_t> last_good_reload;
  ReloadCounts reloads;
  KeysState keys;
  std::string event_loop;
  int64_t uptime_seconds = 0;
  std::optional<bool> reload_running;
  std::optional<std::vector<SetState>> sets;  // absent from an rld before sets from files
  bool ready = false, degraded = false;
  std::vector<std::string> not_ready;
};

struct AttachResponse {
  std::string interface, mode;
  bool replaced = false;
  std::string warning;
};
struct DetachResponse {
  std::string interface;
};

struct PolicyRule {
  int position = 0;
  std::string name;
  int priority = 0;
  std::string action, match, limit, where;
};
struct PolicyListResponse {
  std::vector<PolicyRule> rules;
};
struct RuleCounters {
  uint64_t matched_packets = 0, matched_bytes = 0, passed_packets = 0, passed_bytes = 0,
           dropped_packets = 0, dropped_bytes = 0, monitored_packets = 0, monitored_bytes = 0;
};
struct PolicyShowResponse {
  std::string name;
  int priority = 0;
  std::string where, match, limit, action;
  double block_seconds = 0;
  bool report = false, precise_clock = false;
  uint32_t id = 0;
  Nullable<RuleCounters> counters;  // null when they could not be read
};
struct PolicyDiffResponse {
  std::vector<std::string> changes;
};
// policy.reload, and policy.apply (which also has the changes it made).
struct ReloadResponse {
  uint64_t generation = 0, rules = 0;
  std::optional<std::vector<std::string>> changes;
};

struct AclAddResponse {
  std::string list, cidr;
  uint64_t ttl_seconds = 0;
};
struct AclDelResponse {
  std::string cidr;
};
struct AclEntry {
  std::string list, cidr;
  Nullable<uint64_t> expires_in_seconds;  // null: never
};
struct AclListResponse {
  std::vector<AclEntry> entries;
};

// A runtime override: a rule's limit for the sources of a prefix.
struct OverrideView {
  std::string rule, limit, cidr, rate;
  uint64_t burst = 0;                     // 0: the rate's amount
  Nullable<uint64_t> expires_in_seconds;  // null: never
};
struct OverrideListResponse {
  std::vector<OverrideView> entries;
  uint64_t capacity_per_family = 0;
};

struct UnblockResponse {
  std::string address;
  uint64_t keys_reset = 0;
};

struct Offender {
  std::string rule, key;
  uint64_t drops = 0;
  bool blocked = false;
  int64_t last_seen = 0;  // unix seconds
};
struct TopDropsResponse {
  std::vector<Offender> offenders;
};
struct TrafficKey {
  std::string rule, key;
  double pps = 0, pps_error = 0, bytes_per_second = 0, share = 0, dropped_share = 0, packets = 0,
         packets_error = 0;
  uint64_t samples = 0, table_error_samples = 0;
};
struct TopTrafficResponse {
  std::string by = "traffic";
  uint32_t sample_shift = 0;
  uint64_t sample_ratio = 0;
  double window_seconds = 0;
  uint64_t samples = 0;
  std::optional<std::string> sampling_error;  // the bound per key, as text
  uint64_t sampled_bytes = 0, samples_shed = 0, capacity = 0, table_error_samples = 0;
  std::vector<TrafficKey> keys;
};

// One key's limiter state (daemon/key_state.h); which fields are set depends on the algorithm.
struct KeyState {
  std::string unit;  // "packets", "bytes", "64 bytes"
  bool blocked = false;
  double blocked_for_seconds = 0;
  std::string algorithm;
  std::optional<double> tokens, burst, tat_ahead_seconds;  // token bucket
  std::optional<uint64_t> count, limit;                    // windows
  bool fresh = false;
};
// One limit of a rule for the address: a note when it names no key, else the key's state.
struct KeyLimit {
  std::optional<std::string> limit;  // the limit's name; left out at a rule's top level
  std::optional<uint32_t> index;
  std::optional<std::string> note;
  std::string key;
  bool tracked = false;
  std::optional<KeyState> state;  // when tracked
  uint64_t drops = 0;
  Nullable<int64_t> last_drop;  // unix seconds; null: none known
  // The runtime override that judges the address under this limit instead, if one does.
  std::optional<OverrideView> override_by;
};
// A rule's limits; the first one's fields are also sent at the rule's top level.
struct KeyShowRule {
  std::string rule;
  std::vector<KeyLimit> limits;
};
struct KeyShowResponse {
  std::string address;
  std::vector<KeyShowRule> rules;
};

struct LimitRefused {
  std::string name;
  uint64_t refused_packets = 0, refused_bytes = 0;
};
struct RuleRates {
  double interval_seconds = 0, matched_pps = 0, passed_pps = 0, dropped_pps = 0, monitored_pps = 0;
};
struct RuleStats {
  std::string name, action;
  RuleCounters counters;
  std::optional<std::vector<LimitRefused>> limits;  // rules with stacked limits
  std::optional<RuleRates> rates;                   // once two samples are apart
};
struct PacketsBytes {
  uint64_t packets = 0, bytes = 0;
};
struct StatsResponse {
  std::vector<RuleStats> rules;
  std::map<std::string, PacketsBytes> global;  // by counter name
};

struct ClusterPeer {
  std::string node;
  uint64_t last_seen_ms = 0;  // server time
};
struct ClusterBlock {
  std::string rule, key;
  uint64_t remaining_ms = 0;
};
// One Redis Cluster master as the store sees it.
struct ClusterServer {
  std::string addr;
  uint64_t slots = 0;
  bool up = false;
  uint64_t calls = 0, errors = 0, moved = 0, ask = 0;
  uint64_t round_trip_us = 0;  // its last sync's
};
struct ClusterStatusResponse {
  std::string node;
  bool redis_up = false;
  Nullable<int64_t> last_sync_ms_ago;  // null: never
  uint64_t syncs = 0, early_syncs = 0, keys_last_sync = 0, keys_synced_total = 0, last_pass_ms = 0,
           pending_keys = 0, pending_dropped = 0;
  std::map<std::string, uint64_t> errors;  // by kind
  std::string last_error;                  // why the last call to Redis failed; "" since a success
  std::string topology;                    // standalone, sentinel or cluster
  std::string redis;                       // the server in use (with Sentinel: the master)
  uint64_t masters_changed = 0;            // failovers followed (a cluster: slot maps changed)
  std::vector<ClusterServer> servers;      // a Redis Cluster's masters; empty for one server
  std::vector<ClusterPeer> peers;
  std::vector<ClusterBlock> blocked;
};

// Not rld's: what `rlctl policy validate -o json` prints.
struct ValidateReport {
  bool valid = false;
  std::vector<std::string> errors;
  uint64_t rules = 0;
};

// ---- Commands ------------------------------------------------------------------------------

#define RL_CONTROL_COMMAND(Type, wire, Req, Resp) \
  struct Type {                                   \
    static constexpr const char* kName = wire;    \
    using Request = Req;                          \
    using Response = Resp;                        \
  };
RL_CONTROL_COMMAND(Status, "status", NoArgs, StatusResponse)
RL_CONTROL_COMMAND(Attach, "attach", AttachRequest, AttachResponse)
RL_CONTROL_COMMAND(Detach, "detach", InterfaceRequest, DetachResponse)
RL_CONTROL_COMMAND(PolicyList, "policy.list", NoArgs, PolicyListResponse)
RL_CONTROL_COMMAND(PolicyShow, "policy.show", PolicyShowRequest, PolicyShowResponse)
RL_CONTROL_COMMAND(PolicyDiff, "policy.diff", PolicyFilesRequest, PolicyDiffResponse)
RL_CONTROL_COMMAND(PolicyApply, "policy.apply", PolicyFilesRequest, ReloadResponse)
RL_CONTROL_COMMAND(PolicyReload, "policy.reload", NoArgs, ReloadResponse)
RL_CONTROL_COMMAND(AclAdd, "acl.add", AclAddRequest, AclAddResponse)
RL_CONTROL_COMMAND(AclDel, "acl.del", AclDelRequest, AclDelResponse)
RL_CONTROL_COMMAND(AclList, "acl.list", NoArgs, AclListResponse)
RL_CONTROL_COMMAND(OverrideAdd, "override.add", OverrideAddRequest, OverrideView)
RL_CONTROL_COMMAND(OverrideDel, "override.del", OverrideDelRequest, OverrideView)
RL_CONTROL_COMMAND(OverrideList, "override.list", NoArgs, OverrideListResponse)
RL_CONTROL_COMMAND(Unblock, "unblock", UnblockRequest, UnblockResponse)
// Answered by TopDropsResponse or, for by "traffic", TopTrafficResponse.
RL_CONTROL_COMMAND(Top, "top", TopRequest, Json)
RL_CONTROL_COMMAND(KeyShow, "key.show", KeyShowRequest, KeyShowResponse)
RL_CONTROL_COMMAND(Stats, "stats", NoArgs, StatsResponse)
RL_CONTROL_COMMAND(ClusterStatus, "cluster.status", NoArgs, ClusterStatusResponse)
#undef RL_CONTROL_COMMAND

// The runtime lists' names, and top's rankings.
inline constexpr const char* kAllowList = "allow";
inline constexpr const char* kDenyList = "deny";
inline constexpr const char* kByDrops = "drops";
inline constexpr const char* kByTraffic = "traffic";

// A typed request in its envelope.
template <class Command>
Json request(const typename Command::Request& args) {
  return request(Command::kName, Json(args));
}

// ---- JSON ----------------------------------------------------------------------------------

void to_json(Json& j, const NoArgs&);
void from_json(const Json& j, NoArgs&);
// T names a type, which cannot be parenthesised where a declaration names it.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define RL_CONTROL_JSON(T)           \
  void to_json(Json& j, const T& v); \
  void from_json(const Json& j, T& v);
// NOLINTEND(bugprone-macro-parentheses)
RL_CONTROL_JSON(AttachRequest)
RL_CONTROL_JSON(InterfaceRequest)
RL_CONTROL_JSON(PolicyShowRequest)
RL_CONTROL_JSON(PolicyFile)
RL_CONTROL_JSON(PolicyFilesRequest)
RL_CONTROL_JSON(AclAddRequest)
RL_CONTROL_JSON(AclDelRequest)
RL_CONTROL_JSON(OverrideAddRequest)
RL_CONTROL_JSON(OverrideDelRequest)
RL_CONTROL_JSON(UnblockRequest)
RL_CONTROL_JSON(TopRequest)
RL_CONTROL_JSON(KeyShowRequest)
RL_CONTROL_JSON(InterfaceMode)
RL_CONTROL_JSON(ReloadState)
RL_CONTROL_JSON(ReloadCounts)
RL_CONTROL_JSON(KeysState)
RL_CONTROL_JSON(StatusResponse)
RL_CONTROL_JSON(AttachResponse)
RL_CONTROL_JSON(DetachResponse)
RL_CONTROL_JSON(PolicyRule)
RL_CONTROL_JSON(PolicyListResponse)
RL_CONTROL_JSON(RuleCounters)
RL_CONTROL_JSON(PolicyShowResponse)
RL_CONTROL_JSON(PolicyDiffResponse)
RL_CONTROL_JSON(ReloadResponse)
RL_CONTROL_JSON(AclAddResponse)
RL_CONTROL_JSON(AclDelResponse)
RL_CONTROL_JSON(AclEntry)
RL_CONTROL_JSON(AclListResponse)
RL_CONTROL_JSON(OverrideView)
RL_CONTROL_JSON(OverrideListResponse)
RL_CONTROL_JSON(UnblockResponse)
RL_CONTROL_JSON(Offender)
RL_CONTROL_JSON(TopDropsResponse)
RL_CONTROL_JSON(TrafficKey)
RL_CONTROL_JSON(TopTrafficResponse)
RL_CONTROL_JSON(KeyState)
RL_CONTROL_JSON(KeyLimit)
RL_CONTROL_JSON(KeyShowRule)
RL_CONTROL_JSON(KeyShowResponse)
RL_CONTROL_JSON(LimitRefused)
RL_CONTROL_JSON(RuleRates)
RL_CONTROL_JSON(RuleStats)
RL_CONTROL_JSON(PacketsBytes)
RL_CONTROL_JSON(StatsResponse)
RL_CONTROL_JSON(ClusterServer)
RL_CONTROL_JSON(ClusterPeer)
RL_CONTROL_JSON(ClusterBlock)
RL_CONTROL_JSON(ClusterStatusResponse)
RL_CONTROL_JSON(ValidateReport)
#undef RL_CONTROL_JSON

}  // namespace rl::control
