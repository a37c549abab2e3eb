// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/connections/conntrack_events.h"

#include <fcntl.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace rl::daemon {
namespace {

// Room for bursts of events between two reads; SO_RCVBUFFORCE passes rmem_max (rld is root).
constexpr int kReceiveBuffer = 8 << 20;

// The connection's state as a count sees it: open, closed, or not yet (or not) a connection.
enum class Phase { kNone, kOpen, kClosed };

Phase phase(enum nf_conntrack_msg_type type, const nf_conntrack* ct) {
  if (type == NFCT_T_DESTROY) return Phase::kClosed;
  if (!nfct_attr_is_set(ct, ATTR_TCP_STATE)) return Phase::kNone;
  switch (nfct_get_attr_u8(ct, ATTR_TCP_STATE)) {
    case TCP_CONNTRACK_ESTABLISHED:
    case TCP_CONNTRACK_FIN_WAIT:
    case TCP_CONNTRACK_CLOSE_WAIT:
    case TCP_CONNTRACK_LAST_ACK:
      return Phase::kOpen;
    case TCP_CONNTRACK_TIME_WAIT:
    case TCP_CONNTRACK_CLOSE:
      return Phase::kClosed;
    default:
      return Phase::kNone;
  }
}

bool read_tuple(const nf_conntrack* ct, rl_conn_tuple& t) {
  uint8_t l3 = nfct_get_attr_u8(ct, ATTR_L3PROTO);
  if (l3 == AF_INET) {
    t.family = 4;
    t.saddr[0] = nfct_get_attr_u32(ct, ATTR_ORIG_IPV4_SRC);
    t.daddr[0] = nfct_get_attr_u32(ct, ATTR_ORIG_IPV4_DST);
  } else if (l3 == AF_INET6) {
    t.family = 6;
    std::memcpy(t.saddr, nfct_get_attr(ct, ATTR_ORIG_IPV6_SRC), sizeof(t.saddr));
    std::memcpy(t.daddr, nfct_get_attr(ct, ATTR_ORIG_IPV6_DST), sizeof(t.daddr));
  } else {
    return false;
  }
  t.sport = ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_SRC));
  t.dport = ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_DST));
  return true;
}

int on_event(enum nf_conntrack_msg_type type, nf_conntrack* ct, void* data) {
  const auto* fn = static_cast<const std::function<void(const ConnEvent&)>*>(data);
  if (nfct_get_attr_u8(ct, ATTR_L4PROTO) != IPPROTO_TCP) return NFCT_CB_CONTINUE;
  Phase p = phase(type, ct);
  ConnEvent e;
  if (p == Phase::kNone || !read_tuple(ct, e.tuple)) return NFCT_CB_CONTINUE;
  e.open = p == Phase::kOpen;
  if (fn && *fn) (*fn)(e);
  return NFCT_CB_CONTINUE;
}

}  // namespace

void ConntrackEvents::Close::operator()(nfct_handle* h) const { nfct_close(h); }

ConntrackEvents::ConntrackEvents(nfct_handle* h) : h_(h) {}
ConntrackEvents::ConntrackEvents(ConntrackEvents&&) noexcept = default;
ConntrackEvents& ConntrackEvents::operator=(ConntrackEvents&&) noexcept = default;
ConntrackEvents::~ConntrackEvents() = default;

Result<ConntrackEvents> ConntrackEvents::open() {
  nfct_handle* h = nfct_open(CONNTRACK, NF_NETLINK_CONNTRACK_NEW | NF_NETLINK_CONNTRACK_UPDATE |
                                            NF_NETLINK_CONNTRACK_DESTROY);
  if (!h) return errno_error("open conntrack events (is nf_conntrack loaded?)");
  ConntrackEvents ev(h);
  int fd = nfct_fd(h);
  if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)
    return errno_error("make conntrack events non-blocking");
  int size = kReceiveBuffer;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) != 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
  return ev;
}

int ConntrackEvents::fd() const { return nfct_fd(h_.get()); }

Status ConntrackEvents::drain(const std::function<void(const ConnEvent&)>& fn) {
  // The callback is registered for this drain only: the handle outlives no caller's function.
  nfct_callback_register(h_.get(), NFCT_T_ALL, on_event,
                         const_cast<void*>(static_cast<const void*>(&fn)));
  Status out;
  for (;;) {
    if (nfct_catch(h_.get()) >= 0) continue;
    if (errno == ENOBUFS) {
      lost_++;
      continue;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      out = errno_error("read conntrack events");
    break;
  }
  nfct_callback_unregister(h_.get());
  return out;
}

Status ConntrackEvents::dump(const std::function<void(const ConnEvent&)>& fn) {
  std::unique_ptr<nfct_handle, Close> h(nfct_open(CONNTRACK, 0));
  if (!h) return errno_error("open conntrack for a dump");
  nfct_callback_register(h.get(), NFCT_T_ALL, on_event,
                         const_cast<void*>(static_cast<const void*>(&fn)));
  for (uint32_t family : {AF_INET, AF_INET6})
    if (nfct_query(h.get(), NFCT_Q_DUMP, &family) != 0) return errno_error("dump conntrack");
  return {};
}

}  // namespace rl::daemon
