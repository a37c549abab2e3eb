#include "metrics/exporter.h"

#include <CivetServer.h>
#include <prometheus/exposer.h>

#include <exception>
#include <utility>
#include <vector>

#include "metrics/collector.h"

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

// civetweb copies the callbacks at start, so one instance serves every Exporter.
const CivetCallbacks& callbacks() {
  static const CivetCallbacks cb = [] {
    CivetCallbacks c;
    c.log_message = capture_start_log;
    return c;
  }();
  return cb;
}

}  // namespace

Exporter::Exporter(std::shared_ptr<Collector> collector,
                   std::unique_ptr<prometheus::Exposer> exposer)
    : collector_(std::move(collector)), exposer_(std::move(exposer)) {}

Exporter::Exporter(Exporter&&) noexcept = default;
Exporter& Exporter::operator=(Exporter&&) noexcept = default;
Exporter::~Exporter() = default;

Result<Exporter> Exporter::start(const std::string& address, SnapshotFn snapshot) {
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
    return Exporter(std::move(collector), std::move(exposer));
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
