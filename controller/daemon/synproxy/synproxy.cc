// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/synproxy/synproxy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <memory>

#include "common/fd.h"
#include "common/log.h"
#include "daemon/netfilter/nft.h"
#include "rl_abi.h"

namespace rl::daemon {
namespace {

constexpr char kRecord[] = "nf_conntrack_tcp_loose was ";

std::string table_name() { return std::string("inet ") + kSynProxyTable; }

// rld's table as nft lists it, or "" when there is none.
Result<std::string> list_table(Nft& nft) {
  auto has = nft.has_table(table_name());
  if (!has) return has.error();
  if (!*has) return std::string();
  return nft.run("list table " + table_name());
}

Result<int> read_tcp_loose(const std::string& path) {
  std::ifstream in(path);
  int v = 0;
  if (!(in >> v)) return errno_error("read " + path);
  return v;
}

// Whether rld can read and write the sysctl in `dir`, checked without changing it, so that a
// policy is refused before nftables is touched. Absent because nf_conntrack is not loaded is not
// an error here: the table's ct and notrack expressions load it, and the sysctl is looked at
// again after the table went in.
enum class Sysctl { kUsable, kAbsent };
Result<Sysctl> check_tcp_loose(const std::string& dir) {
  const std::string path = tcp_loose_path(dir);
  if (::access(path.c_str(), F_OK) != 0) {
    if (errno != ENOENT) return errno_error("SYN cookies need " + path);
    // The default directory may itself come with conntrack; /proc/sys/net says /proc/sys is
    // there. Another directory is a mount of it, which must be there.
    const bool procfs = dir == kNetfilterSysctlDir;
    struct stat st {};
    if (::stat(procfs ? "/proc/sys/net" : dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return Error{
          ENOENT,
          "SYN cookies need " + path + ", and " +
              (procfs ? std::string("/proc/sys is not visible to rld (a unit with "
                                    "ProcSubset=pid, or a container without /proc/sys)")
                      : "netfilter_sysctl_dir " + dir + " is not a directory (mount the node's " +
                            kNetfilterSysctlDir + " there)")};
    return Sysctl::kAbsent;
  }
  if (UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)); !fd)
    return errno_error("SYN cookies need read access to " + path);
  if (UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC)); !fd) {
    int e = errno;
    std::string why;
    if (e == EROFS && dir == kNetfilterSysctlDir)
      why =
          " (read-only: a container without a writable /proc/sys, or a unit with "
          "ProtectKernelTunables=; in a container, mount the node's " +
          std::string(kNetfilterSysctlDir) +
          " read-write at another path, a hostPath volume in Kubernetes, and set "
          "netfilter_sysctl_dir to it)";
    else if (e == EROFS)
      why = " (read-only: netfilter_sysctl_dir " + dir + " is mounted read-only)";
    return errno_error("SYN cookies need write access to " + path + why, e);
  }
  return Sysctl::kUsable;
}

Status write_tcp_loose(const std::string& path, int v) {
  std::ofstream out(path);
  out << v << "\n";
  out.flush();
  if (!out) return errno_error("write " + path);
  return {};
}

std::string port_list(const std::vector<policy::PortRange>& ports) {
  std::string out;
  for (const auto& r : ports) {
    if (!out.empty()) out += ", ";
    out += std::to_string(r.first);
    if (r.last != r.first) out += "-" + std::to_string(r.last);
  }
  return out;
}

std::vector<policy::PortRange> merged(std::vector<policy::PortRange> ports) {
  std::sort(ports.begin(), ports.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<policy::PortRange> out;
  for (const auto& r : ports) {
    if (!out.empty() && uint32_t{r.first} <= uint32_t{out.back().last} + 1)
      out.back().last = std::max(out.back().last, r.last);
    else
      out.push_back(r);
  }
  return out;
}

}  // namespace

std::string tcp_loose_path(const std::string& sysctl_dir) {
  std::string path = sysctl_dir;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path + "/" + kTcpLooseName;
}

std::vector<policy::PortRange> syn_cookie_ports(const policy::Policy& p) {
  std::vector<policy::PortRange> ports;
  for (const auto& r : p.rules)
    if (r.syn_cookies) ports.insert(ports.end(), r.match.ports.begin(), r.match.ports.end());
  return merged(std::move(ports));
}

std::string synproxy_script(const std::vector<policy::PortRange>& ports, int loose_before) {
  // Every interface but loopback: an ACK whose SYN the program answered reaches the stack on
  // the device above the attached one (a VLAN, a bond, a bridge), whatever its name.
  const std::string iif = "\t\tiifname != \"lo\" ";
  const std::string dport = "tcp dport { " + port_list(ports) + " } ";
  auto synproxy = [&](const char* family, int mss) {
    return iif + "meta nfproto " + family + " " + dport +
           "ct state invalid,untracked synproxy mss " + std::to_string(mss) + " wscale " +
           std::to_string(RL_SYNCOOKIE_WSCALE) + " timestamp sack-perm\n";
  };
  const std::string t = table_name();
  std::string s;
  // Declaring the table first makes the delete valid when there is none: one transaction
  // replaces the table, or fails and leaves the old one.
  s += "table " + t + "\ndelete table " + t + "\n";
  s += "table " + t + " {\n";
  s += "\tcomment \"rld: stack side of SYN cookies; " + std::string(kRecord) +
       std::to_string(loose_before) + "\"\n";
  s += "\tchain prerouting {\n\t\ttype filter hook prerouting priority raw; policy accept;\n";
  s += iif + dport + "tcp flags & (fin | syn | rst | ack) == syn notrack\n\t}\n";
  s += "\tchain input {\n\t\ttype filter hook input priority filter; policy accept;\n";
  s += synproxy("ipv4", RL_SYNCOOKIE_MSS4) + synproxy("ipv6", RL_SYNCOOKIE_MSS6);
  s += iif + dport + "ct state invalid drop\n\t}\n}\n";
  return s;
}

int recorded_tcp_loose(const std::string& listing) {
  size_t at = listing.find(kRecord);
  if (at == std::string::npos) return -1;
  at += sizeof(kRecord) - 1;
  if (at >= listing.size() || listing[at] < '0' || listing[at] > '9') return -1;
  return listing[at] - '0';
}

Status SynProxy::install(const std::vector<policy::PortRange>& ports) {
  if (known_ && ports == ports_) return {};
  if (ports.empty()) {
    if (auto s = remove(sysctl_dir_); !s) return s;
    known_ = true;
    ports_.clear();
    tcp_loose_before_ = -1;
    return {};
  }
  // All or nothing: a table without the sysctl set would let the cookie's ACK open a conntrack
  // entry the server's socket knows nothing about, and connections to the port would fail.
  const std::string path = tcp_loose_path(sysctl_dir_);
  auto sysctl = check_tcp_loose(sysctl_dir_);
  if (!sysctl) return sysctl.error();
  Nft nft;
  auto listing = list_table(nft);
  if (!listing) return listing.error().wrap("SYN cookies");
  // The value before any rld changed it: the one recorded when the table was first made. When
  // conntrack is not loaded yet it comes with the table, at its default (1).
  int before = recorded_tcp_loose(*listing);
  if (before < 0) before = tcp_loose_before_;
  if (before < 0 && *sysctl == Sysctl::kAbsent) before = 1;
  if (before < 0) {
    auto now = read_tcp_loose(path);
    if (!now) return now.error().wrap("SYN cookies");
    before = *now;
  }
  if (auto out = nft.run(synproxy_script(ports, before)); !out)
    return out.error().wrap("SYN cookies: install the stack's SYNPROXY");
  if (Status set = write_tcp_loose(path, 0); !set) {
    // Back to what was there: the table before this one (by its listing) or none.
    std::string back = "table " + table_name() + "\ndelete table " + table_name() + "\n";
    if (!listing->empty()) back += *listing;
    auto undone = nft.run(back);
    // Why, as the sysctl looks now that the table (and conntrack with it) was in.
    auto now = check_tcp_loose(sysctl_dir_);
    Error e = !now                      ? now.error()
              : *now == Sysctl::kAbsent ? Error{ENOENT,
                                                "SYN cookies need the kernel's connection "
                                                "tracking (nf_conntrack): " +
                                                    path + " is absent"}
                                        : set.error().wrap("SYN cookies");
    if (!undone) e.message += "; and removing rld's table again failed: " + undone.error().str();
    return e;
  }
  known_ = true;
  ports_ = ports;
  tcp_loose_before_ = before;
  log::info(
      "SYN cookies: stack side installed",
      {{"nftables",
        "table " + table_name() + ": notrack for SYNs, SYNPROXY for untracked and invalid packets"},
       {"ports", port_list(ports)},
       {"sysctl", "net.netfilter.nf_conntrack_tcp_loose=0 (was " + std::to_string(before) + ")"},
       {"sysctl_path", path}});
  return {};
}

void SynProxy::restore() {
  if (!known_ || ports_.empty()) return;
  Nft nft;
  auto has = nft.has_table(table_name());
  if (!has || *has) return;
  known_ = false;
  if (Status s = install(ports_); !s) {
    log::error("SYN cookies: could not put rld's table back", {{"error", s.error().str()}});
    return;
  }
  log::warn("SYN cookies: rld's table was removed; put back",
            {{"nftables", "table " + table_name()}});
}

Status SynProxy::prepare(const policy::Policy& next) {
  if (!enabled_) return {};
  auto ports = syn_cookie_ports(next);
  if (ports.empty()) return {};
  if (known_) ports.insert(ports.end(), ports_.begin(), ports_.end());
  return install(merged(std::move(ports)));
}

void SynProxy::settle(const policy::Policy& in_force) {
  auto ports = enabled_ ? syn_cookie_ports(in_force) : std::vector<policy::PortRange>{};
  if (auto s = install(ports); !s)
    log::error("SYN cookies: the stack side does not match the policy",
               {{"error", s.error().str()}});
}

Status SynProxy::remove(const std::string& sysctl_dir) {
  Nft nft;
  auto listing = list_table(nft);
  if (!listing) return listing.error().wrap("SYN cookies");
  if (listing->empty()) return {};
  // The record goes with the table: it stays unless the value can be written back.
  const std::string path = tcp_loose_path(sysctl_dir);
  int before = recorded_tcp_loose(*listing);
  if (before >= 0) {
    auto sysctl = check_tcp_loose(sysctl_dir);
    if (sysctl && *sysctl == Sysctl::kAbsent)
      sysctl = Error{ENOENT, "SYN cookies: " + path + " is absent"};
    if (!sysctl)
      return sysctl.error().wrap("SYN cookies: table " + table_name() + " left in place to " +
                                 "restore nf_conntrack_tcp_loose=" + std::to_string(before));
  }
  if (auto out = nft.run("delete table " + table_name()); !out)
    return out.error().wrap("SYN cookies: remove the stack's SYNPROXY");
  if (before >= 0)
    if (auto s = write_tcp_loose(path, before); !s) return s.error().wrap("SYN cookies");
  log::info("SYN cookies: stack side removed",
            {{"nftables", "table " + table_name()},
             {"sysctl", "net.netfilter.nf_conntrack_tcp_loose=" + std::to_string(before)},
             {"sysctl_path", path}});
  return {};
}

}  // namespace rl::daemon
