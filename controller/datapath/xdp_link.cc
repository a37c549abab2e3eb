// SPDX-License-Identifier: GPL-2.0-only
#include "datapath/xdp_link.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <unistd.h>

#include <cstring>

#include "common/fd.h"
#include "datapath/pins.h"

namespace rl {

Result<XdpMode> parse_xdp_mode(const std::string& s) {
  if (s == "auto") return XdpMode::kAuto;
  if (s == "native") return XdpMode::kNative;
  if (s == "generic") return XdpMode::kGeneric;
  return Error{EINVAL, "XDP mode must be auto, native or generic; got '" + s + "'"};
}

const char* xdp_mode_name(XdpMode m) {
  switch (m) {
    case XdpMode::kAuto:
      return "auto";
    case XdpMode::kNative:
      return "native";
    case XdpMode::kGeneric:
      return "generic";
  }
  return "auto";
}

Result<std::string> attached_mode(const std::string& ifname) {
  unsigned idx = if_nametoindex(ifname.c_str());
  if (!idx) return errno_error("no interface '" + ifname + "'");
  LIBBPF_OPTS(bpf_xdp_query_opts, q);
  if (bpf_xdp_query(static_cast<int>(idx), 0, &q) != 0)
    return errno_error("query XDP on " + ifname);
  switch (q.attach_mode) {
    case XDP_ATTACHED_DRV:
      return std::string("native");
    case XDP_ATTACHED_SKB:
      return std::string("generic");
    case XDP_ATTACHED_HW:
      return std::string("offload");
    case XDP_ATTACHED_MULTI:
      return std::string("multi");
    default:
      return std::string("none");
  }
}

namespace {

// Why a pinned link cannot serve interface `ifindex` any more, or "" if it can. A link whose
// interface was deleted keeps its pin but has no interface (0); a recreated interface of the
// same name has another index.
std::string stale_link(int link_fd, unsigned ifindex) {
  bpf_link_info info{};
  uint32_t len = sizeof(info);
  if (bpf_obj_get_info_by_fd(link_fd, &info, &len) != 0) return "";  // let the update decide
  if (info.type != BPF_LINK_TYPE_XDP) return "not an XDP link";
  if (info.xdp.ifindex == 0) return "its interface went away";
  if (info.xdp.ifindex != ifindex)
    return "it belongs to interface index " + std::to_string(info.xdp.ifindex) + ", not " +
           std::to_string(ifindex);
  return "";
}

}  // namespace

Result<Attachment> attach_xdp(int prog_fd, const std::string& ifname, XdpMode mode,
                              const std::string& pin_root) {
  unsigned idx = if_nametoindex(ifname.c_str());
  if (!idx) return errno_error("no interface '" + ifname + "'");
  Attachment out;
  out.ifname = ifname;
  std::string pin = pinned_link_path(pin_root, ifname);

  UniqueFd existing(bpf_obj_get(pin.c_str()));
  std::string stale;
  if (existing) {
    stale = stale_link(existing.get(), idx);
    // Same interface, same link: swap the program atomically; packets never see none.
    if (stale.empty() && bpf_link_update(existing.get(), prog_fd, nullptr) == 0)
      out.replaced = true;
    else if (stale.empty() && errno != ENOLINK)
      return errno_error("replace the program on " + ifname);
    else if (stale.empty())
      stale = "its interface went away (link severed)";
  }
  if (!stale.empty()) {
    // The pin is all that holds a severed link, and it protects nothing: drop it.
    existing.reset();
    if (::unlink(pin.c_str()) != 0 && errno != ENOENT) return errno_error("unpin stale " + pin);
    out.warning =
        "dropped the stale pinned link of " + ifname + " (" + stale + ") and attached afresh";
  }
  if (!out.replaced) {
    auto create = [&](uint32_t flags) {
      LIBBPF_OPTS(bpf_link_create_opts, o, .flags = flags);
      return UniqueFd(bpf_link_create(prog_fd, static_cast<int>(idx), BPF_XDP, &o));
    };
    UniqueFd link;
    if (mode == XdpMode::kGeneric) {
      link = create(XDP_FLAGS_SKB_MODE);
    } else {
      link = create(XDP_FLAGS_DRV_MODE);
      if (!link && mode == XdpMode::kAuto && errno != EBUSY && errno != EEXIST) {
        if (!out.warning.empty()) out.warning += "; ";
        out.warning += std::string("native XDP unavailable on ") + ifname + " (" +
                       std::strerror(errno) +
                       "); using generic mode, which runs after the kernel allocates each packet";
        link = create(XDP_FLAGS_SKB_MODE);
      }
    }
    if (!link) {
      const int e = errno;
      if (e == EBUSY || e == EEXIST)
        return errno_error(ifname + " already has another XDP program attached; detach it first",
                           e);
      // The driver has no XDP hook of its own (a macvlan, a bridge): only generic mode runs.
      if (mode == XdpMode::kNative && e == EOPNOTSUPP)
        return errno_error("native XDP is not supported by " + ifname +
                               "'s driver: set xdp_mode to generic, or to auto to fall back to "
                               "generic mode",
                           e);
      return errno_error("attach XDP to " + ifname, e);
    }
    if (bpf_obj_pin(link.get(), pin.c_str()) != 0) return errno_error("pin link " + pin);
  }
  auto m = attached_mode(ifname);
  out.mode = m ? *m : "unknown";
  return out;
}

Status detach_xdp(const std::string& ifname, const std::string& pin_root) {
  std::string pin = pinned_link_path(pin_root, ifname);
  UniqueFd link(bpf_obj_get(pin.c_str()));
  if (!link) return errno == ENOENT ? Status{} : Status(errno_error("open link " + pin));
  // Detach explicitly: someone else may still hold a reference to the link.
  if (bpf_link_detach(link.get()) != 0 && errno != ENOLINK) return errno_error("detach " + ifname);
  if (::unlink(pin.c_str()) != 0 && errno != ENOENT) return errno_error("unpin " + pin);
  return {};
}

}  // namespace rl
