#include "redis_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace rl::testing {
namespace {

using namespace std::chrono_literals;

Result<uint16_t> free_loopback_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno_error("socket");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    int e = errno;
    close(fd);
    return errno_error("bind 127.0.0.1:0", e);
  }
  close(fd);
  return ntohs(a.sin_port);
}

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
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/rl-redis-XXXXXX";
  if (!mkdtemp(tmpl.data())) return errno_error("mkdtemp " + tmpl);
  s->dir_ = tmpl;
  if (opts.unix_socket) s->socket_ = s->dir_ + "/redis.sock";
  // A free port can be taken between our probe and Redis' bind: try a few.
  Error last{0, "no attempt"};
  for (int attempt = 0; attempt < 5; attempt++) {
    if (!opts.unix_socket) {
      auto port = free_loopback_port();
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

RedisServer::~RedisServer() {
  kill();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

Status RedisServer::spawn() {
  std::vector<std::string> argv = {binary(),
                                   "--bind",
                                   "127.0.0.1",
                                   "--port",
                                   std::to_string(port_),
                                   "--dir",
                                   dir_,
                                   "--save",
                                   "",
                                   "--appendonly",
                                   "no",
                                   "--protected-mode",
                                   "yes",
                                   "--daemonize",
                                   "no",
                                   "--logfile",
                                   dir_ + "/redis.log"};
  if (!socket_.empty()) {
    argv.insert(argv.end(), {"--unixsocket", socket_, "--unixsocketperm", "700"});
  }
  if (!opts_.password.empty()) argv.insert(argv.end(), {"--requirepass", opts_.password});
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) return errno_error("open /dev/null");
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    dup2(null_fd, 0);
    dup2(null_fd, 1);
    dup2(null_fd, 2);
    execv(args[0], args.data());
    _exit(127);
  }
  int e = errno;
  close(null_fd);
  if (pid < 0) return errno_error("fork", e);
  pid_ = pid;
  return wait_ready();
}

Status RedisServer::wait_ready() {
  // Up to 5 s, polling every 20 ms.
  for (int i = 0; i < 250; i++) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return Error{0, "redis-server exited during start-up: " + log()};
    }
    auto pong = command({"PING"});
    if (pong && pong->type == RedisValue::Type::kStatus) return Status::Ok();
    std::this_thread::sleep_for(20ms);
  }
  return Error{ETIMEDOUT, "redis-server did not answer PING within 5 s: " + log()};
}

bool RedisServer::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

void RedisServer::kill() {
  close_admin();
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
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
  if (pid_ > 0) ::kill(pid_, SIGSTOP);
}

void RedisServer::resume() {
  if (pid_ > 0) ::kill(pid_, SIGCONT);
}

void RedisServer::close_admin() {
  if (admin_) redisFree(admin_);
  admin_ = nullptr;
}

Result<RedisValue> RedisServer::command(const std::vector<std::string>& argv) {
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

Result<uint64_t> RedisServer::time_ms() {
  auto t = command({"TIME"});
  if (!t) return t.error();
  if (t->type != RedisValue::Type::kArray || t->elements.size() != 2)
    return Error{EPROTO, "TIME: unexpected reply"};
  return std::stoull(t->elements[0].str) * 1000 + std::stoull(t->elements[1].str) / 1000;
}

std::string RedisServer::log() const {
  std::ifstream in(dir_ + "/redis.log");
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  // The tail is where the reason is.
  return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
}

}  // namespace rl::testing
