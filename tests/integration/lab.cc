// SPDX-License-Identifier: GPL-2.0-only
#include "lab.h"

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <random>
#include <ranges>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include "common/prefix.h"

namespace rl::testing {
namespace {

// A command in the host namespace (ip netns add/del, ip link add): lab members have their own
// run(), which would enter a namespace.
Output host(const std::vector<std::string>& argv) { return run(argv, Lab::kCommandTimeout); }

Status check(const Output& o, const std::string& what) {
  if (o.ok()) return {};
  return Error{0, what + ": " + o.describe()};
}

std::string random_hex(int digits) {
  std::random_device rd;
  std::uniform_int_distribution<uint32_t> dist(0, (1u << (4 * digits)) - 1);
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%0*x", digits, dist(rd));
  return buf;
}

// The PID in a name of the form rl-<pid>-..., or 0 when the name has another form (a lab made
// by hand with scripts/lab.sh, say), which reap_stale() then leaves alone.
pid_t owner_pid(const std::string& name) {
  if (name.rfind("rl-", 0) != 0) return 0;
  size_t end = name.find('-', 3);
  if (end == std::string::npos || end == 3 || end > 3 + 9) return 0;
  pid_t pid = 0;
  for (size_t i = 3; i < end; i++) {
    if (name[i] < '0' || name[i] > '9') return 0;
    pid = pid * 10 + (name[i] - '0');
  }
  return pid;
}

// Kills what runs inside (our own children, or orphans of a crashed run), then deletes the
// name; the kernel frees the namespace, and with it the veth ends, once nothing holds it.
Status delete_namespace(const std::string& name) {
  std::istringstream pids(host({"ip", "netns", "pids", name}).out);
  for (pid_t pid; pids >> pid;)
    if (pid > 1 && pid != getpid()) kill(pid, SIGKILL);
  Output out = host({"ip", "netns", "del", name});
  if (!out.ok() && access(("/run/netns/" + name).c_str(), F_OK) != 0) return {};  // raced: gone
  return check(out, "ip netns del " + name);
}

const char* const kNamespaceSysctls[] = {
    // Spoofed sources have no route back; strict or loose reverse-path filtering would drop them
    // before any socket (or counter past XDP) sees them.
    "net.ipv4.conf.all.rp_filter=0",
    "net.ipv4.conf.default.rp_filter=0",
    // Addresses usable at once, and no solicitations adding packets to the counters.
    "net.ipv6.conf.all.accept_dad=0",
    "net.ipv6.conf.default.accept_dad=0",
    "net.ipv6.conf.default.router_solicitations=0",
};

}  // namespace

Result<Lab> Lab::create(LabOptions options) {
  if (options.servers < 1 || options.servers + options.side_links > kMaxServers)
    return Error{0, "lab: servers must be between 1 and " + std::to_string(kMaxServers) +
                        ", side links included"};
  if (geteuid() != 0) return Error{EPERM, "lab: network namespaces need root"};
  if (options.reap_stale) {
    if (auto r = reap_stale(); !r)
      std::fprintf(stderr, "lab: warning: %s\n", r.error().str().c_str());
  }
  Lab lab{Empty{}};
  if (auto s = lab.build(options); !s) return s.error().wrap("lab");  // ~Lab removes the rest
  return lab;
}

Lab Lab::unwrap(Result<Lab> r) {
  if (!r) throw std::runtime_error(r.error().str());
  return std::move(r).value();
}

Lab::Lab(LabOptions options) : Lab(unwrap(create(options))) {}

Lab::Lab(Lab&& o) noexcept
    : tag_(std::move(o.tag_)),
      suffix_(std::move(o.suffix_)),
      client_ns_(std::move(o.client_ns_)),
      created_(std::exchange(o.created_, {})),
      pairs_(std::move(o.pairs_)),
      side_(std::move(o.side_)) {}

Lab::~Lab() { destroy(); }

void Lab::destroy() {
  // Reverse iterators, not std::views::reverse, which clang 14 cannot parse in libstdc++ 12.
  for (auto ns = created_.rbegin(); ns != created_.rend(); ++ns)  // NOLINT(modernize-loop-convert)
    if (auto s = delete_namespace(*ns); !s)
      std::fprintf(stderr, "lab: cleanup: %s\n", s.error().str().c_str());
  created_.clear();
}

Status Lab::build(const LabOptions& options) {
  suffix_ = random_hex(6);
  tag_ = std::to_string(getpid()) + "-" + suffix_;
  client_ns_ = "rl-" + tag_ + "-cli";
  if (auto s = add_namespace(client_ns_); !s) return s;
  for (size_t i = 0; i < options.servers; i++)
    if (auto s = add_namespace("rl-" + tag_ + "-srv" + std::to_string(i)); !s) return s;
  for (size_t i = 0; i < options.servers; i++) {
    auto p = add_pair(i, i);
    if (!p) return p.error();
    pairs_.push_back(*p);
  }
  for (size_t k = 0; k < options.side_links; k++) {
    auto p = add_pair(options.servers + k, 0);
    if (!p) return p.error();
    side_.push_back(*p);
  }
  return settle();
}

Status Lab::settle() const {
  // The kernel finishes an interface's setup after `ip link set up` returns: the link-local
  // address waits for linkwatch (rate-limited, up to a second) and is tentative for a moment
  // even without DAD. Handing the lab over before would race tests against that setup.
  auto until = std::chrono::steady_clock::now() + kCommandTimeout;
  std::vector<Pair> all = pairs_;
  all.insert(all.end(), side_.begin(), side_.end());
  for (const auto& p : all) {
    for (const Endpoint* e : {&p.client, &p.server}) {
      for (;;) {
        auto out = host(
            {"ip", "-n", e->ns, "-6", "-o", "addr", "show", "dev", e->ifname, "scope", "link"});
        if (auto s = check(out, e->ns + ": ip addr show " + e->ifname); !s) return s;
        if (out.out.find("fe80") != std::string::npos &&
            out.out.find("tentative") == std::string::npos)
          break;
        if (std::chrono::steady_clock::now() >= until)
          return Error{0, e->ns + ": " + e->ifname + " not settled: " + out.out};
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
  }
  return {};
}

Status Lab::add_namespace(const std::string& name) {
  if (auto s = check(host({"ip", "netns", "add", name}), "ip netns add " + name); !s) return s;
  created_.push_back(name);
  if (auto s = check(host({"ip", "-n", name, "link", "set", "lo", "up"}), name + ": lo up"); !s)
    return s;
  std::vector<std::string> argv{"sysctl", "-q", "-w"};
  argv.insert(argv.end(), std::begin(kNamespaceSysctls), std::end(kNamespaceSysctls));
  return check(this->run(name, argv), name + ": sysctl");
}

// Pair number i (its addresses and names) between the client and server `server`.
Result<Pair> Lab::add_pair(size_t i, size_t server) {
  std::string n = std::to_string(i);
  char v6[48];
  auto v6_host = [&](int host) {
    std::snprintf(v6, sizeof(v6), "3fff:0:ff:%zx::%d", i, host);
    return Address::parse(v6)->str();  // canonical, as ip and sockets print it
  };
  auto v4_host = [&](int host) { return "192.0.2." + std::to_string(4 * i + host); };
  Pair p;
  p.client = {client_ns_, "rl" + suffix_ + "c" + n, 0, "", v4_host(1), v6_host(1)};
  p.server = {"rl-" + tag_ + "-srv" + std::to_string(server),
              "rl" + suffix_ + "s" + n,
              0,
              "",
              v4_host(2),
              v6_host(2)};

  // Both ends are created directly in their namespaces: the pair never appears in the host's.
  auto out = host({"ip", "link", "add", p.client.ifname, "netns", p.client.ns, "type", "veth",
                   "peer", "name", p.server.ifname, "netns", p.server.ns});
  if (auto s = check(out, "veth " + p.client.ifname + " <-> " + p.server.ifname); !s)
    return s.error();
  for (Endpoint* e : {&p.client, &p.server}) {
    auto read = read_endpoint(*e);
    if (!read) return read.error();
    *e = *read;
  }
  if (auto s = configure_pair(p); !s) return s.error();
  return p;
}

Status Lab::recreate_pair(size_t i) {
  Pair& p = pairs_.at(i);
  auto del = host({"ip", "-n", p.server.ns, "link", "del", p.server.ifname});
  if (auto s = check(del, "delete " + p.server.ifname); !s) return s;
  auto out = host({"ip", "link", "add", p.client.ifname, "netns", p.client.ns, "address",
                   p.client.mac, "type", "veth", "peer", "name", p.server.ifname, "netns",
                   p.server.ns, "address", p.server.mac});
  if (auto s = check(out, "veth " + p.client.ifname + " <-> " + p.server.ifname); !s) return s;
  for (Endpoint* e : {&p.client, &p.server}) {
    auto read = read_endpoint(*e);
    if (!read) return read.error();
    *e = *read;
  }
  if (auto s = configure_pair(p); !s) return s;
  return settle();
}

Status Lab::configure_pair(const Pair& p) {
  for (auto [self, peer] : {std::pair{&p.client, &p.server}, std::pair{&p.server, &p.client}}) {
    const std::string& ns = self->ns;
    const std::string& dev = self->ifname;
    std::vector<std::vector<std::string>> steps = {
        {"ip", "-n", ns, "addr", "add", self->ipv4 + "/" + std::to_string(kPrefix4), "dev", dev},
        {"ip", "-n", ns, "addr", "add", self->ipv6 + "/" + std::to_string(kPrefix6), "dev", dev,
         "nodad"},
        // Static neighbours: no ARP or ND exchange to wait for or to show up in the counters.
        {"ip", "-n", ns, "neigh", "replace", peer->ipv4, "lladdr", peer->mac, "dev", dev, "nud",
         "permanent"},
        {"ip", "-n", ns, "neigh", "replace", peer->ipv6, "lladdr", peer->mac, "dev", dev, "nud",
         "permanent"},
        {"ip", "-n", ns, "link", "set", dev, "up"},
    };
    for (const auto& argv : steps)
      if (auto s = check(host(argv), ns + ": " + argv[3] + " " + argv[4]); !s) return s;
    auto rp = this->run(ns, {"sysctl", "-q", "-w", "net.ipv4.conf." + dev + ".rp_filter=0"});
    if (auto s = check(rp, ns + ": rp_filter on " + dev); !s) return s;
  }
  return {};
}

Result<Endpoint> Lab::read_endpoint(Endpoint e) const {
  std::string sys = "/sys/class/net/" + e.ifname + "/";
  auto out = run(e.ns, {"cat", sys + "ifindex", sys + "address"});
  if (auto s = check(out, e.ns + ": reading " + e.ifname); !s) return s.error();
  std::istringstream in(out.out);
  if (!(in >> e.ifindex >> e.mac)) return Error{0, e.ns + ": unreadable " + sys + ": " + out.out};
  return e;
}

std::vector<std::string> Lab::namespaces() const { return created_; }

Output Lab::run(const std::string& ns, const std::vector<std::string>& argv,
                std::chrono::milliseconds timeout) const {
  std::vector<std::string> full{"ip", "netns", "exec", ns};
  full.insert(full.end(), argv.begin(), argv.end());
  return testing::run(full, timeout);  // the free function, not this one
}

Output Lab::exec_in(const std::string& ns, const std::string& shell_command,
                    std::chrono::milliseconds timeout) const {
  return run(ns, {"/bin/sh", "-c", shell_command}, timeout);
}

Result<Process> Lab::spawn_in(const std::string& ns, const std::vector<std::string>& argv) const {
  std::vector<std::string> full{"ip", "netns", "exec", ns};
  full.insert(full.end(), argv.begin(), argv.end());
  return Process::spawn(full);
}

Result<IfStats> Lab::stats(const std::string& ns, const std::string& ifname) const {
  std::string dir = "/sys/class/net/" + ifname + "/statistics/";
  auto out = run(
      ns, {"cat", dir + "rx_packets", dir + "rx_bytes", dir + "rx_dropped", dir + "tx_packets"});
  if (auto s = check(out, ns + ": statistics of " + ifname); !s) return s.error();
  IfStats st;
  std::istringstream in(out.out);
  if (!(in >> st.rx_packets >> st.rx_bytes >> st.rx_dropped >> st.tx_packets))
    return Error{0, ns + ": unreadable statistics of " + ifname + ": " + out.out};
  return st;
}

std::vector<std::string> Lab::list_namespaces() {
  std::vector<std::string> names;
  DIR* dir = opendir("/run/netns");
  if (dir == nullptr) return names;
  while (dirent* e = readdir(dir))
    if (e->d_name[0] != '.') names.emplace_back(e->d_name);
  closedir(dir);
  return names;
}

Result<size_t> Lab::reap_stale() {
  size_t reaped = 0;
  std::optional<Error> first;
  for (const auto& name : list_namespaces()) {
    pid_t pid = owner_pid(name);
    if (pid <= 0 || pid == getpid()) continue;
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;  // owner alive (EPERM: alive, not ours)
    if (auto s = delete_namespace(name); !s) {
      if (!first) first = s.error();
      continue;
    }
    reaped++;
  }
  if (first) return first->wrap("reap_stale");
  return reaped;
}

}  // namespace rl::testing
