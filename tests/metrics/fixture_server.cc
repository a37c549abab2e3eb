// SPDX-License-Identifier: GPL-2.0-only
// metrics_fixture_server: the exporter serving the fixed test Snapshot.
//
//   metrics_fixture_server [--port N]   serve on 127.0.0.1:N (default 0: a free port) until
//                                       SIGTERM or SIGINT; prints "listening on 127.0.0.1:PORT"
//   metrics_fixture_server --dump       print the exposition text and exit
//
// The Prometheus server test scrapes it; the dashboard and alert checks read --dump to learn
// which metric names the exporter exports.
#include <prometheus/text_serializer.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "fixture_snapshot.h"
#include "metrics/collector.h"
#include "metrics/exporter.h"

namespace {

rl::Result<rl::metrics::Snapshot> fixture() { return rl::testing::fixture_snapshot(); }

int dump() {
  rl::metrics::Collector collector(fixture);
  std::cout << prometheus::TextSerializer().Serialize(collector.Collect());
  return std::cout.flush() ? 0 : 1;
}

int serve(const std::string& port) {
  // Blocked before the server starts so that its threads inherit the mask and sigwait below is
  // the only receiver.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  auto exporter = rl::metrics::Exporter::start("127.0.0.1:" + port, fixture);
  if (!exporter) {
    std::fprintf(stderr, "metrics_fixture_server: %s\n", exporter.error().str().c_str());
    return 1;
  }
  std::printf("listening on 127.0.0.1:%u\n", exporter->port());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&stop, &sig);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--dump") == 0) return dump();
  if (argc == 1) return serve("0");
  if (argc == 3 && std::strcmp(argv[1], "--port") == 0) return serve(argv[2]);
  std::fprintf(stderr, "usage: %s [--port N | --dump]\n", argv[0]);
  return 2;
}
