// SPDX-License-Identifier: GPL-2.0-only
// rld's side of the control socket, served from the event loop without blocking it: every
// connection is non-blocking and read as its bytes arrive, so a client that connects and sends
// nothing (or sends slowly, or does not read its reply) holds only its own slot. A connection
// gets kDeadline to send its request and again to read the reply; past it, or when
// kMaxConnections are open and another arrives, the oldest is closed. A request that takes a
// policy load is deferred: its connection waits, without a deadline of its own (the load has
// reload_timeout_ms), until its owner answers through the Responder it was given.
#pragma once

#include <sys/epoll.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>

#include "common/fd.h"
#include "control/protocol.h"

namespace rl::control {

class ControlServer {
 public:
  using Clock = std::chrono::steady_clock;
  using Handler = std::function<control::Json(const control::Json&)>;
  // Answers a deferred request, at most once, from the event loop. A client gone by then is
  // skipped (a connection is known by its descriptor and a serial, so a reused descriptor is
  // never answered by mistake).
  using Responder = std::function<void(const control::Json&)>;
  // Takes a request to answer later and returns true, or returns false (without calling the
  // Responder) to leave it to the Handler.
  using Deferrer = std::function<bool(const control::Json&, Responder)>;
  static constexpr auto kDeadline = std::chrono::seconds(5);
  static constexpr size_t kMaxConnections = 32;

  // `listen_fd` (non-blocking, already in `epoll_fd` for EPOLLIN) stays its owner's; the
  // connections are added to `epoll_fd` and removed from it here.
  ControlServer(int epoll_fd, int listen_fd, Handler handler, Deferrer deferrer = {});
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Whether `fd` is the listening socket or one of the connections.
  bool owns(int fd) const { return fd == listen_fd_ || conns_.count(fd) != 0; }
  void on_event(int fd, uint32_t events);
  // Closes connections past their deadline; returns the milliseconds until the next one (-1:
  // none), for the loop's epoll timeout.
  int expire(Clock::time_point now);
  size_t connections() const { return conns_.size(); }

 private:
  struct Conn {
    UniqueFd fd;
    std::string in, out;
    size_t sent = 0;
    Clock::time_point deadline;
    uint64_t serial = 0;
    bool waiting = false;  // deferred: the reply comes through a Responder
  };
  void accept_all();
  void on_readable(Conn& c);
  void reply(Conn& c, const std::string& request);
  void answer(int fd, uint64_t serial, const control::Json& resp);
  // Sends what the socket takes; false once the connection is done with (sent or failed).
  bool flush(Conn& c);
  void close(int fd);
  void close_oldest();

  int epoll_fd_, listen_fd_;
  Handler handler_;
  Deferrer deferrer_;
  std::map<int, Conn> conns_;
  uint64_t next_serial_ = 0;
};

}  // namespace rl::control
