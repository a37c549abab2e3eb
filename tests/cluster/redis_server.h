// SPDX-License-Identifier: GPL-2.0-only
// A real redis-server for tests: loopback only (127.0.0.1 on a free port, or a Unix socket) or a
// lab namespace's own address, its own temp dir as working dir, no persistence, protected mode
// on (off in a lab namespace, which has no route out). The destructor kills it
// and removes the dir, so a failed assertion leaves nothing behind; PR_SET_PDEATHSIG kills it
// if the test process dies first.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "files.h"
#include "process.h"

struct redisContext;

namespace rl::testing {

struct RedisServerOptions {
  std::string password;      // --requirepass when set
  bool unix_socket = false;  // listen on <dir>/redis.sock instead of TCP
  uint16_t replica_of = 0;   // a replica of the server on this port of `host`
  // A sentinel (redis-server --sentinel) watching the master on this port of `host` as
  // kSentinelMaster, quorum 2, down after 1 s.
  uint16_t sentinel_for = 0;
  // A Redis Cluster node (cluster-enabled, bus on port + 10000, node timeout 1 s), not yet
  // part of a cluster: RedisCluster (redis_cluster.h) makes one of several.
  bool cluster = false;
  std::string host = "127.0.0.1";  // the address it binds, and its master's
  // Runs inside this network namespace (ip netns exec); the test's own connection then goes
  // through a Unix socket, which the test reaches from any namespace.
  std::string netns;
  // With a certificate, port() is TLS only (tls-port, no plain port): these PEM files, its
  // replication and a cluster's bus over TLS too, and the test's own connection through a Unix
  // socket. A sentinel watches its master over TLS.
  std::string tls_cert, tls_key, tls_ca;
  bool tls_auth_clients = false;  // a client must show a certificate the CA signed
};

inline constexpr char kSentinelMaster[] = "rl-master";

// A reply to a test's own command, copied out of hiredis.
struct RedisValue {
  enum class Type { kNil, kString, kStatus, kInteger, kError, kArray };
  Type type = Type::kNil;
  std::string str;
  long long integer = 0;
  std::vector<RedisValue> elements;
  bool is_error() const { return type == Type::kError; }
};

// The ACL line docs/cluster.md gives for rld's user, as a command's words, its PASSWORD filled
// in: tests create the user from the document itself, so the two cannot drift apart. Empty if
// the document has no such line.
std::vector<std::string> documented_acl(const std::string& password);

class RedisServer {
 public:
  // The redis-server binary, "" if the build did not find one (tests then fail).
  static std::string binary();
  static Result<std::unique_ptr<RedisServer>> start(const RedisServerOptions& opts = {});
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;
  ~RedisServer();

  uint16_t port() const { return port_; }  // 0 with a Unix socket
  const std::string& unix_socket() const { return socket_; }
  const std::string& password() const { return opts_.password; }
  const std::string& dir() const { return dir_->path(); }
  bool running();
  pid_t pid() const { return process_ ? process_->pid() : -1; }

  // SIGKILL, like a crash: connections reset, data gone (nothing is persisted).
  void kill();
  // Starts a fresh server on the same port or socket after kill().
  Status restart();
  // SIGSTOP / SIGCONT: the kernel still accepts connections, nothing answers.
  void pause();
  void resume();

  // A command on the test's own connection, authenticated when needed. Not while paused.
  Result<RedisValue> command(const std::vector<std::string>& argv);
  // calls= of a command in INFO commandstats ("evalsha", "script|load"); 0 if never called.
  Result<uint64_t> command_calls(const std::string& name);
  Result<uint64_t> command_usec(const std::string& name);
  Result<uint64_t> time_ms();  // the server's clock (TIME)
  // A numeric field of INFO, e.g. info_number("memory", "used_memory").
  Result<uint64_t> info_number(const std::string& section, const std::string& field);
  // The server's CPU time so far, user and system (INFO cpu), in seconds.
  Result<double> cpu_seconds();
  std::string log() const;

 private:
  explicit RedisServer(const RedisServerOptions& opts) : opts_(opts) {}
  Status spawn();
  std::vector<std::string> in_netns(std::vector<std::string> argv) const;
  Status wait_ready();
  Result<std::map<std::string, std::string>> commandstat(const std::string& name);
  void close_admin();

  RedisServerOptions opts_;
  std::optional<TempDir> dir_;
  std::string socket_;
  uint16_t port_ = 0;
  std::optional<Process> process_;
  redisContext* admin_ = nullptr;
};

// A master, `replica` and `sentinels` ready for a failover: the replica in sync, and every
// sentinel knows the replica and the other sentinels. If not, `waiting` (when given) says what
// is missing.
bool sentinels_ready(RedisServer& replica,
                     const std::vector<std::unique_ptr<RedisServer>>& sentinels,
                     std::string* waiting = nullptr);

}  // namespace rl::testing
