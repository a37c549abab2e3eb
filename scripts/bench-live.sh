#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Receive CPU per packet on live traffic: rl against the floor of any limiter and against
# netfilter's limiters, every contender under the same floods in the same run. Not a test: it
# prints figures (markdown tables) on stdout, progress on stderr. As root:
#
#   scripts/bench-live.sh [--rounds N] [--seconds S] [--smoke] [--no-build] [--raw FILE]
#                         [--contenders LIST] [--floods LIST] [--modes fast,paced]
#                         [--paced-rate PPS] [--paced-burst N] [--batch N]
#                         [--new-sources RATE] [--rules N] [--set-prefixes M]
#
# Two modes, both by default, each printed in its own tables:
#   fast   the flood as fast as the generator goes: it offers more than any contender takes, the
#          veth's ring (256 frames) refuses the rest, and the receiver always has frames waiting.
#          Every refused frame goes back to the sender's page pool under the lock the receiver
#          also takes to return each frame it dropped, so a slow receiver is charged for spin on
#          that lock: the lab's cost, not the contender's.
#   paced  every contender at the same offered rate (--paced-rate, default 400,000 frames/s) that
#          all of them absorb, in bursts of --paced-burst frames (default 128, half the ring) each
#          at its due time: no frame is refused, no lock spin, and the receive CPU per packet is
#          the contender's own cost. A paced figure whose ring refused more than 0.5% of the
#          frames in some round is flagged in the report.
#
# --batch sets the generator's frames per kernel batch (default 256, the most the kernel takes).
# The sending call's page pool holds that many returned frames: every frame a receiver drops
# goes back to it, and what does not fit there the receiver frees and the sender allocates anew.
# With 64 (the kernel's default) a 128-frame burst overflowed the pool every time, and each
# contender's paced figure paid 160 to 260 ns per frame for page frees that a NIC driver's pool
# never makes.
#
# --contenders and --floods take comma-separated names (contenders: none drop src slot rl nft ipt,
# and rlb; floods: as printed) to run only those. RL_BENCH_RLD_B=/path/to/rld adds the contender
# rlb, rl run from another build of rld (its own embedded XDP program), so that two builds are
# compared in the same run, round by round; RL_BENCH_KEY_CAPACITY (default 1048576) sets rld's
# key table for rl, RL_BENCH_KEY_CAPACITY_B for rlb (default the same), so that one build can be
# compared with itself at another table size. RL_BENCH_SAMPLE_SHIFT and RL_BENCH_SAMPLE_SHIFT_B
# (default 0, off; rlb's defaults to rl's) set rld's traffic_sample_shift the same way, for
# `rlctl top --by traffic`'s cost on live frames; RL_BENCH_RUNTIME_DENY and _B (default 0) add
# that many runtime deny entries per family (`rlctl deny`) that cover no flood source, for the
# runtime lists' cost; RL_BENCH_DENY_HOSTS=N denies the first N sources of the IPv4 floods and
# of the IPv6 ones from 2001:db8:1::/48 (host entries), for the cost of a packet a runtime entry
# denies; nftables and iptables then drop the same hosts from a set per family first (an
# nftables set in the netdev chain, an ipset in raw), as their users deny addresses.
# RL_BENCH_PERF_DIR=DIR records a CPU-clock profile of the receiving CPU (or RL_BENCH_PERF_CPUS)
# during every measurement, the JIT's symbols included, one file per contender, flood and round;
# sampling adds a few % to the figures. For rl a .lines file beside each says where its program's source lines are, so that
#   perf script -G -F ip -i DIR/rl-udp4-131k-paced-1.data | scripts/profile-lines.py DIR/rl-udp4-131k-paced-1.lines
# charges the samples to source lines, as scripts/profile-xdp.sh does for bench_xdp (-G: without
# it perf prints each sample's call chain, and the callers' return addresses count as samples).
#
# --new-sources RATE gives every limiter a budget of RATE new sources per second (bench-protect.sh
# says how each expresses it); the floods of known sources then warm only slowly, so it is meant
# for udp6-1M-new.
#
# Policy size (--rules N and/or --set-prefixes M; defaults 10 and 1,000 once either is given):
# every limiter carries a policy of N rules and a source set of M prefixes per family, the shape
# of bench/bench_scale.cc. Rule i (0 to N-2) matches UDP to port 2000 + i, every odd one only
# from the set; the last matches the flood (UDP to port 9) only from the set and limits it per
# source as above (1 packet a minute, burst 1, so the flood is mostly dropped). Filler rules never
# match the flood but carry the same per-source limit (in small tables), and a linear engine walks
# them all before the flood's. The set: M IPv4 /24s and M IPv6 /48s spread over the unicast space
# (none covering the lab's addresses), then 198.18.0.0/15 and 2001:db8::/32, the floods' sources.
# scripts/bench-scale-policy.py writes it for each contender (its comments say how each expresses
# it); scripts/bench-scale-lab.sh builds each contender once per run, measuring its load time,
# and switches it on and off per measurement with one jump or attach. Contenders (--contenders,
# default none,drop,rl,nftchain,nftvmap,iptchain,ipset; src, slot, nft and ipt may be added):
#   rl        rld with the policy, its set from a file (max_rules in rld.yaml past 1,024 rules)
#   nftchain  nftables as a user writes it: the rules one after another in one chain (an IPv4 and
#             an IPv6 rule per policy rule), the set as a named interval set per family
#   nftvmap   nftables as an expert writes it: verdict maps on the family and on the port, a
#             chain per rule, the same interval sets
#   iptchain  iptables and ip6tables in raw as a user without ipset writes them: the rules in
#             order, the set as a chain of one rule per prefix walked once per packet, the
#             floods' prefixes last (skipped past 100,000 prefixes,
#             RL_BENCH_IPTCHAIN_MAX_PREFIXES)
#   ipset     the set as a hash:net ipset per family, the rules in groups of sqrt(N) ports, each
#             behind one jump on its port range (iptables has no verdict maps)
# (iptables is whichever backend `iptables` runs, nf_tables on Debian 12: the report's Netfilter
# line names it.) Per-source state lives across a configuration's measurements (a source owes its
# token after the warm-up either way), and warm-ups stop after 5 s (bench_warm_seconds).
# Floods: UDP to port 9 only (default udp4-1,udp6-131k; the smoke run's udp4-1,udp6-1k). The
# report (scripts/bench-scale-report.py) has a table per flood: ns per packet, its ratio to no
# filter and to XDP drop-all in the same rounds, the share of frames the stack still took (what
# the limiter let through), and each contender's load time. scripts/bench-scale-live.sh runs the
# 3 x 3 configurations of rules and prefixes. Not with --new-sources, RL_BENCH_RLD_B or the
# runtime deny variants.
#
# The lab: two namespaces joined by a veth pair. In the sending namespace rlflood makes the
# frames in the kernel (BPF_PROG_TEST_RUN with live frames, XDP_TX out of the veth) on one CPU,
# or, where the kernel refuses live frames, writes them into a packet ring (the report says which);
# the receiving veth runs threaded NAPI, its thread pinned to the other CPU, so everything the
# receiver does for a frame (XDP, or the skb, netfilter and the stack) is that thread's CPU time.
# Both run at nice -20 (rlflood in a session of its own), so that other work on a shared machine
# takes little of either CPU; paced, the NAPI thread runs at real-time priority (SCHED_FIFO 50),
# so that it wakes as soon as a burst has arrived. Paced or not, the sender keeps its CPU busy: the
# generator's program paces itself, dropping frames inside the kernel between bursts.
# Receive CPU per packet = the thread's run time (/proc/PID/schedstat) / frames it took off the
# ring. The "ring refused" column shows, for every figure, the share of frames the veth's ring
# (256 frames) had no room for: most in the fast mode, none in the paced one.
#
# veth takes XDP_TX frames only when the receiving end runs NAPI, i.e. has an XDP program or GRO
# on (veth_xdp_xmit drops them otherwise). GRO is turned on for every contender, so the ones
# without XDP (no filter, nftables, iptables) take frames the way a NIC driver with GRO does.
#
# Every limiter: 1 packet per minute, burst 1, per source address, for UDP to port 9 and TCP SYNs
# to port 80, IPv4 and IPv6; tables of 1,048,576 entries.
#   rl        rld with that policy, XDP native mode
#   nftables  per-source meters in a netdev ingress chain on the receiving veth
#   iptables  hashlimit in the raw table's PREROUTING (iptables and ip6tables)
# References: no filter (the kernel stack answers with ICMP errors and resets, rate-limited or
# unroutable), an XDP program that drops everything, and one that reads the source address and
# drops (the floor for any limiter: it pays the first touch of the headers), and one that also
# keeps one slot per source, drops a packet whose source holds its slot and passes the rest (the
# floor for any limiter with per-source state: from many sources its slot's line comes from
# memory; bench/bpf/rl_src_slot.bpf.c).
#
# Rounds are interleaved (round 1 of everything, then round 2, ...), and within a round each flood
# and mode is measured for every contender back to back, in an order that rotates. Each contender
# starts every measurement (one flood in one mode) from empty tables, rl with a new rld whose key
# table starts at its smallest and grows with the keys it counts: a figure does not depend on the
# floods measured before it. Medians over rounds, with the spread (min-max).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3 seconds=2 smoke=0 build_first=1 raw="" only_contenders="" only_floods=""
modes=fast,paced paced_rate=400000 paced_burst=128 batch=256 new_budget=0 rules="" set_prefixes=""
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --smoke) smoke=1; rounds=1; seconds=0.3; shift ;;
    --no-build) build_first=0; shift ;;
    --raw) raw=$2; shift 2 ;;
    --contenders) only_contenders=$2; shift 2 ;;
    --floods) only_floods=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    --paced-rate) paced_rate=$2; shift 2 ;;
    --paced-burst) paced_burst=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --new-sources) new_budget=$2; shift 2 ;;
    --rules) rules=$2; shift 2 ;;
    --set-prefixes) set_prefixes=$2; shift 2 ;;
    *) echo "usage: $0 [--rounds N] [--seconds S] [--smoke] [--no-build] [--raw FILE]" \
         "[--contenders LIST] [--floods LIST] [--modes fast,paced] [--paced-rate PPS]" \
         "[--paced-burst N] [--batch N] [--new-sources RATE] [--rules N] [--set-prefixes M]" >&2; exit 2 ;;
  esac
done
[[ $new_budget =~ ^[0-9]+$ ]] || { echo "$0: --new-sources takes new sources per second" >&2; exit 2; }
mapfile -t modes < <(tr , '\n' <<<"$modes")
for m in "${modes[@]}"; do
  case $m in fast | paced) ;; *) echo "$0: --modes takes fast and/or paced, not $m" >&2; exit 2 ;; esac
done
# Policy size: on with either option.
scale=0
if [ -n "$rules$set_prefixes" ]; then
  scale=1 rules=${rules:-10} set_prefixes=${set_prefixes:-1000}
  if ! [[ $rules =~ ^[0-9]+$ ]] || [ "$rules" -lt 2 ] || [ "$rules" -gt 16384 ]; then
    echo "$0: --rules takes 2 to 16384" >&2
    exit 2
  fi
  if ! [[ $set_prefixes =~ ^[1-9][0-9]*$ ]]; then
    echo "$0: --set-prefixes takes a count of prefixes per family" >&2
    exit 2
  fi
  [ "$new_budget" = 0 ] || { echo "$0: --new-sources does not go with --rules/--set-prefixes" >&2; exit 2; }
elif [[ ,$only_contenders, =~ ,(nftchain|nftvmap|iptchain|ipset), ]]; then
  echo "$0: ${BASH_REMATCH[1]} carries a policy of --rules N and --set-prefixes M: give them" >&2
  exit 2
fi

bench_name=bench-live
source scripts/bench-lab.sh
if [ "$scale" = 1 ]; then
  # shellcheck source=scripts/bench-scale-lab.sh
  source scripts/bench-scale-lab.sh
  bench_cleanup_hooks+=(scale_cleanup)
  # rl is rld started once with the policy (scale_setup), attached and detached per measurement.
  rl_on() { scale_rl_on; }
  rl_off() { scale_rl_off; }
fi
bench_lab_up rl-livebench rlbc0 rlbs0

if [ "$scale" = 0 ]; then
  contenders=(none drop src slot rl) # the report's rows, in this order
  if [ -n "${RL_BENCH_RLD_B:-}" ]; then
    [ -x "$RL_BENCH_RLD_B" ] || { echo "$0: RL_BENCH_RLD_B=$RL_BENCH_RLD_B is not an executable" >&2; exit 1; }
    contenders+=(rlb)
  fi
  contenders+=(nft ipt)
else
  contenders=(none drop src slot rl nftchain nftvmap iptchain ipset nft ipt)
  [ -n "$only_contenders" ] || only_contenders=none,drop,rl,nftchain,nftvmap,iptchain,ipset
fi
mapfile -t contenders < <(only "$only_contenders" "${contenders[@]}")
[ ${#contenders[@]} -gt 0 ] || { echo "$0: --contenders $only_contenders names none of them" >&2; exit 2; }

# --- floods: bench-lab.sh's, or a few small ones for the smoke run -----------------------------
floods=("${bench_floods[@]}")
if [ "$smoke" = 1 ]; then
  floods=(
    "$(flood_spec udp4-1)"
    "udp6-1k|6|--src 2001:db8:1::/48 --sources 1000 --order random --dst $bench_v6|1000"
    "$(flood_spec udp6-1M-new)"
    "syn4-1k|4|--src 198.18.0.0/16 --sources 1000 --proto tcp-syn --dport 80 --dst $bench_v4|1000"
  )
fi
if [ "$scale" = 1 ] && [ -z "$only_floods" ]; then
  only_floods=udp4-1,udp6-131k
  [ "$smoke" = 0 ] || only_floods=udp4-1,udp6-1k
fi
mapfile -t floods < <(only "$only_floods" "${floods[@]}")
[ ${#floods[@]} -gt 0 ] || { echo "$0: --floods $only_floods names none of them" >&2; exit 2; }
if [ "$scale" = 1 ]; then
  # The policy's last rule is the floods' (UDP to port 9).
  for spec in "${floods[@]}"; do
    [[ $spec != *--proto* && $spec != *--dport* ]] ||
      { echo "$0: --rules/--set-prefixes measure UDP floods to port 9, not ${spec%%|*}" >&2; exit 2; }
  done
  # The slowest contenders (a linear chain of 10,000 rules, a set of 100,000 as rules) take a few
  # thousand frames a second: a warm-up of 131,071 sources would take minutes from the packet
  # ring, which sends every refused frame again. They get 5 s; what they did not take then passes
  # once in the measurement, which costs them little beside their walk of the rules.
  bench_warm_seconds=5
  asked_contenders=$(IFS=,; echo "${contenders[*]}") # before scale_setup skips any
  scale_setup
fi

measure() { # contender round flood-spec mode
  local who=$1 round=$2 spec=$3 mode=$4 name fam args warm
  IFS='|' read -r name fam args warm <<<"$spec"
  if [ "$args" = NEW ]; then
    new_flood_args 1000000
    args=$new_args
    count=1000000
  else
    count=1000000000
  fi
  local pace=()
  [ "$mode" = paced ] && pace=(--rate "$paced_rate" --burst "$paced_burst")
  if [ "$warm" != 0 ]; then
    # shellcheck disable=SC2086
    warm_known "$who" "$warm" $args
  fi
  local pid rt0 rt1 wt0 wt1 rx0 rx1 dr0 dr1 out
  pid=$(napi_pid)
  # Paced, the NAPI thread sleeps between bursts; real-time priority wakes it as soon as a burst
  # has arrived, whatever else the shared machine runs (it is idle most of the time, so it takes
  # little from it). Fast, it runs flat out at nice -20.
  if [ "$mode" = paced ]; then
    chrt -f -p 50 "$pid"
  else
    chrt -o -p 0 "$pid" && renice -n -20 -p "$pid" >/dev/null
  fi
  local perf_pid='' perf_base="${RL_BENCH_PERF_DIR:-}/$who-$name-$mode-$round"
  if [ -n "${RL_BENCH_PERF_DIR:-}" ]; then
    mkdir -p "$RL_BENCH_PERF_DIR"
    taskset -c "$send_cpu" perf record -q -e cpu-clock -F 10000 -g -C "${RL_BENCH_PERF_CPUS:-$recv_cpu}" \
      -o "$perf_base.data" 2>/dev/null &
    perf_pid=$!
    # Where rl's program put its source lines, for scripts/profile-lines.py.
    case $who in rl | rlb) xdp_prog_lines >"$perf_base.lines" ;; esac
    sleep 0.3 # perf's set-up would otherwise fall into the flood
  fi
  sleep 0.05 # let the warm-up's last frames drain
  local st0=0 st1=0
  [ "$scale" = 0 ] || st0=$(stack_udp)
  read -r rt0 wt0 < <(sched_ns "$pid")
  rx0=$(rx_packets) dr0=$(ring_drops)
  # shellcheck disable=SC2086
  out=$(flood $args "${pace[@]}" --count "$count" --max-seconds "$seconds")
  if [ -n "$perf_pid" ]; then
    kill -INT "$perf_pid"
    wait "$perf_pid" || true
    if [ -e "$perf_base.lines" ]; then
      # How much of the receiving CPU's time went to rl's program (the rest is veth's, the
      # page pool's, the scheduler's), the first line of the profile by source line.
      log "$who $name $mode: $(perf script -G -F ip -i "$perf_base.data" 2>/dev/null |
        scripts/profile-lines.py "$perf_base.lines" --top 1 2>&1 | head -1)"
    fi
  fi
  read -r rt1 wt1 < <(sched_ns "$pid")
  rx1=$(rx_packets) dr1=$(ring_drops)
  [ "$scale" = 0 ] || st1=$(stack_udp)
  # Warm-up included: from rld's start (policy size: rld runs for the whole run).
  case $who in rl | rlb) log "$who $name $mode: $(rl_verdicts)" ;; esac
  [ "$(napi_pid)" = "$pid" ] || fail "$who/$name: the NAPI thread changed during the measurement"
  local sent secs
  sent=$(json sent "$out") secs=$(json seconds "$out")
  local rx=$((rx1 - rx0)) rt=$((rt1 - rt0)) wt=$((wt1 - wt0)) dr=$((dr1 - dr0))
  [ "$rx" -gt 0 ] || fail "$who/$name: the receiver took no frames ($out)"
  # A few frames beyond the flood are the lab link's own (IPv6 router and multicast-listener
  # solicitations in the seconds after it comes up); more would mean a second sender.
  [ "$rx" -le $((sent + 16)) ] || fail "$who/$name: received $rx of $sent frames sent"
  local extra=""
  # Policy size: the configuration, and the datagrams the stack took (what the limiter passed).
  [ "$scale" = 0 ] || extra=$(printf '\t%s\t%s\t%s' "$rules" "$set_prefixes" $((st1 - st0)))
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s%s\n' "$round" "$who" "$name" "$sent" "$secs" "$rx" "$rt" "$wt" "$dr" \
    "$mode" "$extra" >>"$raw_file"
  local late=""
  [ "$mode" = paced ] && late=", bursts late $(json late_bursts "$out") (schedule skipped: $(json skipped "$out") frames)"
  local took=""
  [ "$scale" = 0 ] || took=", the stack took $((st1 - st0))"
  log "round $round $who $name $mode: sent $sent in ${secs}s, received $rx, ring drops $dr$late$took, $((rt / rx)) ns/pkt"
}

# Each flood and mode is measured for every contender back to back, so that the ratios in the
# report pair figures taken seconds apart rather than minutes: the host's load drifts. The
# contenders' order rotates from round to round (rotated, bench-lab.sh).
for round in $(seq "$rounds"); do
  for spec in "${floods[@]}"; do
    for mode in "${modes[@]}"; do
      for who in $(rotated "$round" "${contenders[@]}"); do
        "${who}_on" >/dev/null
        pin_napi # an XDP attach may have made a new thread
        measure "$who" "$round" "$spec" "$mode"
        "${who}_off" >/dev/null
        pin_napi
      done
    done
  done
done

[ "$scale" = 0 ] || scale_verdicts
echo "Machine: $(bench_machine); sender on CPU $send_cpu, receiving NAPI thread on CPU $recv_cpu"
echo "Sender: $(flood_engine)"
if [ "$scale" = 0 ]; then
  echo "Command: scripts/bench-live.sh --rounds $rounds --seconds $seconds$([ "$smoke" = 1 ] && echo ' --smoke')" \
    "--modes $(IFS=,; echo "${modes[*]}") --paced-rate $paced_rate --paced-burst $paced_burst --batch $batch$([ "$new_budget" = 0 ] || echo " --new-sources $new_budget")"
  echo
  python3 scripts/bench-live-report.py "$raw_file"
else
  echo "Netfilter: $(iptables -V), $(nft -v), ipset $(ipset -v | sed -n 's/.*ipset \(v[0-9.]*\).*/\1/p')"
  echo "Command: scripts/bench-live.sh --rules $rules --set-prefixes $set_prefixes --rounds $rounds --seconds $seconds$([ "$smoke" = 1 ] && echo ' --smoke')" \
    "--modes $(IFS=,; echo "${modes[*]}") --paced-rate $paced_rate --paced-burst $paced_burst --batch $batch" \
    "--contenders $asked_contenders --floods $(for f in "${floods[@]}"; do echo "${f%%|*}"; done | paste -sd,)"
  echo
  python3 scripts/bench-scale-report.py "$raw_file"
fi
