#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Protection: what a legitimate client still gets from nginx while a flood of spoofed sources
# hits the server, with each contender in front. Not a test: it prints figures (markdown tables)
# on stdout, progress on stderr. As root:
#
#   scripts/bench-protect.sh [--rounds N] [--seconds S] [--rates LIST] [--contenders LIST]
#                            [--connections N] [--flood NAME] [--new-sources RATE] [--sink]
#                            [--smoke] [--no-build] [--raw FILE]
#
# The lab (the same as bench-live.sh's, with a second link):
#   flood link   the client namespace's rlflood sends the flood on one veth pair, as live XDP
#                frames, or from a packet ring where the kernel refuses them (bench-live.sh
#                says how; the report's "Sender" line says which). --flood names one of
#                bench-live.sh's floods (bench-lab.sh lists them; default udp4-131k: 131,071
#                known IPv4 sources of 198.18.0.0/15). Known sources are warmed first, so each
#                already owes its token. udp6-1M-new sends from sources that never repeat: 2^24
#                of a /48 that no earlier measurement used, each once until 2^24 frames have
#                gone (10 s at 1.6 Mpps). UDP goes to port 9: a closed port, the stack's
#                cheapest path (its ICMP errors are rate-limited), unless --sink puts a UDP
#                service there (udp_sink, which reads every datagram, on the server's CPU), as
#                a flood at a real service would meet it. SYN floods go to port 80, where
#                nothing listens (the stack answers with resets). The receiving end runs
#                threaded NAPI, pinned to the server's CPU, with GRO on; every contender
#                filters this link.
#   client link  wrk in the client namespace asks nginx in the server namespace for a small page
#                over a veth pair of its own (198.51.100.0/30), which no contender filters and
#                which never carries a flood frame. On a single veth the flood's XDP frames and
#                the client's packets would share one ring once any XDP program is attached, and
#                the ring's refusals would cost the client retransmits for every XDP contender
#                alike (an ideal filter then shows 200 ms p99 where no filter shows 3 ms): that
#                is the lab, not the filter. With a link of its own, every contender's client
#                packets take the same path, and what a flood takes from the client is the
#                server's CPU.
# CPUs: rlflood alone on one (paced, it waits for each burst's time on the CPU, so nothing else
# could run there undisturbed); the flood's NAPI thread, nginx and wrk on the other, the
# server's. So the client and the server share what the flood's receive path leaves of that
# CPU, as a client on the server's host (or the server's own work) would: goodput falls with the
# CPU each contender spends per flood frame. The NAPI thread runs at real-time priority
# (SCHED_FIFO 50), as a NIC's receive softirq preempts user tasks: at nice -20 it slept between
# paced bursts and waited behind nginx and wrk when woken, long enough at 0.8 Mpps for the ring
# to refuse a third to a half of the flood, which then cost the server nothing.
#
# Every limiter: 1 packet per minute, burst 1, per source (bench-lab.sh). --new-sources RATE adds a
# budget of RATE new sources per second (burst 2 x RATE) to each: rl's new_sources, and for
# nftables and iptables a global token bucket that a source not yet in their table must pass
# before it gets an entry (a dynamic set's membership test and `limit`; ipset and `-m limit`).
# Meant for floods of new sources: it also slows the warm-up of known ones.
#
# For every contender (none, drop, rl, nft, ipt; see bench-live.sh) and every flood rate
# (--rates: frames/s, paced in bursts of 128; 0 is no flood; "fast" is as fast as the generator
# goes): wrk's requests/s and p99 latency while the flood runs, and the flood rate the server's
# link received. Goodput is requests/s as a share of the baseline: no filter and no flood, in the
# same round. A contender absorbs a rate when its goodput there is at least 95%.
# Rounds are interleaved; medians over rounds, with the spread. Each contender starts every
# measurement (one rate in one round) from empty tables, warmed again: what a flood leaves in a
# limiter's table (a new-source flood can fill it) does not carry over to the next rate.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3 seconds=3 rates=0,200000,400000,800000,1600000,3200000,fast contenders_list="none,drop,rl,nft,ipt"
conns=16 flood_name=udp4-131k new_budget=0 sink=0 build_first=1 raw=""
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --contenders) contenders_list=$2; shift 2 ;;
    --connections) conns=$2; shift 2 ;;
    --flood) flood_name=$2; shift 2 ;;
    --new-sources) new_budget=$2; shift 2 ;;
    --sink) sink=1; shift ;;
    --smoke) rounds=1; seconds=1; rates=0,200000; contenders_list=none,rl; shift ;;
    --no-build) build_first=0; shift ;;
    --raw) raw=$2; shift 2 ;;
    *) echo "usage: $0 [--rounds N] [--seconds S] [--rates LIST] [--contenders LIST]" \
         "[--connections N] [--flood NAME] [--new-sources RATE] [--sink] [--smoke] [--no-build]" \
         "[--raw FILE]" >&2
    exit 2 ;;
  esac
done
for tool in nginx wrk; do
  command -v "$tool" >/dev/null || { echo "$0: $tool is missing (scripts/install-deps.sh)" >&2; exit 1; }
done
batch=256
bench_name=bench-protect
source scripts/bench-lab.sh
bench_lab_up rl-protbench rlpc0 rlps0 udp_sink

# The UDP service behind the flood's port, one per measurement (udp_sink runs at most 60 s).
sink_bin="$build/tests/integration/udp_sink" sink_pid=""
[ "$sink" = 0 ] || [ -x "$sink_bin" ] || fail "$sink_bin is missing (build first)"
sink_start() {
  [ "$sink" = 1 ] || return 0
  taskset -c "$recv_cpu" ip netns exec "$lab-srv" "$sink_bin" --port 9 --bind "$sink_bind" \
    --seconds "$(awk -v s="$seconds" 'BEGIN {print s + 5}')" >/dev/null 2>"$work/sink.log" &
  sink_pid=$!
  for _ in $(seq 100); do
    grep -q listening "$work/sink.log" && return 0
    sleep 0.02
  done
  fail "udp_sink did not start: $(cat "$work/sink.log")"
}
sink_stop() {
  [ -n "$sink_pid" ] || return 0
  kill "$sink_pid" 2>/dev/null || true
  wait "$sink_pid" 2>/dev/null || true
  sink_pid=""
}

# The client's own link, made inside the namespaces (never in this one); it goes with them.
wcif=rlwc0 wsif=rlws0 server=198.51.100.2
ip link add "$wcif" netns "$lab-cli" type veth peer name "$wsif" netns "$lab-srv"
$cli ip addr add 198.51.100.1/30 dev "$wcif"
$srv ip addr add "$server/30" dev "$wsif"
$cli ip link set "$wcif" up
$srv ip link set "$wsif" up

# nginx: one worker on the server's CPU, a 612-byte page, keep-alive, no logging.
mkdir -p "$work/nginx/www" "$work/nginx/tmp"
head -c 612 /dev/zero | tr '\0' x >"$work/nginx/www/index.html"
cat >"$work/nginx/nginx.conf" <<CONF
worker_processes 1;
user root root;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  default_type text/html;
  keepalive_requests 10000000;
  keepalive_timeout 120s;
  client_body_temp_path $work/nginx/tmp/body;
  proxy_temp_path $work/nginx/tmp/proxy;
  fastcgi_temp_path $work/nginx/tmp/fastcgi;
  uwsgi_temp_path $work/nginx/tmp/uwsgi;
  scgi_temp_path $work/nginx/tmp/scgi;
  server {
    listen $server:8080;
    location / { root $work/nginx/www; }
  }
}
CONF
taskset -c "$recv_cpu" ip netns exec "$lab-srv" nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" \
  -e "$work/nginx/error.log" -g 'daemon off;' 2>"$work/nginx/stderr.log" &
nginx_pid=$!
protect_cleanup() {
  if kill "$nginx_pid" 2>/dev/null; then wait "$nginx_pid" 2>/dev/null || true; fi
  sink_stop
  bench_lab_cleanup
}
trap protect_cleanup EXIT
for _ in $(seq 100); do
  $cli curl -s -o /dev/null --max-time 1 "http://$server:8080/" && break
  sleep 0.05
done
$cli curl -sf -o /dev/null --max-time 2 "http://$server:8080/" ||
  { cat "$work/nginx/error.log" "$work/nginx/stderr.log" >&2; fail "nginx does not answer on $server:8080"; }

# wrk's requests/s and p99 (ms) over S seconds: "rps p99_ms".
wrk_run() {
  local out
  out=$(taskset -c "$recv_cpu" ip netns exec "$lab-cli" wrk -t1 -c"$conns" -d"${1}s" --latency \
    "http://$server:8080/")
  awk '
    / 99% / { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
              p99 = (u == "us") ? v / 1000 : (u == "s") ? v * 1000 : (u == "m") ? v * 60000 : v }
    /^Requests\/sec:/ { rps = $2 }
    END { if (rps == "" || p99 == "") exit 1; print rps, p99 }' <<<"$out" ||
    fail "wrk printed no figures: $out"
}

[[ $new_budget =~ ^[0-9]+$ ]] || { echo "$0: --new-sources takes new sources per second" >&2; exit 2; }
flood_spec=$(flood_spec "$flood_name")
[ -n "$flood_spec" ] || { echo "$0: --flood $flood_name is not one of bench-live.sh's floods" >&2; exit 2; }
IFS='|' read -r _ flood_fam flood_args flood_warm <<<"$flood_spec"
sink_bind=$bench_v4
[ "$flood_fam" = 6 ] && sink_bind=$bench_v6
# Flood frames the server's stack took in: UDP datagrams (to a closed port or to udp_sink, and
# those it had no room for), or for SYN floods the resets it answered with, as nothing listens on
# port 80. The client's traffic is TCP to nginx, which sends no resets.
stack_in() {
  case $flood_name in
    syn*) snmp_sum Tcp 'OutRsts' /proc/net/snmp ;;
    *) if [ "$flood_fam" = 6 ]; then
         snmp_sum Udp6 'InDatagrams|NoPorts|InErrors' /proc/net/snmp6
       else
         snmp_sum Udp 'InDatagrams|NoPorts|InErrors' /proc/net/snmp
       fi ;;
  esac
}
# The sum of a MIB's fields in the server's namespace: snmp_sum MIB FIELD-REGEX FILE. /proc/net/snmp
# has a line of names and a line of values per MIB ("Udp: InDatagrams ..."), /proc/net/snmp6 a
# name and a value per line ("Udp6InDatagrams 12").
snmp_sum() {
  # shellcheck disable=SC2016 # awk's own variables
  $srv awk -v mib="$1" -v re="^($2)$" '
    $1 == mib ":" { if (named) { for (i = 2; i <= NF; i++) if (name[i] ~ re) s += $i }
                    else { for (i = 2; i <= NF; i++) name[i] = $i; named = 1 } }
    index($1, mib) == 1 && substr($1, length(mib) + 1) ~ re { s += $2 }
    END { print s + 0 }' "$3"
}

measure() { # contender round rate
  local who=$1 round=$2 rate=$3 pace=() flood_pid="" rx0 rx1 st0 st1 dr0 dr1 rt0 rt1 pid t0 t1 rps p99
  pid=$(napi_pid)
  if [ "$rate" = fast ]; then
    pace=()
  elif [ "$rate" != 0 ]; then
    pace=(--rate "$rate" --burst 128)
  fi
  sink_start
  rx0=$(rx_packets) st0=$(stack_in) dr0=$(ring_drops)
  read -r rt0 _ < <(sched_ns "$pid")
  t0=$(date +%s.%N)
  local args=$flood_args
  if [ "$args" = NEW ]; then
    new_flood_args $((1 << 24))
    args=$new_args
  fi
  if [ "$rate" != 0 ]; then
    # shellcheck disable=SC2086
    flood $args "${pace[@]}" --count 1000000000 --max-seconds "$(awk -v s="$seconds" 'BEGIN {print s + 1}')" \
      >"$work/flood.json" &
    flood_pid=$!
    sleep 0.5 # the flood in full swing before the client starts
  fi
  read -r rps p99 < <(wrk_run "$seconds")
  if [ -n "$flood_pid" ]; then wait "$flood_pid" || fail "$who: the flood failed"; fi
  t1=$(date +%s.%N)
  rx1=$(rx_packets) st1=$(stack_in) dr1=$(ring_drops)
  read -r rt1 _ < <(sched_ns "$pid")
  sink_stop
  local secs rx_rate napi stack_rate
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')
  rx_rate=$(awk -v n=$((rx1 - rx0)) -v s="$secs" 'BEGIN {printf "%d", n / s}')
  stack_rate=$(awk -v n=$((st1 - st0)) -v s="$secs" 'BEGIN {printf "%d", n / s}')
  napi=$(awk -v t=$((rt1 - rt0)) -v s="$secs" 'BEGIN {printf "%.3f", t / (s * 1e9)}')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$who" "$rate" "$rps" "$p99" "$rx_rate" "$napi" \
    "$stack_rate" >>"$raw_file"
  local sent="none" late=""
  if [ "$rate" != 0 ]; then
    sent=$(json sent "$(cat "$work/flood.json")")
    [ "$rate" = fast ] || late=", bursts late $(json late_bursts "$(cat "$work/flood.json")")"
  fi
  log "round $round $who flood $rate: $rps requests/s, p99 $p99 ms, flood sent $sent$late, ring refused" \
    "$((dr1 - dr0)), received $rx_rate/s, reached the stack $stack_rate/s, NAPI on CPU $napi"
}

mapfile -t contenders < <(only "$contenders_list" none drop src rl nft ipt)
[ ${#contenders[@]} -gt 0 ] || { echo "$0: --contenders $contenders_list names none of them" >&2; exit 2; }
[[ " ${contenders[*]} " == *" none "* ]] || contenders=(none "${contenders[@]}") # the baseline
mapfile -t rate_list < <(tr , '\n' <<<"$rates")
[[ " ${rate_list[*]} " == *" 0 "* ]] || rate_list=(0 "${rate_list[@]}")
for r in "${rate_list[@]}"; do
  [[ $r =~ ^([0-9]+|fast)$ ]] || { echo "$0: --rates takes frames/s or fast, not $r" >&2; exit 2; }
done

# The receiving NAPI thread on the server's CPU, at real-time priority (above).
pin_napi_rt() {
  pin_napi
  chrt -f -p 50 "$(napi_pid)"
}
pin_napi_rt
# The sources' state, before each measurement under a flood.
# shellcheck disable=SC2086
warm() { [ "$flood_warm" = 0 ] || warm_known "$1" "$flood_warm" $flood_args; }
# Each rate is measured for every contender back to back, in an order that rotates by round
# (rotated, bench-lab.sh), so that the goodputs compared were taken seconds apart, not minutes.
for round in $(seq "$rounds"); do
  for rate in "${rate_list[@]}"; do
    for who in $(rotated "$round" "${contenders[@]}"); do
      "${who}_on" >/dev/null
      pin_napi_rt # an XDP attach may have made a new thread
      [ "$rate" = 0 ] || warm "$who"
      measure "$who" "$round" "$rate"
      "${who}_off" >/dev/null
      pin_napi_rt
    done
  done
done

echo "Machine: $(bench_machine); rlflood on CPU $send_cpu; the flood's NAPI thread, nginx and wrk on CPU $recv_cpu"
echo "Sender: $(flood_engine)"
echo "Command: scripts/bench-protect.sh --rounds $rounds --seconds $seconds --rates $rates" \
  "--contenders $contenders_list --connections $conns --flood $flood_name$([ "$new_budget" = 0 ] || echo " --new-sources $new_budget")$([ "$sink" = 1 ] && echo ' --sink')"
echo "Paths: the flood on its own veth (filtered by each contender); the client on a veth of its own, unfiltered, into the same server namespace"
case $flood_args in
  NEW) who_sends="sources that never repeat (2^24 of a fresh /48 per measurement)" ;;
  *) who_sends="$flood_warm known sources (each sent once before the measurements)" ;;
esac
case $flood_name in
  syn*) what="TCP SYNs to port 80, where nothing listens" ;;
  *) what="UDP to port 9, $([ "$sink" = 1 ] && echo 'where udp_sink reads every datagram on the server'"'"'s CPU' || echo 'a closed port')" ;;
esac
echo "Flood: $flood_name, IPv$flood_fam $what, from $who_sends"
echo "Limiters: 1 packet per minute, burst 1, per source$([ "$new_budget" = 0 ] || echo "; at most $new_budget new sources per second (burst $(new_burst)), the rest dropped")"
echo
python3 scripts/bench-protect-report.py "$raw_file"
