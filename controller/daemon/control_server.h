// rld's side of the control socket, served from the event loop without blocking it: every
// connection is non-blocking and read as its bytes arrive, so a client that connects and sends
// nothing (or sends slowly, or does not read its reply) holds only its own slot. A connection
// gets kDeadline to send its request and again to read the reply; past it, or when
// kMaxConnections are open and another arrives, the oldest is closed.
#pragma once

#include <sys/epoll.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>

#include "control/protocol.h"
#include "datapath/fd.h"

namespace rl::daemon {

class ControlServer {
 public:
  using Clock = std::chrono::steady_clock;
  using Handler = std::function<control::Json(const control::Json&)>;
  static constexpr auto kDeadline = std::chrono::seconds(5);
  static constexpr size_t kMaxConnections = 32;

  // `listen_fd` (non-blocking, already in `epoll_fd` for EPOLLIN) stays its owner's; the
  // connections are added to `epoll_fd` and removed from it here.
  ControlServer(int epoll_fd, int listen_fd, Handler handler);
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
  };
  void accept_all();
  void on_readable(Conn& c);
  void reply(Conn& c, const std::string& request);
  // Sends what the socket takes; false once the connection is done with (sent or failed).
  bool flush(Conn& c);
  void close(int fd);
  void close_oldest();

  int epoll_fd_, listen_fd_;
  Handler handler_;
  std::map<int, Conn> conns_;
};

}  // namespace rl::daemon
