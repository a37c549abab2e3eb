#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The main job in one command, on a fresh machine (as root): install the dependencies, build,
# start rld on a lab interface with the shipped policies, send a short flood from spoofed
# sources, and show it being limited in `rlctl stats`, `rlctl top` and on the metrics endpoint.
#
#   scripts/demo.sh
#
# Everything runs in two network namespaces made for the demo (rl-demo-cli, rl-demo-srv) joined
# by a veth pair; nothing is sent outside them, and everything is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "scripts/demo.sh: run as root (XDP and namespaces)" >&2; exit 1; }

[ "${RL_SKIP_DEPS:-0}" = 1 ] || bash scripts/install-deps.sh
build=${RL_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" --target rld rlctl rlsend >/dev/null

lab=rl-demo
source scripts/lab-rld.sh
rlctl() { "$build/controller/rlctl/rlctl" -s "$work/rld.sock" "$@"; }
mkdir -p "$work/policies"
cp policies/*.yaml "$work/policies/"
echo "== rld on $lab-srv/rls0 with the shipped policies (policies/*.yaml)"
nsenter --net=/run/netns/$lab-srv "$rld" --interface rls0 --policy-dir "$work/policies" \
  --pin-root "$pins" --control-socket "$work/rld.sock" --metrics-listen 127.0.0.1:9464 \
  --key-capacity 65536 2>"$work/rld.log" &
rld_pid=$!
for _ in $(seq 50); do grep -q "rld running" "$work/rld.log" && break; sleep 0.1; done
rlctl status

mac=$(ip netns exec $lab-srv cat /sys/class/net/rls0/address)
send() { ip netns exec $lab-cli "$build/tools/rlsend/rlsend" --iface rlc0 --dst-mac "$mac" --quiet "$@"; }
echo
# All 40 sources are in one /24: web.yaml's per-24 limit refuses the flood, and the per-source
# limit, which gets back what each refused SYN took from it, refuses none of it.
echo "== flood: 4,000 TCP SYNs to port 80 from 40 spoofed sources of one /24 (refused by web.yaml's per-24 cap: 30/s, burst 50)"
send --src 198.18.100.0/24 --sources 40 --dst 192.0.2.2 --proto tcp --syn --dport 80 --count 4000 --rate 4000
echo "== flood: 3,000 DNS queries from one IPv6 /64 (dns.yaml: 200/s, burst 400 per /64)"
send --src 2001:db8:77::/64 --sources 300 --dst 3fff:0:ff::2 --proto udp --dport 53 --count 3000 --rate 3000
echo "== 500 SSH SYNs from one source (monitor.yaml: counted, not dropped)"
send --src 198.18.101.1 --dst 192.0.2.2 --proto tcp --syn --dport 22 --count 500 --rate 2000
sleep 1

echo
echo "== rlctl stats"
rlctl stats
echo
echo "== rlctl top"
rlctl top -n 5
echo
echo "== metrics endpoint (127.0.0.1:9464 inside $lab-srv)"
ip netns exec $lab-srv curl -s 127.0.0.1:9464/metrics | grep -E '^rl_rule_packets_total.*(dropped|monitored)' || true
echo
echo "== offender log (first lines)"
grep offender "$work/rld.log" | head -5 || true
