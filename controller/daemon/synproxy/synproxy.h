// SPDX-License-Identifier: GPL-2.0-only
// The stack's half of SYN cookies. The XDP program answers a syn_cookies rule's SYNs and checks
// the cookie the client's ACK brings back; the connection to the local server is then opened by
// the kernel's SYNPROXY, which needs netfilter in place:
//   - SYNs to the rules' ports untracked (raw priority), so the stack allocates nothing for them
//     (also for the few SYNs the program leaves to the stack: it answers them the same way);
//   - SYNPROXY for untracked and invalid packets of those ports, invalid ones dropped after it;
//   - conntrack strict about connections it did not see start (nf_conntrack_tcp_loose=0),
//     else the cookie's ACK would open an entry the server's socket knows nothing about.
// rld keeps the rules in one nftables table of its own and replaces it in one transaction. The
// table's comment records the sysctl's value before rld changed it, so whichever rld removes the
// table restores it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "daemon/policy/policy_manager.h"
#include "policy/model.h"

namespace rl::daemon {

inline constexpr char kSynProxyTable[] = "rl_synproxy";  // family inet
// Where the sysctl is by default; netfilter_sysctl_dir names another view of that directory (a
// container whose /proc/sys is read-only gets the node's bound read-write elsewhere).
inline constexpr char kNetfilterSysctlDir[] = "/proc/sys/net/netfilter";
inline constexpr char kTcpLooseName[] = "nf_conntrack_tcp_loose";

// The sysctl's file in `sysctl_dir`.
std::string tcp_loose_path(const std::string& sysctl_dir);

// The destination ports of the policy's syn_cookies rules, sorted and merged.
std::vector<policy::PortRange> syn_cookie_ports(const policy::Policy& p);

// The nft script that replaces rld's table with one for `ports` (not empty); `loose_before` is
// the sysctl's value to restore when the table goes.
std::string synproxy_script(const std::vector<policy::PortRange>& ports, int loose_before);

// The value recorded in the comment of a listed table, -1 if none.
int recorded_tcp_loose(const std::string& listing);

class SynProxy final : public PolicyHooks {
 public:
  // `sysctl_dir`: the directory holding nf_conntrack_tcp_loose (netfilter_sysctl_dir).
  explicit SynProxy(std::string sysctl_dir = kNetfilterSysctlDir)
      : sysctl_dir_(std::move(sysctl_dir)) {}

  // Installs the stack side for the policy about to be applied, in addition to what is in force
  // (both rule sets' SYNs are answered correctly during the switch); an error refuses the policy:
  // without SYNPROXY, connections whose SYN the program answered would be reset.
  Status prepare(const policy::Policy& next) override;
  // Leaves exactly what the policy in force needs.
  void settle(const policy::Policy& in_force) override;

  // Without an attached interface nothing answers SYNs in XDP: while disabled, settle()
  // removes the stack side, and the first settle() after enabling puts it back.
  void enable(bool on) { enabled_ = on; }

  // Removes rld's table, if any, and restores the sysctl in `sysctl_dir` (rld --cleanup,
  // --detach-on-exit). When the recorded value cannot be written back the table stays, with
  // its record, so that a run that can write it restores it.
  static Status remove(const std::string& sysctl_dir);
  // Puts rld's table back if something else removed it (`nft flush ruleset`, as
  // nftables.service runs on reload); rld calls it every few seconds.
  void restore();

 private:
  Status install(const std::vector<policy::PortRange>& ports);

  std::string sysctl_dir_;
  bool enabled_ = true;
  bool known_ = false;  // whether ports_ is what the kernel holds (false until the first install)
  std::vector<policy::PortRange> ports_;
  // nf_conntrack_tcp_loose before rld set it, as recorded in its table: kept here too, so that a
  // table put back after a flush still restores the operator's value, not rld's 0. -1: none.
  int tcp_loose_before_ = -1;
};

}  // namespace rl::daemon
