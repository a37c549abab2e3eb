// SPDX-License-Identifier: GPL-2.0-only
#include "cluster/redis_store.h"

#include <hiredis/hiredis.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <exception>
#include <functional>

#include "cluster/scripts.h"
#include "cluster/slots.h"
#include "cluster/sync_batch.h"
#include "common/log.h"

namespace rl::cluster {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kBackoffInitial{100};
constexpr milliseconds kBackoffCap{5000};
constexpr milliseconds kNodeMemory{3'600'000};
// Queued bytes past which a sync sends what it has before formatting the next call.
constexpr size_t kSendAheadBytes = 64 << 10;

const Script* const kAllScripts[] = {&scripts::kSync, &scripts::kHeartbeat, &scripts::kPeers};

std::string ms_str(milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

std::string reply_text(const redisReply& r) { return std::string(r.str, r.len); }

bool is_noscript(const redisReply& r) {
  return r.type == REDIS_REPLY_ERROR && reply_error_kind(reply_text(r)) == ErrorKind::kNoScript;
}

// The command on `line` of the script whose SHA1 is `sha1` ("" if that is not one of ours).
std::string script_command(std::string_view sha1, size_t line) {
  for (const Script* s : kAllScripts) {
    if (s->sha1 != sha1) continue;
    std::string_view text = s->text;
    for (size_t l = 1; l < line && !text.empty(); l++) {
      size_t nl = text.find('\n');
      text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    }
    text = text.substr(0, text.find('\n'));
    constexpr std::string_view kCall = "redis.call('";
    size_t at = text.find(kCall);
    if (at == std::string_view::npos) return "";
    std::string name(
        text.substr(at + kCall.size(), text.find('\'', at + kCall.size()) - at - kCall.size()));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return name;
  }
  return "";
}

// An error reply to a call, as an error of its kind.
StoreError reply_error(const redisReply& r, const std::string& what) {
  std::string text = reply_text(r);
  ErrorKind kind = reply_error_kind(text);
  // Redis 7.0 names the script's line, not the command: that line of our script names it.
  if (auto where = script_refusal(text)) {
    std::string command = script_command(where->sha1, where->line);
    if (!command.empty())
      text = "NOPERM the ACL user may not run '" + command + "' (in rl's script): " + text;
  }
  return StoreError{kind, 0, what + ": " + text};
}

StoreError protocol_error(const std::string& what) {
  return StoreError{ErrorKind::kProtocol, EPROTO, what};
}

StoreError out_of_memory(const std::string& what, const std::exception& e) {
  return StoreError{ErrorKind::kResource, ENOMEM, what + ": " + e.what()};
}

StoreStatus validate(const RedisOptions& o) {
  auto invalid = [](const std::string& m) {
    return StoreError{ErrorKind::kInvalid, EINVAL, "redis options: " + m};
  };
  if (!o.cluster_nodes.empty()) {
    if (!o.sentinel.sentinels.empty()) return invalid("both sentinels and cluster nodes");
    if (o.db != 0) return invalid("db " + std::to_string(o.db) + ": a Redis Cluster has db 0 only");
  } else if (!o.sentinel.sentinels.empty()) {
    if (o.sentinel.master_name.empty()) return invalid("sentinels without a master name");
    if (!o.sentinel.user.empty() && o.sentinel.password.empty())
      return invalid("sentinel user '" + o.sentinel.user + "' needs its password");
  } else if (o.unix_socket.empty()) {
    if (o.host.empty()) return invalid("host is empty and no unix_socket is set");
    if (o.port < 1 || o.port > 65535) return invalid("port " + std::to_string(o.port));
  }
  if (o.db < 0) return invalid("db " + std::to_string(o.db));
  if (!o.user.empty() && o.password.empty())
    return invalid("user '" + o.user + "' needs its password");
  if (o.connect_timeout.count() < 1) return invalid("connect_timeout must be at least 1 ms");
  if (o.command_timeout.count() < 1) return invalid("command_timeout must be at least 1 ms");
  if (o.key_prefix.empty()) return invalid("key_prefix is empty");
  if (o.key_prefix.find_first_of("{}") != std::string::npos)
    return invalid("key_prefix contains '{' or '}', which would move the hash tag");
  if (o.spread < 1 || o.spread > 8192) return invalid("spread " + std::to_string(o.spread));
  if (o.tls.enabled && o.cluster_nodes.empty() && o.sentinel.sentinels.empty() &&
      !o.unix_socket.empty())
    return invalid("TLS is for TCP: unix_socket '" + o.unix_socket + "' cannot use it");
  if (!o.tls.enabled && (!o.tls.ca_file.empty() || !o.tls.cert_file.empty() ||
                         !o.tls.key_file.empty() || !o.tls.server_name.empty()))
    return invalid("TLS files or a server name are set but TLS is off");
  return StoreStatus::Ok();
}

uint64_t backoff_seed(const void* self) {
  // Nodes that lose Redis together must not retry in step: mix in what differs between them.
  auto t = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return t ^ (static_cast<uint64_t>(getpid()) << 32) ^ std::hash<const void*>{}(self);
}

}  // namespace

RedisStore::RedisStore(const RedisOptions& opts, std::shared_ptr<const TlsContext> tls)
    : opts_(opts),
      tls_(std::move(tls)),
      endpoint_{opts.host, opts.port, opts.unix_socket},
      nodes_key_(opts.key_prefix + ":nodes"),
      backoff_(kBackoffInitial, kBackoffCap, backoff_seed(this)) {}

StoreResult<std::unique_ptr<RedisStore>> RedisStore::create(const RedisOptions& opts,
                                                            std::shared_ptr<const TlsContext> tls) {
  try {
    if (StoreStatus s = validate(opts); !s) return s.error();
    if (!tls) {
      auto made = TlsContext::create_if_enabled(opts.tls);
      if (!made) return made.error();
      tls = std::move(*made);
    }
    return std::unique_ptr<RedisStore>(new RedisStore(opts, std::move(tls)));
  } catch (const std::exception& e) {
    return out_of_memory("redis store", e);
  }
}

StoreStatus RedisStore::check_connection() {
  try {
    // No calls: the round trip carries only the handshake.
    if (auto replies = run({}, "connect"); !replies) return replies.error();
    return StoreStatus::Ok();
  } catch (const std::exception& e) {
    return out_of_memory("redis store: connect", e);
  }
}

StoreStatus RedisStore::check() {
  if (StoreStatus s = check_connection(); !s) return s;
  // The nodes key: the scripts' permissions on rl's keys, and, from a Redis Cluster node named
  // as one server, a MOVED when another node serves the key.
  if (auto p = peers(milliseconds(0)); !p) return p.error();
  return StoreStatus::Ok();
}

StoreResult<std::unique_ptr<RedisStore>> RedisStore::connect(const RedisOptions& opts) {
  auto store = create(opts);
  if (!store) return store.error();
  if (StoreStatus s = (*store)->check_connection(); !s) return s.error();
  return store;
}

milliseconds RedisStore::backoff_remaining() const {
  return conn_ ? milliseconds(0) : backoff_.remaining(Clock::now());
}

StoreStatus RedisStore::find_master() {
  const size_t n = opts_.sentinel.sentinels.size();
  auto master = resolve_master(opts_.sentinel, tls_.get(), next_sentinel_, opts_.connect_timeout);
  if (!master) {
    next_sentinel_ = (next_sentinel_ + 1) % n;
    return master.error();
  }
  if (master_known_ && (master->host != endpoint_.host || master->port != endpoint_.port)) {
    stats_.masters_changed++;
    log::warn(
        "redis master changed",
        {{"master", opts_.sentinel.master_name}, {"from", endpoint_.str()}, {"to", master->str()}});
  }
  endpoint_ = *master;
  master_known_ = true;
  return StoreStatus::Ok();
}

std::string RedisStore::server() const {
  const char* tls = tls_ ? " over TLS" : "";
  if (opts_.sentinel.sentinels.empty()) return endpoint_.str() + tls;
  return master_known_ ? endpoint_.str() + " (master '" + opts_.sentinel.master_name + "')" + tls
                       : "master '" + opts_.sentinel.master_name + "' not found yet";
}

StoreError RedisStore::reply_failed(const redisReply& r, const std::string& what) {
  StoreError e = reply_error(r, endpoint_.str() + ": " + what);
  if (e.kind == ErrorKind::kReadOnly) return broken(e);
  // MOVED or ASK from a server configured as one: a Redis Cluster node, which serves only its
  // slots. Every call that reaches another slot fails so, so it is a setting to mend.
  if (e.kind == ErrorKind::kRedirect && !opts_.cluster_node)
    e.message += " (" + endpoint_.str() +
                 " is a Redis Cluster node: name the cluster's nodes in redis_cluster_nodes, not "
                 "redis_host)";
  return e;
}

std::string RedisStore::sentinels_text() const {
  std::string s;
  for (const auto& e : opts_.sentinel.sentinels) s += (s.empty() ? "" : ",") + e.addr();
  return "sentinels " + s;
}

StoreError RedisStore::broken(const StoreError& e, const std::string& where) {
  bool was_connected = conn_.has_value() && handshake_.empty();
  conn_.reset();
  handshake_.clear();
  connected_ = false;
  last_error_ = e;
  last_where_ = where.empty() ? endpoint_.str() : where;
  auto now = Clock::now();
  backoff_.failed(now);
  // A connection that worked and broke is news each time; attempts that keep failing are one
  // run of failures (common/failure_log.h).
  if (was_connected)
    log::warn("redis connection lost", {{"endpoint", last_where_}, {"error", e.str()}});
  log::write(conn_log_.failed(now, to_string(e.kind), e.str(), {{"endpoint", last_where_}}));
  return e;
}

StoreStatus RedisStore::open_connection(Clock::time_point now) {
  if (!backoff_.ready(now)) {
    // Failing fast for the last failure's reason: it is still why there is no connection.
    return StoreError{last_error_.kind, last_error_.err,
                      last_where_ + ": not connected, next attempt in " +
                          ms_str(backoff_.remaining(now)) +
                          "; last failure: " + last_error_.message};
  }
  stats_.connect_attempts++;
  if (!opts_.sentinel.sentinels.empty())
    if (StoreStatus s = find_master(); !s) return broken(s.error(), sentinels_text());
  auto conn = RedisConn::connect(endpoint_, opts_.connect_timeout, tls_.get());
  if (!conn) return broken(conn.error());
  conn_.emplace(std::move(*conn));
  handshake_.clear();
  // These ride ahead of the first calls, in the same round trip. SCRIPT LOAD makes the
  // EVALSHAs behind them find their script even on a server that just restarted.
  auto add = [&](const std::vector<std::string_view>& argv, HandshakeStep step) -> StoreStatus {
    if (StoreStatus s = conn_->append(argv); !s) return s;
    handshake_.push_back(std::move(step));
    return StoreStatus::Ok();
  };
  std::string db = std::to_string(opts_.db);
  StoreStatus s;
  if (!opts_.user.empty())
    s = add({"AUTH", opts_.user, opts_.password},
            {"AUTH " + opts_.user, nullptr, ErrorKind::kAuth});
  else if (!opts_.password.empty())
    s = add({"AUTH", opts_.password}, {"AUTH", nullptr, ErrorKind::kAuth});
  // A sentinel's answer may be a moment old: the server itself must say it is the master.
  if (s && !opts_.sentinel.sentinels.empty())
    s = add({"ROLE"}, {"ROLE", nullptr, ErrorKind::kServer, true});
  if (s && opts_.db != 0) s = add({"SELECT", db}, {"SELECT " + db});
  for (const Script* script : kAllScripts) {
    if (!s) break;
    s = add({"SCRIPT", "LOAD", script->text}, {"SCRIPT LOAD " + std::string(script->name), script});
  }
  if (!s) return broken(s.error());
  return StoreStatus::Ok();
}

StoreStatus RedisStore::queue(const ScriptCall& call, bool by_sha) {
  std::vector<std::string_view> argv;
  argv.reserve(3 + call.keys.size() + call.args.size());
  std::string nkeys = std::to_string(call.keys.size());
  argv.emplace_back(by_sha ? "EVALSHA" : "EVAL");
  argv.emplace_back(by_sha ? call.script->sha1 : call.script->text);
  argv.emplace_back(nkeys);
  argv.insert(argv.end(), call.keys.begin(), call.keys.end());
  argv.insert(argv.end(), call.args.begin(), call.args.end());
  if (asking_)
    if (StoreStatus s = conn_->append({"ASKING"}); !s) return s;
  return conn_->append(argv);
}

// With ASKING ahead of each call, every other reply is ASKING's: the calls' are the rest.
static std::vector<Reply> without_asking(std::vector<Reply>& replies, size_t from, bool asking) {
  std::vector<Reply> out;
  out.reserve(replies.size() - std::min(from, replies.size()));
  for (size_t i = from; i < replies.size(); i++)
    if (!asking || (i - from) % 2 == 1) out.push_back(std::move(replies[i]));
  return out;
}

std::optional<StoreError> RedisStore::check_handshake(const Exchange& ex) const {
  for (size_t i = 0; i < handshake_.size(); i++) {
    if (i >= ex.replies.size()) return std::nullopt;  // the exchange failure says why
    const redisReply& r = *ex.replies[i];
    const HandshakeStep& step = handshake_[i];
    if (r.type == REDIS_REPLY_ERROR) {
      StoreError e = reply_error(r, endpoint_.str() + ": " + step.what);
      if (e.kind == ErrorKind::kServer) e.kind = step.refused;
      return e;
    }
    if (step.must_be_master &&
        (r.type != REDIS_REPLY_ARRAY || r.elements == 0 ||
         r.element[0]->type != REDIS_REPLY_STRING || reply_text(*r.element[0]) != "master"))
      return StoreError{ErrorKind::kReadOnly, 0,
                        endpoint_.str() + ": not the master (a failover under way?)"};
    if (step.script && (r.type != REDIS_REPLY_STRING || reply_text(r) != step.script->sha1))
      return protocol_error(endpoint_.str() + ": " + step.what + ": the server's SHA1 is not " +
                            std::string(step.script->sha1));
  }
  return std::nullopt;
}

StoreResult<std::vector<Reply>> RedisStore::run(const std::vector<ScriptCall>& calls,
                                                const std::string& what) {
  auto deadline = begin_round(what);
  if (!deadline) return deadline.error();
  for (const ScriptCall& c : calls)
    if (StoreStatus s = send_call(c, *deadline, what); !s) return s.error();
  return end_round(calls, *deadline, what);
}

// Once a second, one sentinel is asked whether the master moved. A failover that demotes a live
// master (SENTINEL FAILOVER, a healed split) leaves it accepting writes until the sentinels
// reconfigure it, and those writes are lost with its resync: the check cuts that window to
// about a second after the sentinels name the promoted replica.
void RedisStore::recheck_master(Clock::time_point now) {
  if (opts_.sentinel.sentinels.empty() || now < next_recheck_) return;
  next_recheck_ = now + kSentinelRecheck;
  next_sentinel_ = (next_sentinel_ + 1) % opts_.sentinel.sentinels.size();
  auto master =
      resolve_master(opts_.sentinel, tls_.get(), next_sentinel_, opts_.connect_timeout, 1);
  if (!master || (master->host == endpoint_.host && master->port == endpoint_.port)) return;
  conn_.reset();  // no backoff: the next connection asks the sentinels again
  handshake_.clear();
  connected_ = false;
}

StoreResult<RedisStore::Clock::time_point> RedisStore::begin_round(const std::string& what) {
  if (conn_) recheck_master(Clock::now());
  if (!conn_) {
    if (StoreStatus s = open_connection(Clock::now()); !s) return s.error().wrap(what);
  }
  // One deadline for the round's every exchange, however many: with the connect timeout, that
  // bounds the call.
  return Clock::now() + opts_.command_timeout;
}

StoreStatus RedisStore::send_call(const ScriptCall& call, Clock::time_point deadline,
                                  const std::string& what) {
  if (StoreStatus s = queue(call, true); !s) return broken(s.error()).wrap(what);
  // Send ahead: Redis runs this call while the next ones are made. Still one round trip: no
  // reply is awaited before the last command is out.
  if (conn_->unsent() >= kSendAheadBytes)
    if (auto e = conn_->send(deadline)) return broken(*e).wrap(what);
  return StoreStatus::Ok();
}

StoreResult<std::vector<Reply>> RedisStore::end_round(const std::vector<ScriptCall>& calls,
                                                      Clock::time_point deadline,
                                                      const std::string& what) {
  Exchange ex = conn_->exchange(deadline);
  stats_.round_trips++;
  size_t handshake = handshake_.size();
  if (auto err = check_handshake(ex)) return broken(*err).wrap(what);
  if (ex.failure) return broken(*ex.failure).wrap(what);
  if (handshake > 0) {
    stats_.connects++;
    log::write(conn_log_.succeeded(Clock::now()));
    handshake_.clear();
  }
  std::vector<Reply> replies = without_asking(ex.replies, handshake, asking_);

  // NOSCRIPT: the server lost its script cache since we connected (SCRIPT FLUSH). EVAL sends
  // the script along and caches it again; a call refused with NOSCRIPT never ran.
  std::vector<size_t> missing;
  for (size_t i = 0; i < replies.size(); i++)
    if (is_noscript(*replies[i])) missing.push_back(i);
  if (!missing.empty()) {
    for (size_t i : missing)
      if (StoreStatus s = queue(calls[i], false); !s) return broken(s.error()).wrap(what);
    Exchange again = conn_->exchange(deadline);
    stats_.round_trips++;
    stats_.script_reloads += missing.size();
    if (again.failure) return broken(*again.failure).wrap(what);
    std::vector<Reply> reloaded = without_asking(again.replies, 0, asking_);
    for (size_t j = 0; j < missing.size(); j++) replies[missing[j]] = std::move(reloaded[j]);
  }
  connected_ = true;
  backoff_.succeeded();
  return replies;
}

void RedisStore::send_ready(Round& round, const SyncBatch& batch, size_t i) {
  if (round.failed) return;
  round.sent.push_back(i);
  if (!round.deadline) {
    auto d = begin_round(round.what);
    if (!d) {
      round.failed = d.error();
      return;
    }
    round.deadline = *d;
    round.start = Clock::now();  // the round trip runs from the first call out
  }
  if (StoreStatus s = send_call(ScriptCall{&scripts::kSync, batch.keys(i), batch.args(i)},
                                *round.deadline, round.what);
      !s)
    round.failed = s.error();
}

StoreResult<SyncReply> RedisStore::finish_sync(Round& round, const SyncBatch& batch) {
  if (round.failed) return *round.failed;
  SyncReply out;
  out.rejected = batch.invalid();
  out.rejected_reason = batch.invalid_reason();
  if (batch.calls().empty()) return out;
  const auto& sent = round.sent;
  std::vector<ScriptCall> calls;  // as sent, for end_round to resend any after NOSCRIPT
  calls.reserve(sent.size());
  for (size_t i : sent) calls.push_back(ScriptCall{&scripts::kSync, batch.keys(i), batch.args(i)});
  auto replies = end_round(calls, *round.deadline, round.what);
  if (!replies) return replies.error();
  const auto start = round.start;
  out.round_trip = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
  for (size_t k = 0; k < sent.size(); k++) {
    const size_t i = sent[k];
    const redisReply& r = *(*replies)[k];
    const auto& call = batch.calls()[i];
    if (r.type == REDIS_REPLY_ERROR) {
      if (settle_elsewhere(r, call.indices, out)) continue;
      // The whole sync failed, not these deltas: for want of a permission, on a replica, or on
      // a Redis Cluster node named as one server (a redirect reaches here only then). They stay
      // pending.
      StoreError e = reply_failed(r, "sync of rule '" + call.rule + "'");
      if (e.kind == ErrorKind::kPermission || e.kind == ErrorKind::kAuth ||
          e.kind == ErrorKind::kReadOnly || e.kind == ErrorKind::kRedirect)
        return e;
      // The script reads every key before writing any, so a refused call applied nothing.
      if (out.rejected_reason.empty())
        out.rejected_reason = "rule '" + call.rule + "': " + reply_text(r);
      out.rejected.insert(out.rejected.end(), call.indices.begin(), call.indices.end());
      continue;
    }
    if (StoreStatus s = batch.read_reply(i, r, out); !s) return s.error().wrap("sync");
  }
  if (!out.rejected.empty()) {
    std::sort(out.rejected.begin(), out.rejected.end());
    log::warn("redis refused deltas", {{"endpoint", endpoint_.str()},
                                       {"deltas", std::to_string(out.rejected.size())},
                                       {"reason", out.rejected_reason}});
  }
  std::sort(out.over.begin(), out.over.end(),
            [](const OverLimit& a, const OverLimit& b) { return a.index < b.index; });
  return out;
}

bool RedisStore::settle_elsewhere(const redisReply& r, const std::vector<size_t>& indices,
                                  SyncReply& out) const {
  if (!opts_.cluster_node) return false;
  const std::string text = reply_text(r);
  if (auto to = parse_redirect(text)) {
    out.redirected.push_back(
        {to->ask, to->host.empty() ? endpoint_.host : to->host, to->port, indices});
    return true;
  }
  if (reply_error_kind(text) != ErrorKind::kClusterDown) return false;
  out.retry.insert(out.retry.end(), indices.begin(), indices.end());
  return true;
}

StoreResult<SyncReply> RedisStore::sync(const std::vector<KeyDelta>& deltas) {
  try {
    // Each call goes out as soon as the batch has made it, so Redis runs the first calls while
    // the rest of a large sync is still being grouped. The round begins with the first call:
    // a sync with nothing to send connects to nothing.
    Round round("sync of " + std::to_string(deltas.size()) + " key(s)");
    SyncBatch batch(
        opts_.key_prefix, deltas, [&](const SyncBatch& b, size_t i) { send_ready(round, b, i); },
        opts_.spread);
    return finish_sync(round, batch);
  } catch (const std::exception& e) {
    return out_of_memory("sync", e);
  }
}

// The deltas live in a deque, which never moves them: the batch keeps views of their texts.
class RedisStore::Stream final : public SyncStream {
 public:
  Stream(RedisStore& store, bool asking)
      : store_(store),
        round_("sync"),
        batch_(
            store.opts_.key_prefix,
            [this](const SyncBatch& b, size_t i) { store_.send_ready(round_, b, i); },
            store.opts_.spread) {
    store_.asking_ = asking;
  }

  // Calls sent and their replies never read would answer the next exchange's commands: a
  // stream given up half way drops the connection.
  ~Stream() override {
    if (!finished_ && round_.deadline && !round_.failed)
      store_.broken(
          StoreError{ErrorKind::kConnectionLost, ECANCELED, "sync abandoned with calls in flight"});
    store_.asking_ = false;
  }

  void flush() override {
    try {
      batch_.finish();
      store_.flush_round(round_);
    } catch (const std::exception& e) {
      round_.failed = out_of_memory("sync", e);
    }
  }

  void add(KeyDelta d) override {
    deltas_.push_back(std::move(d));
    batch_.add(deltas_.back(), deltas_.size() - 1);
  }
  const std::deque<KeyDelta>& deltas() const override { return deltas_; }
  StoreResult<SyncReply> finish() override {
    finished_ = true;
    try {
      batch_.finish();
      auto reply = store_.finish_sync(round_, batch_);
      store_.asking_ = false;
      return reply;
    } catch (const std::exception& e) {
      store_.asking_ = false;
      return out_of_memory("sync", e);
    }
  }

 private:
  RedisStore& store_;
  Round round_;
  std::deque<KeyDelta> deltas_;
  SyncBatch batch_;
  bool finished_ = false;
};

std::unique_ptr<SyncStream> RedisStore::begin_sync() {
  return std::make_unique<Stream>(*this, false);
}

std::unique_ptr<SyncStream> RedisStore::begin_asking_sync() {
  return std::make_unique<Stream>(*this, true);
}

void RedisStore::flush_round(Round& round) {
  if (round.failed || !round.deadline || !conn_) return;
  if (auto e = conn_->send(*round.deadline)) round.failed = broken(*e).wrap(round.what);
}

StoreStatus RedisStore::heartbeat(const std::string& node) {
  try {
    std::string keep = std::to_string(kNodeMemory.count());
    auto replies = run({ScriptCall{&scripts::kHeartbeat, {nodes_key_}, {node, keep}}}, "heartbeat");
    if (!replies) return replies.error();
    const redisReply& r = *(*replies)[0];
    if (r.type == REDIS_REPLY_ERROR) return reply_failed(r, "heartbeat");
    if (r.type != REDIS_REPLY_INTEGER)
      return protocol_error("heartbeat: unexpected reply type " + std::to_string(r.type));
    return StoreStatus::Ok();
  } catch (const std::exception& e) {
    return out_of_memory("heartbeat", e);
  }
}

StoreResult<std::vector<Peer>> RedisStore::peers(milliseconds within) {
  try {
    std::string back = std::to_string(std::max<int64_t>(within.count(), 0));
    auto replies = run({ScriptCall{&scripts::kPeers, {nodes_key_}, {back}}}, "peers");
    if (!replies) return replies.error();
    const redisReply& r = *(*replies)[0];
    if (r.type == REDIS_REPLY_ERROR) return reply_failed(r, "peers");
    auto bad = [](const std::string& m) { return protocol_error("peers: unexpected reply: " + m); };
    if (r.type != REDIS_REPLY_ARRAY || r.elements < 1 || r.elements % 2 != 1)
      return bad("not an array of 2n+1 elements");
    std::vector<Peer> out;
    for (size_t i = 1; i + 1 < r.elements; i += 2) {
      const redisReply& node = *r.element[i];
      const redisReply& seen = *r.element[i + 1];
      if (node.type != REDIS_REPLY_STRING || seen.type != REDIS_REPLY_INTEGER || seen.integer < 0)
        return bad("element " + std::to_string(i));
      out.push_back(Peer{reply_text(node), static_cast<uint64_t>(seen.integer)});
    }
    return out;
  } catch (const std::exception& e) {
    return out_of_memory("peers", e);
  }
}

}  // namespace rl::cluster
