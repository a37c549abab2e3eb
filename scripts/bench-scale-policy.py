#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""One policy of N rules and a source set of M prefixes per family, written for every contender
of the live benchmark's policy-size mode (scripts/bench-live.sh --rules N --set-prefixes M).

  scripts/bench-scale-policy.py DIR --rules N --set-prefixes M [--flood-port 9] [--contenders LIST]

The policy has bench/bench_scale.cc's shape: rule i (0 to N-2) matches UDP to port 2000 + i,
every other one (odd i) only from the set; the last rule matches the floods' traffic (UDP to
--flood-port) only from the set. Every rule limits each source address to 1 packet per minute,
burst 1, and drops the rest (bench-lab.sh's limiter). The set: M IPv4 /24s spread evenly over the
global unicast space and M IPv6 /48s over 2000::/3, then the floods' prefixes (198.18.0.0/15,
2001:db8::/32) last. The filler leaves out special-purpose space, the lab's addresses
(192.0.2.0/24, 3fff::/20) and the floods' prefixes, so no filler prefix overlaps another or
covers a lab host, and the flood's prefixes are the last a linear walk meets.

Files in DIR:
  listed.txt              the set, one prefix per line (rl's set file)
  policies/scale.yaml     rl's policy
  nftchain.nft            table netdev rlscale_chain: the rules as one linear chain
  nftvmap.nft             table netdev rlscale_vmap: verdict maps on family and port
  iptchain.v4, .v6        iptables-restore input: linear rules, the set as linear rules too
  ipset.restore           ipset restore input: hash:net per family
  ipset.v4, .v6           iptables-restore input: rules in port groups matching the ipsets
None hooks into the interface: bench-scale-lab.sh adds (and removes) one jump per contender.
--contenders (comma-separated: rl, nftchain, nftvmap, iptchain, ipset) writes only theirs.
"""
import argparse
import ipaddress
import math
import os

FLOOD4 = "198.18.0.0/15"
FLOOD6 = "2001:db8::/32"
# Excluded from the filler, in its units (IPv4 /24s, IPv6 /48s): IPv4 special-purpose blocks
# (RFC 6890), the lab's 192.0.2.0/24 and the floods' 198.18.0.0/15; above 224.0.0.0 nothing is
# unicast. IPv6: IETF special-purpose 2001::/23, 6to4, and the documentation prefixes
# (2001:db8::/32, the floods'; 3fff::/20, the lab's).
def units(nets, plen):
    out = []
    for n in nets:
        net = ipaddress.ip_network(n)
        shift = net.max_prefixlen - plen
        out.append((int(net.network_address) >> shift, int(net.broadcast_address) >> shift))
    return sorted(out)


EXCLUDED4 = units(("0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
                   "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24",
                   "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24"), 24)
EXCLUDED6 = units(("2001::/23", "2001:db8::/32", "2002::/16", "3fff::/20"), 48)

LIMIT = "limit rate over 1/minute burst 1 packets"
# hashlimit as bench-lab.sh's ipt contender, for the rule the flood meets.
HASHLIMIT = ("-m hashlimit --hashlimit-above 1/min --hashlimit-burst 1 --hashlimit-mode srcip "
             "--hashlimit-htable-size 1048576 --hashlimit-htable-max 1048576")
# The filler rules' limiters: the same per-source limit, in small tables (their sources never
# come; a table of 1,048,576 per rule would take 8 MB of buckets each in hashlimit, 16 MB in
# nftables), and hashlimit's garbage collection once an hour rather than once a second (20,000
# tables' timers every second would be the lab's noise, not a cost of the rules).
FILLER_SIZE = 256
FILLER_HASHLIMIT = ("-m hashlimit --hashlimit-above 1/min --hashlimit-burst 1 --hashlimit-mode srcip "
                    f"--hashlimit-htable-size {FILLER_SIZE} --hashlimit-htable-max {FILLER_SIZE} "
                    "--hashlimit-htable-gcinterval 3600000")


def spread(n, lo, hi, excluded):
    """n units at even steps over [lo, hi), skipping excluded ones; further passes, each offset
    by one more unit, fill what the skips left short."""
    step = max(1, (hi - lo) // (n + 1))
    out, offset = [], step // 2
    while len(out) < n:
        if offset >= step:
            raise SystemExit(f"bench-scale-policy: no room for {n} prefixes")
        for u in range(lo + offset, hi, step):
            if not any(a <= u <= b for a, b in excluded):
                out.append(u)
                if len(out) == n:
                    break
        offset += 1
    return sorted(set(out))


def fillers(m):
    """m IPv4 /24s over 1.0.0.0 to 223.255.255.255 and m IPv6 /48s over 2000::/3."""
    v4 = [f"{u >> 16}.{(u >> 8) & 255}.{u & 255}.0/24"
          for u in spread(m, 1 << 16, 224 << 16, EXCLUDED4)]
    v6 = [f"{u >> 32:x}:{(u >> 16) & 0xffff:x}:{u & 0xffff:x}::/48"
          for u in spread(m, 0x2000 << 32, 0x4000 << 32, EXCLUDED6)]
    return v4, v6


def ports(n, flood_port):
    """(port, from the set) of every rule, the flood's last."""
    return [(2000 + i, i % 2 == 1) for i in range(n - 1)] + [(flood_port, True)]


def write_rl(d, n, flood_port, _v4, _v6):
    with open(os.path.join(d, "policies", "scale.yaml"), "w") as f:
        f.write("sets:\n  listed: {file: %s}\nrules:\n" % os.path.join(d, "listed.txt"))
        for i, (port, from_set) in enumerate(ports(n, flood_port)):
            last = i == n - 1
            src = ", sources: [listed]" if from_set else ""
            f.write(f"  - name: {'flood' if last else f'r{i}'}\n"
                    f"    priority: {i}\n"
                    f"    match: {{protocol: udp, port: {port}{src}}}\n"
                    "    limit: {rate: 1/min, burst: 1}\n"
                    "    prefix: {ipv6: 128}\n"
                    "    report: false\n")


def nft_sets(f, n):
    f.write("  set src4 { type ipv4_addr; flags interval; }\n")
    f.write("  set src6 { type ipv6_addr; flags interval; }\n")
    for i in range(n):
        size = 1048576 if i == n - 1 else FILLER_SIZE
        f.write(f"  set m4_{i} {{ type ipv4_addr; size {size}; flags dynamic; }}\n")
        f.write(f"  set m6_{i} {{ type ipv6_addr; size {size}; flags dynamic; }}\n")


def nft_elements(f, table, v4, v6):
    for name, elems in (("src4", v4), ("src6", v6)):
        for k in range(0, len(elems), 10000):
            f.write(f"add element netdev {table} {name} {{ {', '.join(elems[k:k + 10000])} }}\n")


def nft_action(fam, i, from_set):
    addr = "ip saddr" if fam == 4 else "ip6 saddr"
    cond = f"{addr} @src{fam} " if from_set else ""
    return f"{cond}update @m{fam}_{i} {{ {addr} {LIMIT} }} drop"


def write_nftchain(d, n, flood_port, v4, v6):
    """As a user writes it: a rule per family and policy rule, in order, in one chain."""
    with open(os.path.join(d, "nftchain.nft"), "w") as f:
        f.write("table netdev rlscale_chain {\n")
        nft_sets(f, n)
        f.write("  chain rules {\n")
        for i, (port, from_set) in enumerate(ports(n, flood_port)):
            for fam, proto in ((4, "ip"), (6, "ip6")):
                f.write(f"    meta protocol {proto} udp dport {port} {nft_action(fam, i, from_set)}\n")
        f.write("  }\n}\n")
        nft_elements(f, "rlscale_chain", v4, v6)


def write_nftvmap(d, n, flood_port, v4, v6):
    """As an expert writes it: a verdict map on the family, then one on the port, to a chain per
    rule and family; no packet walks the rules."""
    with open(os.path.join(d, "nftvmap.nft"), "w") as f:
        f.write("table netdev rlscale_vmap {\n")
        nft_sets(f, n)
        for i, (_, from_set) in enumerate(ports(n, flood_port)):
            for fam in (4, 6):
                f.write(f"  chain r{fam}_{i} {{ {nft_action(fam, i, from_set)}; }}\n")
        for fam in (4, 6):
            m = ", ".join(f"{p} : jump r{fam}_{i}" for i, (p, _) in enumerate(ports(n, flood_port)))
            f.write(f"  chain v{fam} {{ udp dport vmap {{ {m} }}; }}\n")
        f.write("  chain main { meta protocol vmap { ip : jump v4, ip6 : jump v6 }; }\n}\n")
        nft_elements(f, "rlscale_vmap", v4, v6)


def write_iptchain(d, n, flood_port, v4, v6):
    """As a user writes it without ipset: the set's prefixes as rules of their own chain, walked
    once per packet, which marks a member (a goto ends the walk at its prefix); then the rules in
    order, each testing the mark where it needs the set."""
    for fam, prefixes in ((4, v4), (6, v6)):
        with open(os.path.join(d, f"iptchain.v{fam}"), "w") as f:
            f.write("*raw\n:RLS-C - [0:0]\n:RLS-CSET - [0:0]\n:RLS-CHIT - [0:0]\n")
            f.write("-A RLS-CHIT -j MARK --set-xmark 0x1/0x1\n")
            for p in prefixes:
                f.write(f"-A RLS-CSET -s {p} -g RLS-CHIT\n")
            f.write("-A RLS-C -j RLS-CSET\n")
            for i, (port, from_set) in enumerate(ports(n, flood_port)):
                last = i == n - 1
                mark = "-m mark --mark 0x1/0x1 " if from_set else ""
                hl = HASHLIMIT if last else FILLER_HASHLIMIT
                f.write(f"-A RLS-C -p udp --dport {port} {mark}{hl} "
                        f"--hashlimit-name {'clast' if last else f'c{i}'} -j DROP\n")
            f.write("COMMIT\n")


def write_ipset(d, n, flood_port, v4, v6):
    """As an expert writes it: the set as a hash:net ipset per family, and the rules in groups of
    about sqrt(N) consecutive ports, each behind one jump on its port range, so that a packet
    meets about 2 sqrt(N) rules rather than N (iptables has no verdict maps)."""
    with open(os.path.join(d, "ipset.restore"), "w") as f:
        for fam, prefixes in (("inet", v4), ("inet6", v6)):
            size = 1 << max(10, math.ceil(math.log2(len(prefixes))))
            f.write(f"create rlscale-{fam} hash:net family {fam} hashsize {size} "
                    f"maxelem {max(65536, 2 * len(prefixes))}\n")
            f.writelines(f"add rlscale-{fam} {p}\n" for p in prefixes)
    g = math.isqrt(n)
    g += g * g < n
    rules = ports(n, flood_port)
    for fam in (4, 6):
        with open(os.path.join(d, f"ipset.v{fam}"), "w") as f:
            f.write("*raw\n:RLS-S - [0:0]\n")
            groups = [list(range(k, min(k + g, n))) for k in range(0, n, g)]
            for j in range(len(groups)):
                f.write(f":RLS-S{j} - [0:0]\n")
            for j, group in enumerate(groups):
                filler = [rules[i][0] for i in group if i != n - 1]
                span = "" if not filler else str(filler[0]) if len(filler) == 1 else \
                    f"{filler[0]}:{filler[-1]}"
                if n - 1 in group:
                    spec = f"-m multiport --dports {span + ',' if span else ''}{flood_port}"
                else:
                    spec = f"--dport {span}"
                f.write(f"-A RLS-S -p udp {spec} -j RLS-S{j}\n")
                for i in group:
                    port, from_set = rules[i]
                    last = i == n - 1
                    member = f"-m set --match-set rlscale-inet{'' if fam == 4 else '6'} src " \
                        if from_set else ""
                    hl = HASHLIMIT if last else FILLER_HASHLIMIT
                    f.write(f"-A RLS-S{j} -p udp --dport {port} {member}"
                            f"{hl} --hashlimit-name {'slast' if last else f's{i}'} -j DROP\n")
            f.write("COMMIT\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--rules", type=int, required=True)
    ap.add_argument("--set-prefixes", type=int, required=True)
    ap.add_argument("--flood-port", type=int, default=9)
    ap.add_argument("--contenders", default="rl,nftchain,nftvmap,iptchain,ipset")
    a = ap.parse_args()
    if a.rules < 2 or a.rules > 16384 or a.set_prefixes < 1:
        ap.error("--rules takes 2 to 16384, --set-prefixes at least 1")
    d = os.path.abspath(a.dir)
    os.makedirs(os.path.join(d, "policies"), exist_ok=True)
    v4, v6 = fillers(a.set_prefixes)
    v4.append(FLOOD4)
    v6.append(FLOOD6)
    with open(os.path.join(d, "listed.txt"), "w") as f:
        f.writelines(p + "\n" for p in v4 + v6)
    writers = {"rl": write_rl, "nftchain": write_nftchain, "nftvmap": write_nftvmap,
               "iptchain": write_iptchain, "ipset": write_ipset}
    for who in filter(None, a.contenders.split(",")):
        if who not in writers:
            ap.error(f"--contenders: {who} is none of " + ", ".join(writers))
        writers[who](d, a.rules, a.flood_port, v4, v6)


if __name__ == "__main__":
    main()
