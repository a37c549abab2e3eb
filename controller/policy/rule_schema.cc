// SPDX-License-Identifier: GPL-2.0-only
// Reading one entry of `rules:`: everything except its match (match_schema.cc).
#include "policy/describe.h"
#include "policy/fragment.h"
#include "policy/limits.h"
#include "policy/protocols.h"
#include "policy/rate.h"
#include "rl_abi.h"

namespace rl::policy::detail {
namespace {

// The data path stores names in RL_RULE_NAME_MAX bytes with a terminating NUL.
constexpr size_t kMaxRuleName = RL_RULE_NAME_MAX - 1;
constexpr int kDefaultPriority = 100;
// A block is added to nanosecond timestamps; a year is plenty and far from overflow.
constexpr uint64_t kMaxBlockNs = uint64_t{365} * 24 * 3600 * 1'000'000'000;

const Schema kRuleSchema{
    "in rule",
    {"name", "priority", "match", "limit", "limits", "key", "prefix", "action", "block", "report",
     "cluster", "new_sources", "syn_cookies"},
    {{match_field_names(), "it belongs under match:"},
     {{"algorithm", "rate", "burst", "connections"}, "it belongs under limit:"},
     {{"on_redis_failure"}, "it belongs under cluster:"},
     {{"ipv4", "ipv6"}, "it belongs under prefix:"}}};

const Schema kLimitSchema{
    "in limit",
    {"algorithm", "rate", "burst", "connections"},
    {{{"key", "prefix", "action", "block", "report", "cluster", "syn_cookies"},
      "it belongs to the rule, one level up"}}};

// An item of `limits:`: a limit with its own key.
const Schema kLimitsItemSchema{
    "in limits",
    {"name", "algorithm", "rate", "burst", "connections", "key", "prefix"},
    {{{"action", "block", "report", "cluster", "new_sources", "syn_cookies"},
      "it belongs to the rule, one level up"}}};

const Schema kPrefixSchema{"in prefix", {"ipv4", "ipv6"}, {}};

const Schema kClusterSchema{"in cluster", {"rate", "on_redis_failure"}, {}};

const Schema kNewSourcesSchema{"in new_sources", {"rate", "burst", "key", "prefix"}, {}};

std::optional<std::string> read_name(Reader& r, const Field& f) {
  auto name = scalar(r, f, "name must be a string");
  if (!name) return std::nullopt;
  if (name->empty()) {
    r.error(f.at, "rule name must not be empty");
    return std::nullopt;
  }
  if (name->size() > kMaxRuleName) {
    r.error(f.at, "rule name '" + *name + "' is too long (" + std::to_string(name->size()) +
                      " characters, at most " + std::to_string(kMaxRuleName) + ")");
    return std::nullopt;
  }
  for (char c : *name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '.' || c == '-';
    if (!ok) {
      r.error(f.at, "rule name '" + *name + "' may only contain letters, digits, '_', '.' and '-'");
      return std::nullopt;
    }
  }
  return name;
}

std::optional<Rate> read_rate(Reader& r, const Field& f, const std::string& name) {
  auto text = scalar(r, f, name + " must be a rate like 100/s or 10Mbit/s");
  if (!text) return std::nullopt;
  auto rate = parse_rate(*text);
  if (!rate) {
    r.error(f.at, rate.error().message);
    return std::nullopt;
  }
  return *rate;
}

// A packet count for packet rates, a byte size ("1MB" or a plain number of bytes) for byte
// rates.
std::optional<uint64_t> read_burst(Reader& r, const Field& f, Unit unit) {
  auto text = scalar(r, f, "burst must be a number");
  if (!text) return std::nullopt;
  std::optional<uint64_t> burst;
  if (unit == Unit::kPackets) {
    auto n = parse_int(*text);
    if (!n) {
      std::string hint = parse_bytes(*text) ? " (byte sizes need a byte rate like 10MB/s)" : "";
      r.error(f.at,
              "burst for a packet rate must be a number of packets, got '" + *text + "'" + hint);
      return std::nullopt;
    }
    if (*n < 0) {
      r.error(f.at, "burst must be greater than 0");
      return std::nullopt;
    }
    burst = static_cast<uint64_t>(*n);
  } else {
    auto bytes = parse_bytes(*text);
    if (!bytes) {
      r.error(f.at, bytes.error().message);
      return std::nullopt;
    }
    burst = *bytes;
  }
  if (*burst == 0) {
    r.error(f.at, "burst must be greater than 0");
    return std::nullopt;
  }
  return burst;
}

// algorithm, rate and burst of the mapping f (a `limit:` or an item of `limits:`). Returns
// whether the rate was read, which later checks need.
bool read_limit_fields(Reader& r, const Field& f, const Fields& fields, Limit& limit) {
  if (const Field* c = fields.get("connections")) {
    for (const char* other : {"algorithm", "rate", "burst"})
      if (const Field* o = fields.get(other))
        r.error(o->key_at, std::string(other) +
                               " does not go with connections: a connection limit counts the "
                               "connections a key holds open, not a rate");
    limit.algorithm = Algorithm::kConnections;
    if (auto n = integer(r, *c, "connections", 1, UINT32_MAX))
      limit.connections = static_cast<uint32_t>(*n);
    return false;
  }
  bool algorithm_ok = true;
  if (const Field* a = fields.get("algorithm")) {
    auto algorithm = choice<Algorithm>(r, *a, "algorithm",
                                       {{"token_bucket", Algorithm::kTokenBucket},
                                        // GCRA is the leaky bucket as a meter: one algorithm.
                                        {"leaky_bucket", Algorithm::kTokenBucket},
                                        {"fixed_window", Algorithm::kFixedWindow},
                                        {"sliding_window", Algorithm::kSlidingWindow},
                                        {"sliding_log", Algorithm::kSlidingLog}});
    if (algorithm) limit.algorithm = *algorithm;
    algorithm_ok = algorithm.has_value();
  }
  const Field* rate_field = fields.get("rate");
  std::optional<Rate> rate;
  if (!rate_field)
    r.error(f.at, "limit is missing required key 'rate' (or 'connections')");
  else
    rate = read_rate(r, *rate_field, "rate");
  if (rate) limit.rate = *rate;

  const Field* burst_field = fields.get("burst");
  if (burst_field && algorithm_ok && limit.algorithm != Algorithm::kTokenBucket) {
    r.error(burst_field->key_at, "burst is only valid with algorithm: token_bucket");
    return rate.has_value();
  }
  if (!rate || !algorithm_ok) return rate.has_value();  // what burst means depends on both
  if (burst_field) {
    auto burst = read_burst(r, *burst_field, rate->unit);
    if (!burst) return true;
    limit.burst = *burst;
  } else if (limit.algorithm == Algorithm::kTokenBucket) {
    limit.burst = rate->amount;
  }
  for (const auto& problem : check_limit(limit, burst_field != nullptr)) {
    bool at_burst = problem.field == LimitProblem::Field::kBurst;
    r.error(at_burst ? burst_field->at : rate_field->at, problem.message);
  }
  return true;
}

bool read_limit(Reader& r, const Field& f, Limit& limit) {
  if (!expect_map(r, f, "limit")) return false;
  Fields fields(r, f.value, kLimitSchema);
  return read_limit_fields(r, f, fields, limit);
}

std::optional<KeyKind> read_key(Reader& r, const Field& f) {
  return choice<KeyKind>(r, f, "key",
                         {{"source", KeyKind::kSourceAddress},
                          {"source_prefix", KeyKind::kSourcePrefix},
                          {"source_port", KeyKind::kSourceAddressPort},
                          {"rule", KeyKind::kRule},
                          {"destination", KeyKind::kDestinationAddress},
                          {"destination_prefix", KeyKind::kDestinationPrefix},
                          {"source_destination", KeyKind::kSourceDestination}});
}

// `prefix: {ipv4: N, ipv6: M}`, for the rule's key or its new-source budget's.
void read_prefix(Reader& r, const Field& f, uint8_t& v4_prefix, uint8_t& v6_prefix) {
  if (!expect_map(r, f, "prefix")) return;
  Fields fields(r, f.value, kPrefixSchema);
  if (const Field* v4 = fields.get("ipv4"))
    if (auto n = integer(r, *v4, "prefix ipv4", 0, 32)) v4_prefix = static_cast<uint8_t>(*n);
  if (const Field* v6 = fields.get("ipv6"))
    if (auto n = integer(r, *v6, "prefix ipv6", 0, 128)) v6_prefix = static_cast<uint8_t>(*n);
}

// `prefix: {ipv6: M}` with a per-source key: the IPv6 prefix one client holds. Shorter than /32
// is a network, not a client; an IPv4 source is keyed by its whole address.
void read_client_prefix(Reader& r, const Field& f, uint8_t& v6_prefix) {
  if (!expect_map(r, f, "prefix")) return;
  Fields fields(r, f.value, kPrefixSchema);
  if (const Field* v4 = fields.get("ipv4"))
    r.error(v4->key_at,
            "a per-source key takes an IPv4 source whole: for a shorter IPv4 prefix use "
            "key: source_prefix");
  if (const Field* v6 = fields.get("ipv6")) {
    auto n = integer(r, *v6, "prefix ipv6", 0, 128);
    if (n && *n < 32)
      r.error(v6->at,
              "prefix ipv6 of a per-source key is what one client holds, /32 to /128, not /" +
                  std::to_string(*n) + ": for a network use key: source_prefix");
    else if (n)
      v6_prefix = static_cast<uint8_t>(*n);
  }
}

// key: and prefix: of a rule or of an item of `limits:`. Returns whether the key was read.
bool read_key_and_prefix(Reader& r, const Fields& fields, KeyKind& key, uint8_t& v4_prefix,
                         uint8_t& v6_prefix) {
  bool key_ok = true;
  if (const Field* k = fields.get("key")) {
    auto kind = read_key(r, *k);
    if (kind) key = *kind;
    key_ok = kind.has_value();
  }
  if (const Field* prefix = fields.get("prefix")) {
    if (key_ok && (key == KeyKind::kSourceAddress || key == KeyKind::kSourceAddressPort))
      read_client_prefix(r, *prefix, v6_prefix);
    else if (key_ok && key != KeyKind::kSourcePrefix && key != KeyKind::kDestinationPrefix)
      r.error(prefix->key_at,
              "prefix is only valid with key: source, source_port, source_prefix or "
              "destination_prefix");
    else
      read_prefix(r, *prefix, v4_prefix, v6_prefix);
  }
  return key_ok;
}

// `limits:`: the first item is the rule's own limit, the others are stacked on it. Returns
// whether the first item's rate was read.
bool read_limits(Reader& r, const Field& f, Rule& rule, bool& key_ok) {
  if (!expect_list(r, f, "limits must be a list of limits, each like {rate: 100/s, key: source}"))
    return false;
  if (f.value.size() == 0 || f.value.size() > kMaxLimits) {
    r.error(f.at, "limits must hold 1 to " + std::to_string(kMaxLimits) + " limits, not " +
                      std::to_string(f.value.size()));
    return false;
  }
  bool first_rate_ok = false;
  std::vector<std::pair<std::string, SourceLocation>> names;
  size_t i = 0;
  for (const auto& node : f.value) {
    // A sequence's iterator_value is its element; the key/value half slicing drops is empty.
    Field item{"limits", node, r.at(node), r.at(node)};  // NOLINT(cppcoreguidelines-slicing)
    bool first = i++ == 0;
    if (!expect_map(r, item, "each item of limits")) continue;
    Fields fields(r, node, kLimitsItemSchema);
    StackedLimit l;
    bool rate_ok = read_limit_fields(r, item, fields, l.limit);
    bool this_key_ok = read_key_and_prefix(r, fields, l.key, l.v4_prefix, l.v6_prefix);
    l.name = key_name(l.key);
    SourceLocation name_at = item.at;
    if (const Field* name = fields.get("name")) {
      name_at = name->at;
      if (auto n = scalar(r, *name, "limit name must be a string")) l.name = *n;
    }
    names.emplace_back(l.name, name_at);
    if (first) {
      first_rate_ok = rate_ok;
      key_ok = this_key_ok;
      rule.limit = l.limit;
      rule.key = l.key;
      rule.v4_prefix = l.v4_prefix;
      rule.v6_prefix = l.v6_prefix;
      rule.limit_name = l.name;
    } else {
      rule.more.push_back(l);
    }
  }
  for (size_t a = 0; a < names.size(); a++)
    for (size_t b = 0; b < a; b++)
      if (names[a].first == names[b].first) {
        r.error(names[a].second, "two limits of the rule are named '" + names[a].first +
                                     "': give each a name: of its own");
        break;
      }
  return first_rate_ok;
}

void read_cluster(Reader& r, const Field& f, Rule& rule, bool limit_rate_ok) {
  if (!expect_map(r, f, "cluster")) return;
  Fields fields(r, f.value, kClusterSchema);
  ClusterLimit cluster;
  bool ok = true;
  if (const Field* rate_field = fields.get("rate")) {
    auto rate = read_rate(r, *rate_field, "cluster rate");
    if (rate) {
      cluster.rate = *rate;
      // The fleet-wide counter and the local one count the same thing.
      if (limit_rate_ok && rate->unit != rule.limit.rate.unit) {
        auto unit = [](Unit u) { return u == Unit::kBytes ? "a byte rate" : "a packet rate"; };
        r.error(rate_field->at, std::string("cluster rate is ") + unit(rate->unit) +
                                    " but limit rate is " + unit(rule.limit.rate.unit) +
                                    "; use the same unit");
      }
    }
    ok = rate.has_value();
  } else {
    r.error(f.at, "cluster is missing required key 'rate'");
    ok = false;
  }
  if (const Field* failure = fields.get("on_redis_failure")) {
    auto v =
        choice<RedisFailure>(r, *failure, "on_redis_failure",
                             {{"open", RedisFailure::kOpen}, {"closed", RedisFailure::kClosed}});
    if (v) cluster.on_redis_failure = *v;
  }
  if (ok) rule.cluster = cluster;
}

void read_new_sources(Reader& r, const Field& f, Rule& rule, bool rule_key_ok) {
  if (!expect_map(r, f, "new_sources")) return;
  Fields fields(r, f.value, kNewSourcesSchema);
  size_t errors_before = r.error_count();
  if (rule_key_ok && rule.key == KeyKind::kRule)
    r.error(f.key_at,
            "new_sources needs a key per source (source, source_prefix, source_port or "
            "source_destination); with key: rule every packet already shares one bucket");
  if (rule_key_ok &&
      (rule.key == KeyKind::kDestinationAddress || rule.key == KeyKind::kDestinationPrefix))
    r.error(f.key_at,
            "new_sources needs a key per source (source, source_prefix, source_port or "
            "source_destination); a destination key's keys are the policy's own addresses");
  NewSources ns;
  const Field* rate_field = fields.get("rate");
  std::optional<Rate> rate;
  if (!rate_field)
    r.error(f.at, "new_sources is missing required key 'rate'");
  else
    rate = read_rate(r, *rate_field, "new_sources rate");
  if (rate && rate->unit != Unit::kPackets) {
    r.error(rate_field->at, "new_sources rate counts new keys: use a rate like 2000/s");
    rate.reset();
  }
  const Field* burst_field = fields.get("burst");
  if (rate) {
    ns.rate = *rate;
    ns.burst = rate->amount;
    if (burst_field)
      if (auto b = read_burst(r, *burst_field, Unit::kPackets)) ns.burst = *b;
    Limit as_bucket{Algorithm::kTokenBucket, ns.rate, ns.burst};
    for (const auto& problem : check_limit(as_bucket, burst_field != nullptr)) {
      bool at_burst = problem.field == LimitProblem::Field::kBurst;
      r.error(at_burst ? burst_field->at : rate_field->at, "new_sources " + problem.message);
    }
  }
  bool key_ok = true;
  if (const Field* key = fields.get("key")) {
    auto k = choice<KeyKind>(r, *key, "new_sources key",
                             {{"rule", KeyKind::kRule}, {"source_prefix", KeyKind::kSourcePrefix}});
    if (k) ns.key = *k;
    key_ok = k.has_value();
  }
  if (const Field* prefix = fields.get("prefix")) {
    if (key_ok && ns.key != KeyKind::kSourcePrefix)
      r.error(prefix->key_at, "prefix is only valid with key: source_prefix");
    else
      read_prefix(r, *prefix, ns.v4_prefix, ns.v6_prefix);
  }
  if (r.error_count() == errors_before) rule.new_sources = ns;
}

// Called once the match and action are read: cookies answer TCP handshakes on known ports, and
// they change what reaches the server, which a dry run must not.
void read_syn_cookies(Reader& r, const Field& f, Rule& rule) {
  auto on = boolean(r, f, "syn_cookies");
  if (!on || !*on) return;
  const Match& m = rule.match;
  if (!m.protocol || *m.protocol != kTcp)
    r.error(f.key_at, "syn_cookies needs match protocol: tcp");
  else if (m.ports.empty())
    r.error(f.key_at, "syn_cookies needs match ports (the stack's SYNPROXY is set up per port)");
  else if (rule.action == Action::kMonitor)
    r.error(f.key_at,
            "syn_cookies cannot be combined with action: monitor (cookies answer SYNs instead of "
            "the server; a dry run must not change that)");
  else
    rule.syn_cookies = true;
}

// Called once the rule is read: a connection limit judges new TCP connections alone, so its
// rule matches only those (protocol tcp, tcp_syn), and what needs a key's state (a block, the
// fleet's count, a budget for new keys) or answers the SYN itself does not go with it.
void check_connection_limit(Reader& r, const Fields& fields, Rule& rule) {
  const size_t n = connection_limits(rule);
  if (n == 0) return;
  if (n > 1) r.error(rule.where, "a rule holds at most one connections limit");
  Match& m = rule.match;
  if (m.protocol && *m.protocol != kTcp)
    r.error(rule.where, "connections counts TCP connections: it needs match protocol: tcp");
  m.protocol = kTcp;
  m.tcp_syn = true;
  for (const char* other : {"block", "cluster", "new_sources", "syn_cookies"})
    if (const Field* f = fields.get(other))
      r.error(f->key_at, std::string(other) + " does not go with a connections limit");
}

}  // namespace

std::vector<const Schema*> rule_schemas() {
  return {&kRuleSchema,   &kLimitSchema,   &kLimitsItemSchema,
          &kPrefixSchema, &kClusterSchema, &kNewSourcesSchema};
}

std::optional<RuleDraft> read_rule(Reader& r, const YAML::Node& node) {
  if (!node.IsMap()) {
    r.error(r.at(node), "each rule must be a mapping with at least name: and limit:");
    return std::nullopt;
  }
  size_t errors_before = r.error_count();
  RuleDraft d;
  Rule& rule = d.rule;
  rule.where = r.at(node);
  rule.priority = kDefaultPriority;
  Fields fields(r, node, kRuleSchema);

  if (const Field* name = fields.get("name")) {
    d.name_at = name->at;
    if (auto n = read_name(r, *name)) rule.name = *n;
  } else {
    r.error(rule.where, "rule is missing required key 'name'");
  }
  if (const Field* priority = fields.get("priority")) {
    if (auto p = integer(r, *priority, "priority", INT32_MIN, INT32_MAX))
      rule.priority = static_cast<int>(*p);
  }
  if (const Field* match = fields.get("match")) read_match(r, *match, d);

  bool limit_rate_ok = false;
  bool key_ok = true;
  if (const Field* limits = fields.get("limits")) {
    for (const char* single : {"limit", "key", "prefix"})
      if (const Field* other = fields.get(single))
        r.error(other->key_at,
                std::string(single) + " does not go with limits: each item of limits has its own");
    limit_rate_ok = read_limits(r, *limits, rule, key_ok);
  } else {
    if (const Field* limit = fields.get("limit")) {
      limit_rate_ok = read_limit(r, *limit, rule.limit);
    } else {
      r.error(rule.where, "rule" + (rule.name.empty() ? "" : " '" + rule.name + "'") +
                              " is missing required key 'limit'");
    }
    key_ok = read_key_and_prefix(r, fields, rule.key, rule.v4_prefix, rule.v6_prefix);
    rule.limit_name = key_name(rule.key);
  }
  if (const Field* action = fields.get("action")) {
    auto a = choice<Action>(r, *action, "action",
                            {{"drop", Action::kDrop}, {"monitor", Action::kMonitor}});
    if (a) rule.action = *a;
  }
  if (const Field* block = fields.get("block")) {
    if (auto text = scalar(r, *block, "block must be a duration like 30s or 10m")) {
      auto ns = parse_duration_ns(*text);
      if (!ns)
        r.error(block->at, ns.error().message);
      else if (*ns > kMaxBlockNs)
        r.error(block->at, "block of " + *text + " is longer than the maximum of 365d");
      else
        rule.block_ns = *ns;
    }
  }
  if (const Field* report = fields.get("report")) {
    if (auto b = boolean(r, *report, "report")) rule.report = *b;
  }
  if (const Field* cluster = fields.get("cluster")) read_cluster(r, *cluster, rule, limit_rate_ok);
  if (const Field* ns = fields.get("new_sources")) read_new_sources(r, *ns, rule, key_ok);
  if (const Field* sc = fields.get("syn_cookies")) read_syn_cookies(r, *sc, rule);
  check_connection_limit(r, fields, rule);
  d.valid = r.error_count() == errors_before;
  return d;
}

}  // namespace rl::policy::detail
