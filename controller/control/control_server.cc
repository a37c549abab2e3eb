// SPDX-License-Identifier: GPL-2.0-only
#include "control/control_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <exception>

#include "common/log.h"

namespace rl::control {

ControlServer::ControlServer(int epoll_fd, int listen_fd, Handler handler, Deferrer deferrer)
    : epoll_fd_(epoll_fd),
      listen_fd_(listen_fd),
      handler_(std::move(handler)),
      deferrer_(std::move(deferrer)) {}

void ControlServer::on_event(int fd, uint32_t events) {
  if (fd == listen_fd_) return accept_all();
  auto it = conns_.find(fd);
  if (it == conns_.end()) return;
  Conn& c = it->second;
  if (c.waiting) {  // only a hang-up is watched while the reply is pending
    if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) close(fd);
    return;
  }
  if (c.out.empty()) return on_readable(c);  // closes it when done
  if ((events & (EPOLLERR | EPOLLHUP)) || !flush(c)) close(fd);
}

void ControlServer::accept_all() {
  for (;;) {
    UniqueFd fd(::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!fd) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // EAGAIN, or out of descriptors: the rest wait for the next turn
    }
    if (conns_.size() >= kMaxConnections) close_oldest();
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.fd = fd.get();
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd.get(), &ev) != 0) continue;
    int key = fd.get();
    conns_[key] = Conn{std::move(fd), {}, {}, 0, Clock::now() + kDeadline, ++next_serial_};
  }
}

void ControlServer::on_readable(Conn& c) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::recv(c.fd.get(), buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // the rest later
    if (n < 0) return close(c.fd.get());
    if (n == 0) {  // the client closed its side: what came is the request
      if (c.in.empty()) return close(c.fd.get());
      return reply(c, c.in);
    }
    c.in.append(buf, static_cast<size_t>(n));
    if (auto nl = c.in.find('\n'); nl != std::string::npos) return reply(c, c.in.substr(0, nl));
    if (c.in.size() > control::kMaxMessageBytes) {
      c.out = control::to_text(control::fail("request too large")) + "\n";
      if (!flush(c)) close(c.fd.get());
      return;
    }
  }
}

void ControlServer::reply(Conn& c, const std::string& request) {
  Json resp;
  Json req = Json::parse(request, nullptr, false);
  if (!req.is_discarded() && req.is_object() && deferrer_) {
    int fd = c.fd.get();
    uint64_t serial = c.serial;
    c.in.clear();
    c.waiting = true;
    c.deadline = Clock::time_point::max();
    epoll_event ev{};
    ev.events = EPOLLRDHUP;
    ev.data.fd = fd;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev);
    // May answer at once, which may close the connection: c is not touched after this.
    if (deferrer_(req, [this, fd, serial](const Json& r) { answer(fd, serial, r); })) return;
    c.waiting = false;
    c.deadline = Clock::now() + kDeadline;
  }
  if (req.is_discarded()) {
    resp = control::fail("request is not JSON");
  } else {
    try {
      resp = handler_(req);
    } catch (const std::exception& e) {  // a command's failure ends its request, not the loop
      log::error("control request failed", {{"error", e.what()}});
      resp = control::fail(std::string("internal error: ") + e.what());
    }
  }
  c.in.clear();
  c.in.shrink_to_fit();
  c.out = control::to_text(resp) + "\n";
  c.deadline = Clock::now() + kDeadline;  // a slow command does not eat the client's time to read
  if (!flush(c)) close(c.fd.get());
}

void ControlServer::answer(int fd, uint64_t serial, const Json& resp) {
  auto it = conns_.find(fd);
  if (it == conns_.end() || it->second.serial != serial || !it->second.waiting) return;
  Conn& c = it->second;
  c.waiting = false;
  c.out = control::to_text(resp) + "\n";
  c.deadline = Clock::now() + kDeadline;
  if (!flush(c)) close(fd);
}

bool ControlServer::flush(Conn& c) {
  while (c.sent < c.out.size()) {
    ssize_t n = ::send(c.fd.get(), c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      epoll_event ev{};
      ev.events = EPOLLOUT;  // the reply's rest when the client reads
      ev.data.fd = c.fd.get();
      return ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd.get(), &ev) == 0;
    }
    if (n <= 0) return false;
    c.sent += static_cast<size_t>(n);
  }
  return false;  // all sent: one request per connection
}

void ControlServer::close(int fd) {
  auto it = conns_.find(fd);
  if (it == conns_.end()) return;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  conns_.erase(it);
}

void ControlServer::close_oldest() {
  auto oldest = std::min_element(conns_.begin(), conns_.end(), [](const auto& a, const auto& b) {
    return a.second.deadline < b.second.deadline;
  });
  if (oldest != conns_.end()) close(oldest->first);
}

int ControlServer::expire(Clock::time_point now) {
  for (auto it = conns_.begin(); it != conns_.end();) {
    auto next = std::next(it);
    if (it->second.deadline <= now) close(it->first);
    it = next;
  }
  auto first = Clock::time_point::max();
  for (const auto& [fd, c] : conns_)
    if (!c.waiting) first = std::min(first, c.deadline);
  if (first == Clock::time_point::max()) return -1;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(first - now).count();
  return static_cast<int>(std::max<int64_t>(ms, 0));
}

}  // namespace rl::control
