// SPDX-License-Identifier: GPL-2.0-only
// The stack side of SYN cookies as text: which ports, the nft script, the recorded sysctl. Its
// effect on a real kernel is tested in tests/integration/syncookie_test.cc.
#include "daemon/synproxy/synproxy.h"

#include <gtest/gtest.h>

namespace rl::daemon {
namespace {

policy::Rule tcp_rule(std::vector<policy::PortRange> ports, bool cookies) {
  policy::Rule r;
  r.match.protocol = 6;
  r.match.ports = std::move(ports);
  r.syn_cookies = cookies;
  return r;
}

TEST(SynProxy, PortsOfCookieRulesOnlyMerged) {
  policy::Policy p;
  p.rules = {tcp_rule({{443, 443}, {80, 80}}, true), tcp_rule({{22, 22}}, false),
             tcp_rule({{8000, 8100}, {81, 81}}, true), tcp_rule({{8050, 8200}}, true)};
  EXPECT_EQ(syn_cookie_ports(p),
            (std::vector<policy::PortRange>{{80, 81}, {443, 443}, {8000, 8200}}));
  p.rules = {tcp_rule({{22, 22}}, false)};
  EXPECT_TRUE(syn_cookie_ports(p).empty());
}

TEST(SynProxy, ScriptReplacesTheTableInOneTransaction) {
  std::string s = synproxy_script({{80, 80}, {8000, 8100}}, 1);
  // Declared, deleted, defined: one nft run, so the old table stays if the new one fails.
  EXPECT_EQ(
      s.find("table inet rl_synproxy\ndelete table inet rl_synproxy\ntable inet rl_synproxy {"), 0u)
      << s;
  EXPECT_NE(s.find("nf_conntrack_tcp_loose was 1"), std::string::npos);
  EXPECT_NE(s.find("hook prerouting priority raw"), std::string::npos);
  EXPECT_NE(
      s.find("tcp dport { 80, 8000-8100 } tcp flags & (fin | syn | rst | ack) == syn notrack"),
      std::string::npos)
      << s;
  EXPECT_NE(s.find("meta nfproto ipv4 tcp dport { 80, 8000-8100 } ct state invalid,untracked "
                   "synproxy mss 1460 wscale 7 timestamp sack-perm"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("meta nfproto ipv6 tcp dport { 80, 8000-8100 } ct state invalid,untracked "
                   "synproxy mss 1440 wscale 7"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("ct state invalid drop"), std::string::npos);
}

TEST(SynProxy, RecordedSysctlIsReadBack) {
  EXPECT_EQ(recorded_tcp_loose(synproxy_script({{80, 80}}, 1)), 1);
  EXPECT_EQ(recorded_tcp_loose(synproxy_script({{80, 80}}, 0)), 0);
  EXPECT_EQ(recorded_tcp_loose("table inet rl_synproxy {\n}"), -1);
  EXPECT_EQ(recorded_tcp_loose(""), -1);
}

TEST(SynProxy, SysctlPathIsInTheConfiguredDirectory) {
  EXPECT_EQ(tcp_loose_path(kNetfilterSysctlDir), "/proc/sys/net/netfilter/nf_conntrack_tcp_loose");
  EXPECT_EQ(tcp_loose_path("/host/proc/sys/net/netfilter/"),
            "/host/proc/sys/net/netfilter/nf_conntrack_tcp_loose");
}

}  // namespace
}  // namespace rl::daemon
