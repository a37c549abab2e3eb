// SPDX-License-Identifier: GPL-2.0-only
#include "redis_server.h"

#include <hiredis/hiredis.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>

#include "common/sigpipe.h"
#include "ports.h"

namespace rl::testing {
namespace {

using namespace std::chrono_literals;

RedisValue copy(const redisReply& r) {
  RedisValue v;
  switch (r.type) {
    case REDIS_REPLY_STRING:
      v.type = RedisValue::Type::kString;
      break;
    case REDIS_REPLY_STATUS:
      v.type = RedisValue::Type::kStatus;
      break;
    case REDIS_REPLY_ERROR:
      v.type = RedisValue::Type::kError;
      break;
    case REDIS_REPLY_INTEGER:
      v.type = RedisValue::Type::kInteger;
      v.integer = r.integer;
      break;
    case REDIS_REPLY_ARRAY:
      v.type = RedisValue::Type::kArray;
      for (size_t i = 0; i < r.elements; i++) v.elements.push_back(copy(*r.element[i]));
      break;
    default:
      break;
  }
  if (r.str) v.str.assign(r.str, r.len);
  return v;
}

}  // namespace

std::string RedisServer::binary() {
#ifdef RL_REDIS_SERVER
  return RL_REDIS_SERVER;
#else
  return "";
#endif
}

Result<std::unique_ptr<RedisServer>> RedisServer::start(const RedisServerOptions& opts) {
  if (binary().empty()) return Error{ENOENT, "redis-server was not found at build time"};
  std::unique_ptr<RedisServer> s(new RedisServer(opts));
  auto dir = TempDir::create("rl-redis-");
  if (!dir) return dir.error();
  s->dir_.emplace(std::move(*dir));
  if (opts.unix_socket || !opts.netns.empty() || !opts.tls_cert.empty())
    s->socket_ = s->dir() + "/redis.sock";
  // A free port can be taken between our probe and Redis' bind: try a few.
  Error last{0, "no attempt"};
  for (int attempt = 0; attempt < 5; attempt++) {
    if (!opts.unix_socket) {
      auto port = opts.cluster ? free_loopback_port_pair(10000) : free_loopback_port();
      if (!port) return port.error();
      s->port_ = *port;
    }
    Status st = s->spawn();
    if (st) return s;
    last = st.error();
    s->kill();
  }
  return last;
}

RedisServer::~RedisServer() { kill(); }  // then dir_ goes, with the log and the socket

Status RedisServer::spawn() {
  if (opts_.sentinel_for) {
    // A sentinel rewrites its configuration file: each start writes a fresh one.
    const std::string conf = dir() + "/sentinel.conf";
    std::ofstream out(conf);
    out << "port " << port_ << "\nbind " << opts_.host << "\ndir " << dir() << "\nlogfile " << dir()
        << "/redis.log\ndaemonize no\n"
        << "sentinel monitor " << kSentinelMaster << " " << opts_.host << " " << opts_.sentinel_for
        << " 2\n"
        << "sentinel down-after-milliseconds " << kSentinelMaster << " 1000\n"
        << "sentinel failover-timeout " << kSentinelMaster << " 5000\n";
    if (!socket_.empty()) out << "unixsocket " << socket_ << "\nunixsocketperm 700\n";
    if (!opts_.netns.empty()) out << "protected-mode no\n";
    if (!opts_.tls_cert.empty())
      out << "port 0\ntls-port " << port_ << "\ntls-cert-file " << opts_.tls_cert
          << "\ntls-key-file " << opts_.tls_key << "\ntls-ca-cert-file " << opts_.tls_ca
          << "\ntls-auth-clients " << (opts_.tls_auth_clients ? "yes" : "no")
          << "\ntls-replication yes\n";
    out.close();
    auto p = Process::spawn(in_netns({binary(), conf, "--sentinel"}));
    if (!p) return p.error();
    process_.emplace(std::move(*p));
    return wait_ready();
  }
  std::vector<std::string> argv = {
      binary(), "--bind", opts_.host, "--port", std::to_string(port_), "--dir", dir(), "--save", "",
      "--appendonly", "no", "--protected-mode",
      // Protected mode refuses every peer but loopback without a
      // password; a lab namespace has no route out.
      opts_.netns.empty() ? "yes" : "no", "--daemonize", "no", "--logfile", dir() + "/redis.log"};
  if (!socket_.empty()) {
    argv.insert(argv.end(), {"--unixsocket", socket_, "--unixsocketperm", "700"});
  }
  if (!opts_.password.empty()) argv.insert(argv.end(), {"--requirepass", opts_.password});
  if (opts_.replica_of)
    argv.insert(argv.end(), {"--replicaof", opts_.host, std::to_string(opts_.replica_of)});
  if (opts_.cluster)
    argv.insert(argv.end(), {"--cluster-enabled", "yes", "--cluster-config-file",
                             dir() + "/nodes.conf", "--cluster-node-timeout", "1000"});
  if (!opts_.tls_cert.empty()) {
    // Later options win: the plain port given above is closed.
    argv.insert(argv.end(), {"--port", "0", "--tls-port", std::to_string(port_), "--tls-cert-file",
                             opts_.tls_cert, "--tls-key-file", opts_.tls_key, "--tls-ca-cert-file",
                             opts_.tls_ca, "--tls-auth-clients",
                             opts_.tls_auth_clients ? "yes" : "no", "--tls-replication", "yes"});
    if (opts_.cluster) argv.insert(argv.end(), {"--tls-cluster", "yes"});
  }
  auto p = Process::spawn(in_netns(argv));
  if (!p) return p.error();
  process_.emplace(std::move(*p));
  return wait_ready();
}

std::vector<std::string> RedisServer::in_netns(std::vector<std::string> argv) const {
  if (opts_.netns.empty()) return argv;
  argv.insert(argv.begin(), {"ip", "netns", "exec", opts_.netns});
  return argv;
}

Status RedisServer::wait_ready() {
  // Up to 5 s, polling every 20 ms.
  for (int i = 0; i < 250; i++) {
    if (!running()) return Error{0, "redis-server exited during start-up: " + log()};
    auto pong = command({"PING"});
    if (pong && pong->type == RedisValue::Type::kStatus) return Status::Ok();
    std::this_thread::sleep_for(20ms);
  }
  return Error{ETIMEDOUT, "redis-server did not answer PING within 5 s: " + log()};
}

bool RedisServer::running() { return process_ && process_->running(); }

void RedisServer::kill() {
  close_admin();
  process_.reset();  // SIGKILL to its group, then reaped
}

Status RedisServer::restart() {
  kill();
  // The port was ours a moment ago; Redis binds with SO_REUSEADDR, so TIME_WAIT is no bar,
  // but allow a few tries.
  Error last{0, "no attempt"};
  for (int attempt = 0; attempt < 5; attempt++) {
    if (!socket_.empty()) ::unlink(socket_.c_str());
    Status st = spawn();
    if (st) return st;
    last = st.error();
    kill();
    std::this_thread::sleep_for(100ms);
  }
  return last;
}

void RedisServer::pause() {
  close_admin();
  if (process_) process_->signal(SIGSTOP);
}

void RedisServer::resume() {
  if (process_) process_->signal(SIGCONT);
}

void RedisServer::close_admin() {
  if (admin_) redisFree(admin_);
  admin_ = nullptr;
}

Result<RedisValue> RedisServer::command(const std::vector<std::string>& argv) {
  // A promotion or CLIENT KILL closes this connection; the next write to it must fail, not kill
  // the test.
  SigpipeBlock guard;
  auto call = [&](const std::vector<std::string>& a) -> Result<RedisValue> {
    std::vector<const char*> ptrs;
    std::vector<size_t> lens;
    for (const auto& s : a) {
      ptrs.push_back(s.data());
      lens.push_back(s.size());
    }
    auto* r = static_cast<redisReply*>(
        redisCommandArgv(admin_, static_cast<int>(a.size()), ptrs.data(), lens.data()));
    if (!r) {
      Error e{0, "redis test client: " + a[0] + ": " + std::string(admin_->errstr)};
      close_admin();
      return e;
    }
    RedisValue v = copy(*r);
    freeReplyObject(r);
    return v;
  };
  if (!admin_) {
    timeval tv{2, 0};
    admin_ = socket_.empty() ? redisConnectWithTimeout("127.0.0.1", port_, tv)
                             : redisConnectUnixWithTimeout(socket_.c_str(), tv);
    if (!admin_) return Error{ENOMEM, "redis test client: connect"};
    if (admin_->err) {
      Error e{0, "redis test client: connect: " + std::string(admin_->errstr)};
      close_admin();
      return e;
    }
    redisSetTimeout(admin_, tv);
    if (!opts_.password.empty()) {
      auto auth = call({"AUTH", opts_.password});
      if (!auth) return auth.error();
      if (auth->is_error()) {
        close_admin();
        return Error{EACCES, "redis test client: AUTH: " + auth->str};
      }
    }
  }
  return call(argv);
}

Result<std::map<std::string, std::string>> RedisServer::commandstat(const std::string& name) {
  auto info = command({"INFO", "commandstats"});
  if (!info) return info.error();
  std::map<std::string, std::string> fields;
  std::istringstream in(info->str);
  std::string line, want = "cmdstat_" + name + ":";
  while (std::getline(in, line)) {
    if (line.rfind(want, 0) != 0) continue;
    std::istringstream kv(line.substr(want.size()));
    std::string item;
    while (std::getline(kv, item, ',')) {
      auto eq = item.find('=');
      if (eq != std::string::npos) fields[item.substr(0, eq)] = item.substr(eq + 1);
    }
  }
  return fields;
}

Result<uint64_t> RedisServer::command_calls(const std::string& name) {
  auto f = commandstat(name);
  if (!f) return f.error();
  auto it = f->find("calls");
  return it == f->end() ? 0 : std::stoull(it->second);
}

Result<uint64_t> RedisServer::command_usec(const std::string& name) {
  auto f = commandstat(name);
  if (!f) return f.error();
  auto it = f->find("usec");
  return it == f->end() ? 0 : std::stoull(it->second);
}

Result<uint64_t> RedisServer::info_number(const std::string& section, const std::string& field) {
  auto info = command({"INFO", section});
  if (!info) return info.error();
  std::istringstream in(info->str);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1));
  return Error{ENOENT, "INFO " + section + " has no " + field};
}

Result<double> RedisServer::cpu_seconds() {
  auto info = command({"INFO", "cpu"});
  if (!info) return info.error();
  std::istringstream in(info->str);
  std::string line;
  double total = 0;
  int found = 0;
  while (std::getline(in, line)) {
    for (std::string_view field : {"used_cpu_user:", "used_cpu_sys:"}) {
      if (line.rfind(field, 0) != 0) continue;
      total += std::stod(line.substr(field.size()));
      found++;
    }
  }
  if (found != 2) return Error{ENOENT, "INFO cpu has no used_cpu_user and used_cpu_sys"};
  return total;
}

Result<uint64_t> RedisServer::time_ms() {
  auto t = command({"TIME"});
  if (!t) return t.error();
  if (t->type != RedisValue::Type::kArray || t->elements.size() != 2)
    return Error{EPROTO, "TIME: unexpected reply"};
  return std::stoull(t->elements[0].str) * 1000 + std::stoull(t->elements[1].str) / 1000;
}

std::string RedisServer::log() const {
  std::string text = read_text(dir() + "/redis.log");
  // The tail is where the reason is.
  return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
}

bool sentinels_ready(RedisServer& replica,
                     const std::vector<std::unique_ptr<RedisServer>>& sentinels,
                     std::string* waiting) {
  auto link = replica.command({"INFO", "replication"});
  if (!link || link->str.find("master_link_status:up") == std::string::npos) {
    if (waiting) *waiting = "the replica's link: " + (link ? link->str : link.error().str());
    return false;
  }
  for (const auto& s : sentinels) {
    auto others = s->command({"SENTINEL", "sentinels", kSentinelMaster});
    auto replicas = s->command({"SENTINEL", "replicas", kSentinelMaster});
    if (!others || others->elements.size() != sentinels.size() - 1 || !replicas ||
        replicas->elements.size() != 1) {
      if (waiting) *waiting = "sentinel " + std::to_string(s->port()) + ": " + s->log();
      return false;
    }
  }
  return true;
}

std::vector<std::string> documented_acl(const std::string& password) {
  std::ifstream doc(RL_DOCS_CLUSTER);
  for (std::string line; std::getline(doc, line);) {
    if (line.rfind("ACL SETUSER rld ", 0) != 0) continue;
    std::vector<std::string> argv;
    std::istringstream words(line);
    for (std::string w; words >> w;) argv.push_back(w == ">PASSWORD" ? ">" + password : w);
    return argv;
  }
  return {};
}

}  // namespace rl::testing
