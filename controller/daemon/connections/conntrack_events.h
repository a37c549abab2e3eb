// SPDX-License-Identifier: GPL-2.0-only
// conntrack's events for TCP connections, read from netlink (libnetfilter_conntrack): a
// connection that completed its handshake, and one that closed. The socket is non-blocking;
// its owner polls fd() and drains what arrived.
#pragma once

#include <functional>
#include <memory>

#include "common/result.h"
#include "rl_abi.h"

struct nfct_handle;

namespace rl::daemon {

struct ConnEvent {
  rl_conn_tuple tuple{};  // the original direction: the client's side first, ports host order
  bool open = false;      // established (or half-closed); else closed (TIME_WAIT, CLOSE, gone)
};

class ConntrackEvents {
 public:
  // Subscribes to new, updated and destroyed connections in rld's network namespace.
  static Result<ConntrackEvents> open();
  ConntrackEvents(ConntrackEvents&&) noexcept;
  ConntrackEvents& operator=(ConntrackEvents&&) noexcept;
  ConntrackEvents(const ConntrackEvents&) = delete;
  ConntrackEvents& operator=(const ConntrackEvents&) = delete;
  ~ConntrackEvents();

  int fd() const;
  // Hands every TCP connection event that arrived to `fn`. An overrun socket (ENOBUFS: the
  // kernel dropped events) is counted in lost() and reading goes on.
  Status drain(const std::function<void(const ConnEvent&)>& fn);
  uint64_t lost() const { return lost_; }

  // Every TCP connection conntrack holds now, as events (open or closed by its state), from a
  // dump on a socket of its own: what rld counts again after events were lost.
  static Status dump(const std::function<void(const ConnEvent&)>& fn);

 private:
  struct Close {
    void operator()(nfct_handle* h) const;
  };
  explicit ConntrackEvents(nfct_handle* h);
  std::unique_ptr<nfct_handle, Close> h_;
  uint64_t lost_ = 0;
};

}  // namespace rl::daemon
