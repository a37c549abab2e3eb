// SPDX-License-Identifier: GPL-2.0-only
#include "metrics/exporter.h"

#include <CivetServer.h>
#include <prometheus/exposer.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <map>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "common/log.h"
#include "common/mutex.h"
#include "metrics/collector.h"
#include "metrics/health.h"

namespace rl::metrics {
namespace {

// prometheus-cpp reports every start failure as "null context ... Possible problem binding to
// port"; civetweb logs the actual cause ("cannot bind to 127.0.0.1:9464: 98 (Address already in
// use)", "invalid port spec") through this callback while the constructor runs on our thread.
thread_local std::string* start_log = nullptr;

int capture_start_log(const mg_connection*, const char* message) {
  if (!start_log) return 0;  // after start: civetweb's default handling
  if (!start_log->empty()) start_log->append("; ");
  start_log->append(message);
  return 1;
}

// /healthz and /readyz are not prometheus-cpp's to serve: civetweb hands every request to
// begin_request first, which answers those paths and leaves the rest to prometheus-cpp. The
// callbacks are shared by every Exporter, so the collector is found by the port the request came in
// on.
Mutex g_health_mu;
std::map<int, std::weak_ptr<Collector>> g_health_by_port GUARDED_BY(g_health_mu);

int serve_health(mg_connection* conn) {
  const mg_request_info* req = mg_get_request_info(conn);
  if (!req || !req->local_uri) return 0;
  std::string_view path(req->local_uri);
  if (path != "/healthz" && path != "/readyz") return 0;
  std::shared_ptr<Collector> collector;
  {
    MutexLock lock(g_health_mu);
    auto it = g_health_by_port.find(req->server_port);
    if (it != g_health_by_port.end()) collector = it->second.lock();
  }
  if (!collector) return 0;
  auto snapshot = collector->snapshot();
  Health h = path == "/healthz" ? health_of(snapshot) : readiness_of(snapshot);
  mg_printf(conn,
            "HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "Cache-Control: no-store\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
            h.ok ? "200 OK" : "503 Service Unavailable", h.text.size());
  if (std::string_view(req->request_method) != "HEAD") mg_write(conn, h.text.data(), h.text.size());
  return 200;  // non-zero: answered; civetweb logs it as this status
}

std::atomic<int> g_thread_priority{0};

// Runs first in each of civetweb's threads (its listener and workers, a pool started with it).
// SCHED_RESET_ON_FORK: nothing they start inherits the class.
void* set_thread_priority(const mg_context*, int) {
  sched_param sp{};
  sp.sched_priority = g_thread_priority.load();
  if (sp.sched_priority > 0 && sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) != 0)
    log::warn(
        "metrics endpoint thread left at the default priority: scrapes may wait behind a flood",
        {{"priority", std::to_string(sp.sched_priority)}, {"error", std::strerror(errno)}});
  return nullptr;
}

// civetweb copies the callbacks at start, so one instance serves every Exporter.
const CivetCallbacks& callbacks() {
  static const CivetCallbacks cb = [] {
    CivetCallbacks c;
    c.log_message = capture_start_log;
    c.begin_request = serve_health;
    c.init_thread = set_thread_priority;
    return c;
  }();
  return cb;
}

// The address stop() connects to: the one listened on, or loopback for all interfaces.
uint32_t wake_address(const std::string& address) {
  in_addr a{};
  auto colon = address.rfind(':');
  if (colon != std::string::npos && inet_pton(AF_INET, address.substr(0, colon).c_str(), &a) == 1 &&
      a.s_addr != htonl(INADDR_ANY))
    return a.s_addr;
  return htonl(INADDR_LOOPBACK);
}

// Opens and drops a connection to the server, which wakes its accept loop. Only an established
// connection wakes it: on loopback the handshake usually completes inside connect(), but while
// a receive flood has pushed softirq work to ksoftirqd it completes later, and closing first
// would abort it unseen (stopping rld then took 1.7 to 3.3 s). So wait for it, briefly.
void knock(uint32_t addr, uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = addr;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    (void)poll(&p, 1, 200);
  }
  close(fd);
}

}  // namespace

Exporter::Exporter(std::shared_ptr<Collector> collector,
                   std::unique_ptr<prometheus::Exposer> exposer, uint32_t wake_addr)
    : collector_(std::move(collector)), exposer_(std::move(exposer)), wake_addr_(wake_addr) {}

Exporter::Exporter(Exporter&& o) noexcept
    : collector_(std::move(o.collector_)),
      exposer_(std::move(o.exposer_)),
      wake_addr_(o.wake_addr_) {}

Exporter& Exporter::operator=(Exporter&& o) noexcept {
  if (this != &o) {
    stop();
    collector_ = std::move(o.collector_);
    exposer_ = std::move(o.exposer_);
    wake_addr_ = o.wake_addr_;
  }
  return *this;
}

Exporter::~Exporter() { stop(); }

void Exporter::stop() noexcept {
  if (!exposer_) return;
  {
    MutexLock lock(g_health_mu);
    g_health_by_port.erase(port());
  }
  // civetweb's accept loop (1.15) polls the listening socket with a 2 s timeout and looks at
  // the stop request only between polls, so stopping would take up to 2 s, and every rld stop
  // or restart with it. While the server stops, connections wake the poll; refused ones once
  // it has closed the socket are harmless.
  const uint16_t port = this->port();
  std::atomic<bool> stopped{false};
  std::optional<std::thread> waker;
  try {
    waker.emplace([&] {
      while (!stopped.load()) {
        knock(wake_addr_, port);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
  } catch (...) {
    // No thread: the stop simply takes its 2 s.
  }
  exposer_.reset();
  stopped = true;
  if (waker) waker->join();
}

Result<Exporter> Exporter::start(const std::string& address, SnapshotFn snapshot,
                                 int realtime_priority) {
  g_thread_priority.store(realtime_priority);
  std::string log;
  start_log = &log;
  try {
    auto collector = std::make_shared<Collector>(std::move(snapshot));
    // Two threads (prometheus-cpp's default): Prometheus scrapes are few and short.
    auto exposer = std::make_unique<prometheus::Exposer>(address, 2, &callbacks());
    start_log = nullptr;
    // civetweb accepts an empty port list and then serves nothing.
    if (exposer->GetListeningPorts().empty())
      return Error{EINVAL, "metrics: no port to listen on in \"" + address + "\""};
    exposer->RegisterCollectable(collector);
    {
      MutexLock lock(g_health_mu);
      for (int port : exposer->GetListeningPorts()) g_health_by_port[port] = collector;
    }
    return Exporter(std::move(collector), std::move(exposer), wake_address(address));
  } catch (const std::exception& e) {
    start_log = nullptr;
    return Error{0, "metrics: cannot serve on " + address + ": " + (log.empty() ? e.what() : log)};
  } catch (...) {
    start_log = nullptr;
    return Error{0, "metrics: cannot serve on " + address};
  }
}

uint16_t Exporter::port() const {
  if (!exposer_) return 0;
  try {
    std::vector<int> ports = exposer_->GetListeningPorts();
    return ports.empty() ? 0 : uint16_t(ports.front());
  } catch (...) {
    return 0;
  }
}

}  // namespace rl::metrics
