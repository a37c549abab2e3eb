# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash disable=SC2154
# Sourced by the live benchmarks (bench-live.sh, bench-protect.sh): the lab they share
# (bench_lab_up), the receiving NAPI thread, the generator, and the contenders every benchmark
# measures, each switched on and off the same way. Expects $bench_name, $build_first, $raw and
# $batch from its caller; bench_lab_up sets $build, $send_cpu, $recv_cpu, $lab, $work, $pins,
# $rld, $cif, $sif, $cli, $srv, $rlflood, $mac and $raw_file.

# Checks, builds (with any extra targets), takes the one-benchmark-at-a-time lock and makes the
# lab (scripts/lab-rld.sh, which removes it on exit): bench_lab_up LAB CLIENT_IF SERVER_IF
# [TARGET...]. The interfaces' names are the benchmark's own, so that its NAPI thread
# ("napi/<ifname>-<id>") is told from other labs'.
bench_lab_up() {
  local name=$1 client_if=$2 server_if=$3 f
  shift 3
  [ "$(id -u)" -eq 0 ] || { echo "$0: run as root" >&2; exit 1; }
  build=${RL_BUILD_DIR:-build}
  send_cpu=${RL_BENCH_SEND_CPU:-0}
  recv_cpu=${RL_BENCH_RECV_CPU:-1}
  [ "$send_cpu" != "$recv_cpu" ] || { echo "$0: sender and receiver need different CPUs" >&2; exit 2; }
  if [ "$build_first" = 1 ]; then
    cmake --build "$build" -j"$(nproc)" --target rld rlctl rlflood rl_drop_skel_gen rl_src_drop_skel_gen rl_src_slot_skel_gen jit_lines \
      "$@" >/dev/null
  fi
  for f in "$build/tools/rlflood/rlflood" "$build/controller/rld/rld" "$build/controller/rlctl/rlctl" \
    "$build/bench/bpf/skel/rl_drop.bpf.o" "$build/bench/bpf/skel/rl_src_drop.bpf.o" \
    "$build/bench/bpf/skel/rl_src_slot.bpf.o"; do
    [ -e "$f" ] || { echo "$0: $f is missing (build first)" >&2; exit 1; }
  done
  # One live benchmark at a time: each finds its NAPI thread by the interface's name and needs
  # the CPUs to itself.
  exec 9>/run/rl-bench-live.lock
  flock -n 9 || { echo "$0: another live benchmark is in progress" >&2; exit 1; }

  lab=$name
  export RL_LAB_CLIENT_IF=$client_if RL_LAB_SERVER_IF=$server_if
  cif=$client_if sif=$server_if
  # shellcheck source=scripts/lab-rld.sh
  source scripts/lab-rld.sh
  trap bench_lab_cleanup EXIT
  cli="ip netns exec $lab-cli" srv="ip netns exec $lab-srv"
  rlflood="$build/tools/rlflood/rlflood"
  mac=$($srv cat /sys/class/net/"$sif"/address)
  napi_setup
  raw_file=${raw:-$work/raw.tsv}
  : >"$raw_file"
}

# On exit, the benchmark's own clean-up steps first (functions it adds here, each run even if
# another failed), then the lab's (rl_lab_cleanup: rld, its pins, the namespaces, $work).
bench_cleanup_hooks=()
bench_lab_cleanup() {
  local h
  for h in "${bench_cleanup_hooks[@]}"; do "$h" || true; done
  rl_lab_cleanup
}

log() { echo "$bench_name: $*" >&2; }
fail() {
  echo "$bench_name: $*" >&2
  exit 1
}

# The receiving veth's NAPI thread. A new one appears whenever NAPI is re-created (an XDP
# attach without GRO, a detach); wait until exactly one is left.
napi_pid() {
  local pids n
  for _ in $(seq 200); do
    pids=$(ps -e -o pid=,comm= | awk -v p="napi/$sif-" 'index($2, p) == 1 {print $1}')
    n=$(echo "$pids" | grep -c . || true)
    [ "$n" = 1 ] && {
      echo "$pids"
      return
    }
    sleep 0.01
  done
  fail "expected one NAPI thread napi/$sif-*, found $n"
}
pin_napi() {
  local pid
  pid=$(napi_pid)
  taskset -pc "$recv_cpu" "$pid" >/dev/null
  renice -n -20 -p "$pid" >/dev/null
}
# Threaded NAPI with GRO on the flood's receiving end (see bench-live.sh: veth takes XDP_TX
# frames only when that end runs NAPI). TSO off on the sending end: with it on, a veth hands
# packet-ring frames (rlflood's engine where the kernel refuses live frames) to the receiver's
# backlog on the sending CPU, past NAPI and any XDP program (ring_run.h).
napi_setup() {
  $srv ethtool -K "$sif" gro on >/dev/null
  $srv sh -c "echo 1 > /sys/class/net/$sif/threaded"
  $cli ethtool -K "$cif" tso off >/dev/null
}
# The machine, for a report's header. The kernel's return-thunk mitigations are named because
# under them every return mispredicts, BPF functions' and helpers' included, which weighs on
# every contender's calls (bench/results/2026-11-24-call-return-thunk.md).
bench_machine() {
  local cpu v f returns=""
  cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
  for v in spec_rstack_overflow retbleed; do
    f=/sys/devices/system/cpu/vulnerabilities/$v
    [ -r "$f" ] && returns+="${returns:+, }$v: $(cat "$f")"
  done
  echo "$(nproc) CPUs, $cpu; kernel $(uname -r)${returns:+; $returns}"
}

# The thread's time on the CPU and its time runnable but waiting for it, ns.
sched_ns() { cut -d' ' -f1,2 "/proc/$1/schedstat"; }
rx_packets() { $srv cat "/sys/class/net/$sif/statistics/rx_packets"; }
# Frames the receiving ring refused, counted on the sending end: live frames in veth's
# peer_tq_xdp_xmit_err, packet-ring frames in its tx_dropped (rlflood sends those again).
ring_drops() {
  { $cli ethtool -S "$cif" | awk '/xdp_xmit_err/ {s += $2} END {print s + 0}'
    $cli cat "/sys/class/net/$cif/statistics/tx_dropped"; } | awk '{s += $1} END {print s + 0}'
}

# A command in the client namespace at nice -20 on the sender's CPU, in a session of its own, so
# its nice value counts against other sessions' work on the CPU rather than only against this
# script's (the scheduler's autogroups).
on_send_cpu() {
  setsid -w sh -c 'echo -20 > /proc/$$/autogroup 2>/dev/null; exec "$@"' sh \
    nice -n -20 taskset -c "$send_cpu" ip netns exec "$lab-cli" "$@"
}
flood() { # args for rlflood after the common ones; prints its JSON line
  local out code=0
  out=$(on_send_cpu "$rlflood" --quiet --iface "$cif" --dst-mac "$mac" --batch "$batch" "$@") ||
    code=$?
  # 3: stopped by --max-seconds before --count, which is how unpaced measurements end.
  [ "$code" = 0 ] || [ "$code" = 3 ] || fail "rlflood $* exited $code"
  sed -n 's/.*"engine":"\([a-z]*\)".*/\1/p' <<<"$out" >"$work/engine"
  echo "$out"
}
# How rlflood sent, for a report's header: live frames, or the packet ring where the kernel
# refused them (a sender that costs its CPU more per frame, so unpaced floods are slower).
flood_engine() {
  case $(cat "$work/engine" 2>/dev/null) in
    live) echo "rlflood, live frames (XDP_TX)" ;;
    packet) echo "rlflood, packet ring (the kernel refused live frames)" ;;
    *) echo "rlflood (no flood sent)" ;;
  esac
}

# --- floods ----------------------------------------------------------------------------------
# name | family | rlflood arguments | warm-up: frames paced at a rate every contender keeps up
# with, so each known source has its state before the measurement (0: none). NEW stands for
# sources that never repeat: new_flood_args gives each measurement a /48 nobody has sent from.
# *-1-ports: one source with a new source port in each frame (1024 to 65535 in turn), as a
# sender that opens a port per packet sends.
bench_v4=192.0.2.2 bench_v6=3fff:0:ff::2
bench_floods=(
  "udp4-1|4|--src 198.18.7.7 --dst $bench_v4|1000"
  "udp6-1|6|--src 2001:db8:7::7 --dst $bench_v6|1000"
  "udp4-1-ports|4|--src 198.18.7.9 --sport 1024 --sports 64512 --dst $bench_v4|1000"
  "udp6-1-ports|6|--src 2001:db8:7::9 --sport 1024 --sports 64512 --dst $bench_v6|1000"
  "udp4-16k|4|--src 198.18.0.0/15 --sources 16384 --order random --dst $bench_v4|16384"
  "udp6-16k|6|--src 2001:db8:1::/48 --sources 16384 --order random --dst $bench_v6|16384"
  "udp4-131k|4|--src 198.18.0.0/15 --sources 131071 --order random --dst $bench_v4|131071"
  "udp6-131k|6|--src 2001:db8:1::/48 --sources 131072 --order random --dst $bench_v6|131072"
  "udp6-1M-new|6|NEW|0"
  "syn4-131k|4|--src 198.18.0.0/15 --sources 131071 --order random --proto tcp-syn --dport 80 --dst $bench_v4|131071"
  "syn6-131k|6|--src 2001:db8:2::/48 --sources 131072 --order random --proto tcp-syn --dport 80 --dst $bench_v6|131072"
  "udp4-1-1500B|4|--src 198.18.7.8 --size 1500 --dst $bench_v4|1000"
  "udp6-1-1500B|6|--src 2001:db8:7::8 --size 1500 --dst $bench_v6|1000"
)
# The spec of a flood by name, or nothing.
flood_spec() {
  local spec
  for spec in "${bench_floods[@]}"; do
    [ "${spec%%|*}" = "$1" ] && { echo "$spec"; return; }
  done
  return 0
}
bench_new_prefix=0x100
# Sets $new_args to rlflood's arguments for N sources that no earlier measurement sent from
# (not in a subshell: the prefix must move on): new_flood_args N
new_flood_args() {
  bench_new_prefix=$((bench_new_prefix + 1))
  # shellcheck disable=SC2034 # the caller's
  new_args="--src 2001:db8:$(printf %x $bench_new_prefix)::/48 --sources $1 --order random --dst $bench_v6"
}

# Known sources' state before a measurement: each source sent once, paced at a rate every
# contender keeps up with, so that each already owes its token. rld's key table starts small and
# grows from the keys it counts once a second (docs/datapath.md): for rl the sources that found
# their set full go again once it has grown, as they would in a flood that lasts, until rld's
# count holds them all and the table has stopped growing (at most one key per set on average),
# so that no split runs during the measurement. With a new-source budget only one pass is sent:
# the budget admits the rest slowly, as it would in a flood. A warm-up stops after
# $bench_warm_seconds (default 30): a contender that takes fewer frames a second than that allows
# meets the rest of its sources for the first time in the measurement.
warm_known() { # contender count rlflood-args...
  local who=$1 count=$2 tracked in_use pass
  shift 2
  flood "$@" --count "$count" --rate 200000 --max-seconds "${bench_warm_seconds:-30}" >/dev/null
  case $who in
    rl | rlb)
      for pass in $(seq 10); do
        if [ "$count" -le 16384 ] || [ "${new_budget:-0}" != 0 ]; then break; fi
        sleep 1.2 # past rld's next count of the keys, and the growth it decides
        read -r tracked in_use < <(rl_key_table)
        [ "$tracked" -lt $((count * 99 / 100)) ] || [ $((tracked * 4)) -gt "$in_use" ] || break
        [ "$pass" -lt 10 ] || fail "$who: the key table did not settle ($tracked keys, $in_use slots)"
        flood "$@" --count "$count" --rate 200000 --max-seconds "${bench_warm_seconds:-30}" >/dev/null
      done
      # After a settled warm-up only: otherwise the count (once a second) may predate it.
      if [ "${tracked:-}" ]; then
        log "$who: $tracked keys tracked at rld's last count (once a second), $in_use slots in use"
      fi
      ;;
  esac
}
# rld's key count and the table's slots in use: "tracked in_use".
rl_key_table() {
  "$build/controller/rlctl/rlctl" -s "$work/rld.sock" -o json status | python3 -c 'import json, sys
k = json.load(sys.stdin)["keys"]
print(k["tracked"], k.get("capacity_in_use", k["capacity"]))'
}
# What rl did with the flood's frames, from rld's counters: "passed P, dropped D, of them K by
# overflow buckets (a full set), I keys inserted".
rl_verdicts() {
  "$build/controller/rlctl/rlctl" -s "$work/rld.sock" -o json stats | python3 -c 'import json, sys
d = json.load(sys.stdin)
p = sum(r["counters"]["passed_packets"] for r in d["rules"])
dr = sum(r["counters"]["dropped_packets"] for r in d["rules"])
g = d["global"]
print("passed %d, dropped %d, of them %d by overflow buckets (a full set), %d keys inserted" % (
    p, dr, g["key_overflow"]["packets"], g["keys_inserted"]["packets"]))'
}
json() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" <<<"$2"; }

# The contenders in round ROUND's order: rotated ROUND NAME..., one name per line. Each round
# starts one further along, so that no contender always follows the same one (both benchmarks
# measure every contender back to back for each flood, mode or rate).
rotated() {
  local round=$1
  shift
  local n=$# i
  local names=("$@")
  for ((i = 0; i < n; i++)); do echo "${names[$(((i + round - 1) % n))]}"; done
}

# The new-source budget's burst, the same for every limiter: twice its rate ($new_budget, set by
# the benchmark's --new-sources; 0: no budget).
new_burst() { echo $((2 * ${new_budget:-0})); }

# --- contenders: each drops what exceeds 1 packet per minute, burst 1, per source address, for
# UDP to port 9 and TCP SYNs to port 80, IPv4 and IPv6, in tables of 1,048,576 entries ----------
xdp_obj() { $srv ip link set dev "$sif" xdpdrv obj "$1" sec xdp; }
xdp_off() { $srv ip link set dev "$sif" xdpdrv off; }
# The JIT line table (bench/jit_lines.h) of the XDP program attached to the receiving veth.
xdp_prog_lines() {
  local id
  id=$($srv ip -j -d link show dev "$sif" | python3 -c 'import json, sys
print(json.load(sys.stdin)[0]["xdp"]["prog"]["id"])')
  "$build/bench/jit_lines" --prog-id "$id"
}
none_on() { :; }
none_off() { :; }
drop_on() { xdp_obj "$build/bench/bpf/skel/rl_drop.bpf.o"; }
drop_off() { xdp_off; }
src_on() { xdp_obj "$build/bench/bpf/skel/rl_src_drop.bpf.o"; }
src_off() { xdp_off; }
slot_on() { xdp_obj "$build/bench/bpf/skel/rl_src_slot.bpf.o"; }
slot_off() { xdp_off; }
rl_on() {
  rld_start "$rld" "${RL_BENCH_KEY_CAPACITY:-1048576}" "${RL_BENCH_SAMPLE_SHIFT:-0}" \
    "${RL_BENCH_RUNTIME_DENY:-0}"
}
rl_off() { rld_stop; }
rlb_on() {
  rld_start "$RL_BENCH_RLD_B" "${RL_BENCH_KEY_CAPACITY_B:-${RL_BENCH_KEY_CAPACITY:-1048576}}" \
    "${RL_BENCH_SAMPLE_SHIFT_B:-${RL_BENCH_SAMPLE_SHIFT:-0}}" \
    "${RL_BENCH_RUNTIME_DENY_B:-${RL_BENCH_RUNTIME_DENY:-0}}"
}
rlb_off() { rld_stop; }
rld_start() {
  local bin=$1 keys=$2 sample_shift=${3:-0} runtime_deny=${4:-0}
  mkdir -p "$work/policies"
  local budget=""
  [ "${new_budget:-0}" = 0 ] ||
    budget="    new_sources: {rate: $new_budget/s, burst: $(new_burst)}"
  cat >"$work/policies/flood.yaml" <<YAML
rules:
  - name: udp-flood
    match: {protocol: udp, port: 9}
    limit: {rate: 1/min, burst: 1}
    prefix: {ipv6: 128}   # the IPv6 floods step through one /64: a key per address
    report: false
$budget
  - name: syn-flood
    match: {protocol: tcp, port: 80, tcp_flags: syn}
    limit: {rate: 1/min, burst: 1}
    prefix: {ipv6: 128}
    report: false
$budget
YAML
  # rld itself on the sender's CPU: the receiving CPU is for the NAPI thread alone.
  taskset -c "$send_cpu" nsenter --net="/run/netns/$lab-srv" "$bin" --interface "$sif" \
    --xdp-mode native --policy-dir "$work/policies" --pin-root "$pins" \
    --control-socket "$work/rld.sock" --metrics-listen "" --key-capacity "$keys" \
    --traffic-sample-shift "$sample_shift" --log-level warn 2>>"$work/rld.log" &
  rld_pid=$! rld_bin=$bin
  for _ in $(seq 300); do
    if $srv ip link show dev "$sif" | grep -q "xdp" && [ -S "$work/rld.sock" ]; then
      runtime_deny "$runtime_deny"
      deny_flood_hosts "${RL_BENCH_DENY_HOSTS:-0}"
      return
    fi
    kill -0 "$rld_pid" 2>/dev/null || break
    sleep 0.05
  done
  cat "$work/rld.log" >&2
  fail "rld did not attach to $sif"
}
# n runtime deny entries per family, as `rlctl deny` adds them (through rld's control socket, in
# one process): /32s at random in 198.18.0.0/15 and /64s at random in 2001:db8::/32, so that a
# packet's lookup walks as deep into the trie as it would among offenders spread over the whole
# address space. They leave out the one-source floods' sources (198.18.7.7, 2001:db8:7::7), the
# floods they are for: n of a 131k flood's sources would be denied, keys the table never holds,
# and the flood's warm-up would wait for them in vain.
runtime_deny() {
  [ "$1" = 0 ] && return
  python3 - "$1" <<'PY' | deny_cidrs || fail "runtime deny entries"
import ipaddress, random, sys
n = int(sys.argv[1])
rng = random.Random(1)
v4 = {int(ipaddress.ip_address("198.18.7.7"))}
v6 = {int(ipaddress.ip_address("2001:db8:7::")) >> 64}
base4, base6 = int(ipaddress.ip_address("198.18.0.0")), int(ipaddress.ip_address("2001:db8::")) >> 64
while len(v4) <= n:
    a = base4 + rng.randrange(1 << 17)
    if a not in v4:
        v4.add(a)
        print(f"{ipaddress.ip_address(a)}/32")
while len(v6) <= n:
    a = base6 + rng.randrange(1 << 32)
    if a not in v6:
        v6.add(a)
        print(f"{ipaddress.ip_address(a << 64)}/64")
PY
}
# The first N sources of the IPv4 floods (198.18.0.1 on, as rlflood numbers them) and of the IPv6
# floods from 2001:db8:1::/48 (2001:db8:1::1 on), a line each: "4 ADDRESS" or "6 ADDRESS". Every
# packet of udp4-1 (N >= 1799) and, with N = 16384, of udp4-16k and udp6-16k comes from one.
flood_hosts() {
  python3 -c 'import ipaddress, sys
for fam, base in ((4, "198.18.0.0"), (6, "2001:db8:1::")):
    b = int(ipaddress.ip_address(base))
    for i in range(1, int(sys.argv[1]) + 1):
        print(fam, ipaddress.ip_address(b + i))' "$1"
}
# Runtime deny entries for those hosts, as an operator denies a flood's hosts with `rlctl deny`.
deny_flood_hosts() {
  [ "$1" = 0 ] && return
  flood_hosts "$1" | awk '{ print $2 "/" ($1 == 4 ? 32 : 128) }' | deny_cidrs ||
    fail "runtime deny entries for the flood's hosts"
}
# A runtime deny entry for each CIDR on stdin, through rld's control socket as `rlctl deny add`
# sends it, one request per connection as rld answers.
deny_cidrs() {
  python3 -c 'import json, socket, sys
for cidr in sys.stdin.read().split():
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    req = {"v": 1, "cmd": "acl.add", "args": {"list": "deny", "cidr": cidr}}
    s.sendall(json.dumps(req).encode() + b"\n")
    resp = json.loads(s.makefile().readline())
    s.close()
    if not resp.get("ok"):
        sys.exit("acl.add " + cidr + ": " + str(resp.get("error")))' "$work/rld.sock"
}
rld_stop() {
  kill "$rld_pid"
  wait "$rld_pid" 2>/dev/null || true
  rld_pid=
  nsenter --net="/run/netns/$lab-srv" "$rld_bin" --cleanup --pin-root "$pins" >/dev/null 2>&1
}
nft_on() {
  local l="limit rate over 1/minute burst 1 packets" m fam set match sets="" rules=""
  # One dynamic set per family and protocol, as `meter` makes; with a new-source budget, a source
  # not in its set yet needs a token from one bucket per set (the budget) before it gets an entry.
  for m in "ip udp4 udp dport 9" "ip6 udp6 udp dport 9" \
    "ip syn4 tcp dport 80 tcp flags & (syn | ack) == syn" "ip6 syn6 tcp dport 80 tcp flags & (syn | ack) == syn"; do
    read -r fam set match <<<"$m"
    local addr="$fam saddr" type=ipv4_addr
    [ "$fam" = ip6 ] && type=ipv6_addr
    sets+="  set $set { type $type; size 1048576; flags dynamic; }"$'\n'
    [ "${new_budget:-0}" = 0 ] ||
      rules+="    meta protocol $fam $match $addr != @$set limit rate over $new_budget/second burst $(new_burst) packets drop"$'\n'
    rules+="    meta protocol $fam $match update @$set { $addr $l } drop"$'\n'
  done
  # RL_BENCH_DENY_HOSTS: the flood's hosts in a set per family, dropped before the meters, as an
  # nftables user denies addresses.
  local deny=${RL_BENCH_DENY_HOSTS:-0}
  if [ "$deny" != 0 ]; then
    sets+="  set deny4 { type ipv4_addr; size 65536; elements = { $(flood_hosts "$deny" | awk '$1 == 4 { print $2 }' | paste -sd,) }; }"$'\n'
    sets+="  set deny6 { type ipv6_addr; size 65536; elements = { $(flood_hosts "$deny" | awk '$1 == 6 { print $2 }' | paste -sd,) }; }"$'\n'
    rules="    ip saddr @deny4 drop"$'\n'"    ip6 saddr @deny6 drop"$'\n'"$rules"
  fi
  $srv nft -f - <<NFT
table netdev rlbench {
$sets  chain ingress {
    type filter hook ingress device "$sif" priority 0;
$rules  }
}
NFT
}
nft_off() { $srv nft delete table netdev rlbench; }
# With a new-source budget, a source not in the family's and protocol's ipset needs a token from
# one `limit` bucket (the budget) to be added to it, and is dropped otherwise; hashlimit then
# judges it as any other.
ipt_on() {
  local hl="-m hashlimit --hashlimit-above 1/min --hashlimit-burst 1 --hashlimit-mode srcip"
  hl="$hl --hashlimit-htable-size 1048576 --hashlimit-htable-max 1048576"
  local t m fam proto
  for t in iptables ip6tables; do
    fam=inet
    [ "$t" = ip6tables ] && fam=inet6
    for m in "udp -p udp --dport 9" "syn -p tcp --dport 80 --syn"; do
      read -r proto match <<<"$m"
      if [ "${new_budget:-0}" != 0 ]; then
        local set="rlbench-$proto-$fam"
        $srv ipset create "$set" hash:ip family "$fam" hashsize 65536 maxelem 1048576
        # shellcheck disable=SC2086
        $srv $t -t raw -A PREROUTING $match -m set ! --match-set "$set" src -m limit \
          --limit "$new_budget/sec" --limit-burst "$(new_burst)" -j SET --add-set "$set" src
        # shellcheck disable=SC2086
        $srv $t -t raw -A PREROUTING $match -m set ! --match-set "$set" src -j DROP
      fi
      # shellcheck disable=SC2086
      $srv $t -t raw -A PREROUTING $match $hl --hashlimit-name "$proto-$t" -j DROP
    done
  done
  # RL_BENCH_DENY_HOSTS: the flood's hosts in an ipset per family, dropped first in raw, as an
  # iptables user denies addresses.
  local deny=${RL_BENCH_DENY_HOSTS:-0} v
  [ "$deny" = 0 ] && return
  for v in 4 6; do
    fam=inet t=iptables
    [ "$v" = 6 ] && fam=inet6 t=ip6tables
    $srv ipset create "rlbench-deny-$fam" hash:ip family "$fam" hashsize 65536 maxelem 65536
    flood_hosts "$deny" | awk -v v="$v" -v s="rlbench-deny-$fam" '$1 == v { print "add " s " " $2 }' |
      $srv ipset restore
    $srv $t -t raw -I PREROUTING 1 -m set --match-set "rlbench-deny-$fam" src -j DROP
  done
}
ipt_off() {
  $srv iptables -t raw -F PREROUTING
  $srv ip6tables -t raw -F PREROUTING
  local set
  for set in $($srv ipset list -n 2>/dev/null | grep '^rlbench-' || true); do $srv ipset destroy "$set"; done
}

# Keep the names a comma-separated list holds (all of them for an empty list), in the given
# order: only LIST name...
only() {
  local list=$1 n
  shift
  for n in "$@"; do
    [ -z "$list" ] || [[ ",$list," == *",${n%%|*},"* ]] && echo "$n"
  done
  return 0
}
