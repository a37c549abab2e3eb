#!/usr/bin/env bash
# Receive-side cost of dropping a UDP flood on a real (veth) interface: rl against nftables
# (a per-source meter) and iptables (hashlimit), with no filter and an XDP drop-all program as
# references, all measured in the same run. Not a test: it prints figures.
#
#   sudo scripts/bench-lab.sh [packets]        (default 1000000 per figure)
#
# The flood goes from one lab namespace to another over a veth pair (nothing leaves them),
# from 1 source and from 65,535 spoofed sources in 198.18.0.0/16, to UDP port 9. Every
# configuration drops what exceeds 1 packet per minute per source. The figure is the machine's
# whole CPU time (both CPUs, user + system + softirq, from /proc/stat) per packet while the
# flood runs, sender included; the sender's share is the same in every row, so differences
# between rows are receive-side costs.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "run as root" >&2; exit 1; }
packets=${1:-1000000}
build=${RL_BUILD_DIR:-build}
cmake --build "$build" -j"$(nproc)" --target rld rlsend rl_drop_skel_gen >/dev/null

lab=rl-benchlab
source scripts/lab-rld.sh
srv="ip netns exec $lab-srv"
mac=$($srv cat /sys/class/net/rls0/address)

cpu_ticks() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
hz=$(getconf CLK_TCK)

# Sends the flood; prints CPU ns per packet over the send.
measure() {
  local sources=$1 src
  if [ "$sources" = 1 ]; then src=198.18.7.7; else src=198.18.0.0/16; fi
  local t0 t1 c0 c1
  c0=$(cpu_ticks); t0=$(date +%s.%N)
  ip netns exec $lab-cli "$build/tools/rlsend/rlsend" --iface rlc0 --dst-mac "$mac" --quiet \
    --src "$src" --sources "$sources" --dst 192.0.2.2 --proto udp --dport 9 --count "$packets" \
    --max-seconds 60 >/dev/null
  c1=$(cpu_ticks); t1=$(date +%s.%N)
  echo "$c0 $c1 $hz $packets $t0 $t1" | awk '{printf "%.0f %.2f", ($2 - $1) / $3 * 1e9 / $4, $4 / ($6 - $5) / 1e6}'
}

none()      { :; }
xdp_drop()  { $srv ip link set dev rls0 xdpdrv obj "$build/bpf/skel/rl_drop.bpf.o" sec xdp; }
xdp_off()   { $srv ip link set dev rls0 xdpdrv off 2>/dev/null || true; }
rl_on() {
  mkdir -p "$work/policies"
  printf 'rules:\n  - name: flood\n    match: {protocol: udp, port: 9}\n    limit: {rate: 1/min, burst: 1}\n    report: false\n' \
    > "$work/policies/flood.yaml"
  nsenter --net=/run/netns/$lab-srv "$rld" --interface rls0 --xdp-mode native --policy-dir "$work/policies" \
    --pin-root "$pins" --control-socket "$work/rld.sock" --metrics-listen "" --key-capacity 1048576 \
    --log-level warn 2>"$work/rld.log" &
  rld_pid=$!
  for _ in $(seq 100); do [ -S "$work/rld.sock" ] && break; sleep 0.1; done
}
rl_off() {
  kill "$rld_pid"; wait "$rld_pid" 2>/dev/null || true; rld_pid=
  nsenter --net=/run/netns/$lab-srv "$rld" --cleanup --pin-root "$pins" >/dev/null
}
nft_on() {
  $srv nft -f - <<'NFT'
table inet rlbench {
  chain input {
    type filter hook input priority 0;
    udp dport 9 meter flood size 1048576 { ip saddr limit rate over 1/minute burst 1 packets } drop
  }
}
NFT
}
nft_off()   { $srv nft delete table inet rlbench; }
ipt_on()    { $srv iptables -A INPUT -p udp --dport 9 -m hashlimit --hashlimit-above 1/min --hashlimit-burst 1 \
                --hashlimit-mode srcip --hashlimit-name rlbench --hashlimit-htable-size 1048576 \
                --hashlimit-htable-max 1048576 -j DROP; }
ipt_off()   { $srv iptables -F INPUT; }

printf '%-28s %24s %24s\n' "" "1 source" "65,535 sources"
printf '%-28s %8s %8s %6s  %8s %8s %6s\n' "configuration" "total" "receive" "Mpps" "total" "receive" "Mpps"
floor_one=0
floor_many=0
for cfg in "XDP drop-all (floor):xdp_drop:xdp_off" "no filter (kernel stack):none:none" \
           "rl (XDP, native):rl_on:rl_off" "nftables meter:nft_on:nft_off" \
           "iptables hashlimit:ipt_on:ipt_off"; do
  IFS=: read -r name on off <<<"$cfg"
  $on >/dev/null 2>&1
  measure 1 >/dev/null  # warm up: keys created, caches filled
  read -r one one_mpps <<<"$(measure 1)"
  measure 65535 >/dev/null
  read -r many many_mpps <<<"$(measure 65535)"
  $off >/dev/null 2>&1
  if [ "$on" = xdp_drop ]; then floor_one=$one; floor_many=$many; fi
  printf '%-28s %8s %8s %6s  %8s %8s %6s\n' "$name" "$one" "$((one - floor_one))" "$one_mpps" \
    "$many" "$((many - floor_many))" "$many_mpps"
done
echo "ns of CPU per packet. total: the whole machine, sender included. receive: total less the"
echo "XDP drop-all row (the sender and the cheapest possible drop). $packets packets per figure."
