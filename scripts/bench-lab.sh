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
    cmake --build "$build" -j"$(nproc)" --target rld rlctl rlflood rl_drop_skel_gen rl_src_drop_skel_gen \
      "$@" >/dev/null
  fi
  for f in "$build/tools/rlflood/rlflood" "$build/controller/rld/rld" "$build/controller/rlctl/rlctl" \
    "$build/bpf/skel/rl_drop.bpf.o" "$build/bpf/skel/rl_src_drop.bpf.o"; do
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
  cli="ip netns exec $lab-cli" srv="ip netns exec $lab-srv"
  rlflood="$build/tools/rlflood/rlflood"
  mac=$($srv cat /sys/class/net/"$sif"/address)
  napi_setup
  raw_file=${raw:-$work/raw.tsv}
  : >"$raw_file"
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
# frames only when that end runs NAPI).
napi_setup() {
  $srv ethtool -K "$sif" gro on >/dev/null
  $srv sh -c "echo 1 > /sys/class/net/$sif/threaded"
}
# The thread's time on the CPU and its time runnable but waiting for it, ns.
sched_ns() { cut -d' ' -f1,2 "/proc/$1/schedstat"; }
rx_packets() { $srv cat "/sys/class/net/$sif/statistics/rx_packets"; }
# Frames the receiving ring refused, counted on the sending end (veth's peer_tq_xdp_xmit_err).
ring_drops() { $cli ethtool -S "$cif" | awk '/xdp_xmit_err/ {s += $2} END {print s + 0}'; }

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
  echo "$out"
}

# Known sources' state before a measurement: each source sent once, paced at a rate every
# contender keeps up with, so that each already owes its token. rld's key table starts small and
# grows from the keys it counts once a second (docs/datapath.md): for rl the sources that found
# their set full the first time go again once it has grown, as they would in a flood that lasts.
warm_known() { # contender count rlflood-args...
  local who=$1 count=$2
  shift 2
  flood "$@" --count "$count" --rate 200000 --max-seconds 30 >/dev/null
  case $who in
    rl | rlb)
      if [ "$count" -gt 16384 ]; then
        sleep 2.5
        flood "$@" --count "$count" --rate 200000 --max-seconds 30 >/dev/null
      fi
      log "$who: key table at rld's last count (once a second): $("$build/controller/rlctl/rlctl" -s "$work/rld.sock" \
        -o json status | python3 -c 'import json, sys; k = json.load(sys.stdin)["keys"]
print(k["tracked"], "keys tracked,", k.get("capacity_in_use", k["capacity"]), "of", k["capacity"], "slots in use")')"
      ;;
  esac
}
json() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p" <<<"$2"; }

# --- contenders: each drops what exceeds 1 packet per minute, burst 1, per source address, for
# UDP to port 9 and TCP SYNs to port 80, IPv4 and IPv6, in tables of 1,048,576 entries ----------
xdp_obj() { $srv ip link set dev "$sif" xdpdrv obj "$1" sec xdp; }
xdp_off() { $srv ip link set dev "$sif" xdpdrv off; }
none_on() { :; }
none_off() { :; }
drop_on() { xdp_obj "$build/bpf/skel/rl_drop.bpf.o"; }
drop_off() { xdp_off; }
src_on() { xdp_obj "$build/bpf/skel/rl_src_drop.bpf.o"; }
src_off() { xdp_off; }
rl_on() { rld_start "$rld" "${RL_BENCH_KEY_CAPACITY:-1048576}"; }
rl_off() { rld_stop; }
rlb_on() { rld_start "$RL_BENCH_RLD_B" "${RL_BENCH_KEY_CAPACITY_B:-${RL_BENCH_KEY_CAPACITY:-1048576}}"; }
rlb_off() { rld_stop; }
rld_start() {
  local bin=$1 keys=$2
  mkdir -p "$work/policies"
  cat >"$work/policies/flood.yaml" <<'YAML'
rules:
  - name: udp-flood
    match: {protocol: udp, port: 9}
    limit: {rate: 1/min, burst: 1}
    report: false
  - name: syn-flood
    match: {protocol: tcp, port: 80, tcp_flags: syn}
    limit: {rate: 1/min, burst: 1}
    report: false
YAML
  # rld itself on the sender's CPU: the receiving CPU is for the NAPI thread alone.
  taskset -c "$send_cpu" nsenter --net="/run/netns/$lab-srv" "$bin" --interface "$sif" \
    --xdp-mode native --policy-dir "$work/policies" --pin-root "$pins" \
    --control-socket "$work/rld.sock" --metrics-listen "" --key-capacity "$keys" \
    --log-level warn 2>>"$work/rld.log" &
  rld_pid=$! rld_bin=$bin
  for _ in $(seq 300); do
    $srv ip link show dev "$sif" | grep -q "xdp" && [ -S "$work/rld.sock" ] && return
    kill -0 "$rld_pid" 2>/dev/null || break
    sleep 0.05
  done
  cat "$work/rld.log" >&2
  fail "rld did not attach to $sif"
}
rld_stop() {
  kill "$rld_pid"
  wait "$rld_pid" 2>/dev/null || true
  rld_pid=
  nsenter --net="/run/netns/$lab-srv" "$rld_bin" --cleanup --pin-root "$pins" >/dev/null 2>&1
}
nft_on() {
  local l="limit rate over 1/minute burst 1 packets"
  $srv nft -f - <<NFT
table netdev rlbench {
  chain ingress {
    type filter hook ingress device "$sif" priority 0;
    meta protocol ip udp dport 9 meter udp4 size 1048576 { ip saddr $l } drop
    meta protocol ip6 udp dport 9 meter udp6 size 1048576 { ip6 saddr $l } drop
    meta protocol ip tcp dport 80 tcp flags & (syn | ack) == syn meter syn4 size 1048576 { ip saddr $l } drop
    meta protocol ip6 tcp dport 80 tcp flags & (syn | ack) == syn meter syn6 size 1048576 { ip6 saddr $l } drop
  }
}
NFT
}
nft_off() { $srv nft delete table netdev rlbench; }
ipt_on() {
  local hl="-m hashlimit --hashlimit-above 1/min --hashlimit-burst 1 --hashlimit-mode srcip"
  hl="$hl --hashlimit-htable-size 1048576 --hashlimit-htable-max 1048576"
  local t
  for t in iptables ip6tables; do
    $srv $t -t raw -A PREROUTING -p udp --dport 9 $hl --hashlimit-name "udp-$t" -j DROP
    $srv $t -t raw -A PREROUTING -p tcp --dport 80 --syn $hl --hashlimit-name "syn-$t" -j DROP
  done
}
ipt_off() {
  $srv iptables -t raw -F PREROUTING
  $srv ip6tables -t raw -F PREROUTING
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
