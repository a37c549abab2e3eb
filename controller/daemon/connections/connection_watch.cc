// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/connections/connection_watch.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>

#include "common/log.h"
#include "daemon/netfilter/nft.h"

namespace rl::daemon {
namespace {

std::string table_name() { return std::string("inet ") + kConntrackTable; }

// The table's one rule asks conntrack about every packet, which is what turns conntrack on in
// this namespace; it only counts, and the chain's policy accepts.
std::string conntrack_script() {
  const std::string t = table_name();
  return "add table " + t + "\ndelete table " + t + "\ntable " + t +
         " {\n"
         "  comment \"rld: conntrack for connection limits\"\n"
         "  chain track {\n"
         "    type filter hook prerouting priority filter; policy accept;\n"
         "    ct state established counter\n"
         "  }\n"
         "}\n";
}

}  // namespace

bool has_connection_limits(const policy::Policy& p) {
  return std::any_of(p.rules.begin(), p.rules.end(),
                     [](const policy::Rule& r) { return policy::connection_limits(r) > 0; });
}

ConnectionWatch::~ConnectionWatch() { stop(); }

Status ConnectionWatch::prepare(const policy::Policy& next) {
  if (!has_connection_limits(next) || running()) return {};
  Nft nft;
  if (auto s = nft.run(conntrack_script()); !s)
    return s.error().wrap("connection limits need conntrack (table " + table_name() + ")");
  auto events = ConntrackEvents::open();
  if (!events) return events.error().wrap("connection limits need conntrack's events");
  // Counting starts from nothing: counts an earlier rld left in the pinned map belong to
  // connections whose close this one would never see.
  if (Status s = counter_.clear(); !s) return s.error().wrap("clear the connection counts");
  events_ = std::make_unique<ConntrackEvents>(std::move(*events));
  stop_ = UniqueFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  wake_ = UniqueFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (stop_.get() < 0 || wake_.get() < 0) return errno_error("eventfd");
  thread_ = std::thread([this] { run(); });
  log::info("counting connections for connection limits", {{"table", table_name()}});
  return {};
}

void ConnectionWatch::settle(const policy::Policy& in_force) {
  if (has_connection_limits(in_force) || !running()) return;
  stop();
  if (Status s = counter_.clear(); !s)
    log::warn("could not clear connection counts", {{"error", s.error().str()}});
  tracked_ = 0;
  if (Status s = remove_table(); !s)
    log::warn("could not remove rld's conntrack table", {{"error", s.error().str()}});
}

Status ConnectionWatch::remove_table() {
  Nft nft;
  auto has = nft.has_table(table_name());
  if (!has) return has.error();
  if (!*has) return {};
  if (auto s = nft.run("delete table " + table_name()); !s) return s.error();
  return {};
}

void ConnectionWatch::restore() {
  if (!running()) return;
  Nft nft;
  auto has = nft.has_table(table_name());
  if (!has || *has) return;
  if (auto s = nft.run(conntrack_script()); !s) {
    log::warn("could not put rld's conntrack table back", {{"error", s.error().str()}});
    return;
  }
  // Connections that opened while conntrack was off are in nobody's count, and closes of
  // counted ones went unseen: conntrack's table says which are open now.
  recount_wanted_ = true;
  uint64_t one = 1;
  if (write(wake_.get(), &one, sizeof(one)) < 0) log::warn("could not wake the connection watch");
  log::warn("rld's conntrack table was removed; put back, connections counted again",
            {{"table", table_name()}});
}

void ConnectionWatch::stop() {
  if (!thread_.joinable()) return;
  uint64_t one = 1;
  if (write(stop_.get(), &one, sizeof(one)) < 0) log::warn("could not stop the connection watch");
  thread_.join();
  events_.reset();
}

// Events are counted as they arrive: the data path's count lags conntrack by one wake-up and
// one map update per event (docs/datapath.md).
void ConnectionWatch::run() {
  std::function<void(const ConnEvent&)> count = [this](const ConnEvent& e) {
    if (Status s = counter_.on_event(e); !s) {
      errors_++;
      log::warn("could not count a connection", {{"error", s.error().str()}});
    }
  };
  for (;;) {
    pollfd fds[3] = {
        {events_->fd(), POLLIN, 0}, {stop_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
    if (poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      log::error("connection watch stopped", {{"error", errno_error("poll").str()}});
      return;
    }
    if (fds[1].revents) return;
    if (fds[2].revents) {
      uint64_t n = 0;
      if (read(wake_.get(), &n, sizeof(n)) < 0) errors_++;
      if (recount_wanted_.exchange(false)) recount();
    }
    const uint64_t lost_before = events_->lost();
    if (Status s = events_->drain(count); !s) {
      errors_++;
      log::warn("could not read conntrack's events", {{"error", s.error().str()}});
    }
    if (events_->lost() != lost_before) recount();
    tracked_ = counter_.tracked();
    lost_ = events_->lost();
  }
}

// Events were lost: conntrack's own table says which connections are open now.
void ConnectionWatch::recount() {
  std::vector<rl_conn_tuple> open_now;
  Status s = ConntrackEvents::dump([&](const ConnEvent& e) {
    if (e.open) open_now.push_back(e.tuple);
  });
  if (s) s = counter_.reconcile(open_now);
  if (!s) {
    errors_++;
    log::warn("could not count connections again after lost events", {{"error", s.error().str()}});
  }
}

}  // namespace rl::daemon
