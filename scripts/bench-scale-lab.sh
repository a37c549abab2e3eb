# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash disable=SC2154
# Sourced by bench-live.sh for its policy-size mode (--rules N --set-prefixes M), after
# bench-lab.sh and bench_lab_up: the contenders that carry a policy of N rules and a source set
# of M prefixes per family (scripts/bench-scale-policy.py writes each one's files and says what
# the policy is), each built once per configuration and then switched on and off per
# measurement by one cheap step, so that a 1,000,000-prefix set is loaded once, not once per
# measurement:
#   rl        rld started once with the policy; `rlctl attach` / `rlctl detach` of the interface
#   nftchain  table netdev rlscale_chain; on: a base chain on the interface that jumps to it
#   nftvmap   table netdev rlscale_vmap; the same
#   iptchain  raw table chains RLS-C (iptables, ip6tables); on: a jump from PREROUTING
#   ipset     ipsets rlscale-inet(6) and chains RLS-S; the same
# Per-source state (rl's key table, meters, hashlimit tables) therefore lives across the
# measurements of a configuration; with 1 packet a minute per source, a source owes its token
# after the warm-up whether or not an earlier measurement had seen it.
# Expects $rules and $set_prefixes; sets $scale_dir and $load_file, and drops iptchain from
# $contenders (bench-live.sh's) where its set would be too long a chain (below).

# The set as linear rules (iptchain) walks every prefix for every packet of the flood (its
# prefixes come last): about 1 ms a packet at 100,000 prefixes, and loading 2,000,000 rules into
# iptables takes minutes and gigabytes. Past this many prefixes per family iptchain is skipped,
# with a line in the report.
scale_iptchain_max=${RL_BENCH_IPTCHAIN_MAX_PREFIXES:-100000}
scale_ipt_tools=(iptables ip6tables) # IPv4, IPv6

# Builds every policy-size contender named in $contenders and records how long each took to
# load: "rules prefixes contender seconds detail" lines in $load_file.
scale_setup() {
  scale_dir=$work/scale load_file=$raw_file.load
  : >"$load_file"
  local who wanted=() kept=()
  for who in "${contenders[@]}"; do
    if [ "$who" = iptchain ] && [ "$set_prefixes" -gt "$scale_iptchain_max" ]; then
      log "iptchain skipped: $set_prefixes prefixes per family as linear rules" \
        "(RL_BENCH_IPTCHAIN_MAX_PREFIXES=$scale_iptchain_max)"
      printf '%s\t%s\t%s\t\tskipped: over %s prefixes as linear rules\n' "$rules" "$set_prefixes" \
        iptchain "$scale_iptchain_max" >>"$load_file"
      continue
    fi
    kept+=("$who")
    case $who in rl | nftchain | nftvmap | iptchain | ipset) wanted+=("$who") ;; esac
  done
  [ ${#kept[@]} -gt 0 ] || fail "no contender left to measure"
  contenders=("${kept[@]}")
  [ ${#wanted[@]} -gt 0 ] || return 0
  log "writing the policy: $rules rules, $set_prefixes prefixes per family"
  python3 scripts/bench-scale-policy.py "$scale_dir" --rules "$rules" --set-prefixes "$set_prefixes" \
    --contenders "$(IFS=,; echo "${wanted[*]}")" || fail "bench-scale-policy.py failed"
  for who in "${wanted[@]}"; do
    "scale_load_$who"
  done
}

now_ns() { date +%s%N; }
secs_since() { awk -v a="$1" -v b="$(now_ns)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }
scale_loaded() { # contender seconds detail
  log "$1 loaded in $2 s${3:+ ($3)}"
  printf '%s\t%s\t%s\t%s\t%s\n' "$rules" "$set_prefixes" "$1" "$2" "$3" >>"$load_file"
}
# Fails unless the kernel holds what was loaded: scale_expect WHAT EXPECTED FOUND.
scale_expect() {
  [ "$2" = "$3" ] || fail "$1: expected $2, found $3"
  log "  $1: $3"
}
# A loader in the server's namespace on the sender's CPU, as rld runs: the receiving CPU is the
# NAPI thread's.
srv_load() { taskset -c "$send_cpu" ip netns exec "$lab-srv" "$@"; }

# rl: rld with the policy (its set from the file), from its start to ready (program loaded and
# verified, policy read, compiled and written, interface attached), as an operator starts it.
# The policy's own share is in rld's "policy applied" line (load, compile, write).
scale_load_rl() {
  local t0 i line cfg=$scale_dir/rld.yaml
  # rld's default limits hold 1,024 rules and 2,097,152 prefixes per family.
  {
    echo "log_level: info"
    [ "$rules" -le 1024 ] || echo "max_rules: $rules"
    [ "$set_prefixes" -lt 2097152 ] || echo "source_prefixes: $((set_prefixes + 1))"
  } >"$cfg"
  t0=$(now_ns)
  taskset -c "$send_cpu" nsenter --net="/run/netns/$lab-srv" "$rld" --config "$cfg" --interface "$sif" \
    --xdp-mode native --policy-dir "$scale_dir/policies" --pin-root "$pins" \
    --control-socket "$work/rld.sock" --metrics-listen "" \
    --key-capacity "${RL_BENCH_KEY_CAPACITY:-1048576}" --reload-timeout-ms 600000 \
    2>>"$work/rld.log" &
  # shellcheck disable=SC2034 # rld_stop's and rl_lab_cleanup's (bench-lab.sh, lab-rld.sh)
  rld_pid=$! rld_bin=$rld
  for i in $(seq 12000); do # 10 minutes
    "$build/controller/rlctl/rlctl" -s "$work/rld.sock" status >/dev/null 2>&1 && break
    kill -0 "$rld_pid" 2>/dev/null || { cat "$work/rld.log" >&2; fail "rld exited while loading the policy"; }
    [ "$i" -lt 12000 ] || { cat "$work/rld.log" >&2; fail "rld was not ready after 10 minutes"; }
    sleep 0.05
  done
  local secs
  secs=$(secs_since "$t0")
  line=$(grep 'msg="policy applied"' "$work/rld.log" | tail -1)
  scale_loaded rl "$secs" "start to ready; policy: $(sed -n 's/.*\(load_ms=[0-9]*\) \(compile_ms=[0-9]*\) \(write_ms=[0-9]*\).*/\1 \2 \3/p' <<<"$line")"
  local status
  status=$("$build/controller/rlctl/rlctl" -s "$work/rld.sock" -o json status)
  scale_expect "rl: rules in force" "$rules" "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["rules"])' <<<"$status")"
  scale_expect "rl: prefixes in the set" "$((2 * (set_prefixes + 1)))" \
    "$(python3 -c 'import json, sys; print(sum(s["prefixes"] for s in json.load(sys.stdin)["sets"]))' <<<"$status")"
  scale_rl_off
}
scale_rl_on() { "$build/controller/rlctl/rlctl" -s "$work/rld.sock" attach "$sif" --mode native >/dev/null; }
scale_rl_off() { "$build/controller/rlctl/rlctl" -s "$work/rld.sock" detach "$sif" >/dev/null; }

# nftables: the table with its sets, rules and meters, not yet on the interface. Set elements
# are counted back only up to 10,000 per family (nft lists a large interval set slowly).
scale_load_nft() { # contender table
  local who=$1 table=$2 t0
  t0=$(now_ns)
  srv_load nft -f "$scale_dir/$who.nft" || fail "$who: nft -f failed"
  scale_loaded "$who" "$(secs_since "$t0")" "nft -f"
  if [ "$who" = nftchain ]; then
    scale_expect "nftchain: rules in the chain" "$((2 * rules))" \
      "$($srv nft -t list chain netdev "$table" rules | grep -c ' drop$')"
  else
    scale_expect "nftvmap: rule chains" "$((2 * rules))" \
      "$($srv nft -t list chains netdev | grep -c "chain r[46]_")"
    scale_expect "nftvmap: IPv4 and IPv6 port map entries" "$((2 * rules))" \
      "$({ $srv nft -t list chain netdev "$table" v4; $srv nft -t list chain netdev "$table" v6; } | grep -o 'jump r' | wc -l)"
  fi
  if [ "$set_prefixes" -le 10000 ]; then
    scale_expect "$who: prefixes in the sets" "$((2 * (set_prefixes + 1)))" \
      "$({ $srv nft list set netdev "$table" src4; $srv nft list set netdev "$table" src6; } |
        tr ',' '\n' | grep -c '/')"
  fi
}
scale_load_nftchain() { scale_load_nft nftchain rlscale_chain; }
scale_load_nftvmap() { scale_load_nft nftvmap rlscale_vmap; }
scale_nft_on() { # table entry-chain
  $srv nft -f - <<NFT
add chain netdev $1 ingress { type filter hook ingress device "$sif" priority 0; }
add rule netdev $1 ingress jump $2
NFT
}
scale_nft_off() { $srv nft delete chain netdev "$1" ingress; }
nftchain_on() { scale_nft_on rlscale_chain rules; }
nftchain_off() { scale_nft_off rlscale_chain; }
nftvmap_on() { scale_nft_on rlscale_vmap main; }
nftvmap_off() { scale_nft_off rlscale_vmap; }

# iptables (here whichever backend `iptables` is; bench_machine's line names it): the chains in
# the raw table, not yet jumped to.
scale_load_iptchain() {
  local t0
  t0=$(now_ns)
  srv_load iptables-restore --noflush <"$scale_dir/iptchain.v4" || fail "iptchain: iptables-restore failed"
  srv_load ip6tables-restore --noflush <"$scale_dir/iptchain.v6" || fail "iptchain: ip6tables-restore failed"
  scale_loaded iptchain "$(secs_since "$t0")" "iptables-restore, ip6tables-restore"
  local t
  for t in "${scale_ipt_tools[@]}"; do
    scale_expect "iptchain: $t rules" "$((rules + 1))" "$($srv "$t" -t raw -S RLS-C | grep -c '^-A')"
    scale_expect "iptchain: $t set rules" "$((set_prefixes + 1))" "$($srv "$t" -t raw -S RLS-CSET | grep -c '^-A')"
  done
}
scale_load_ipset() {
  local t0
  t0=$(now_ns)
  srv_load ipset restore <"$scale_dir/ipset.restore" || fail "ipset: ipset restore failed"
  srv_load iptables-restore --noflush <"$scale_dir/ipset.v4" || fail "ipset: iptables-restore failed"
  srv_load ip6tables-restore --noflush <"$scale_dir/ipset.v6" || fail "ipset: ip6tables-restore failed"
  scale_loaded ipset "$(secs_since "$t0")" "ipset restore, iptables-restore, ip6tables-restore"
  local t fam
  for t in "${scale_ipt_tools[@]}"; do
    scale_expect "ipset: $t rules" "$rules" "$($srv "$t" -t raw -S | grep -c '^-A RLS-S[0-9]')"
  done
  for fam in inet inet6; do
    scale_expect "ipset: rlscale-$fam entries" "$((set_prefixes + 1))" \
      "$($srv ipset list -t "rlscale-$fam" | awk -F': ' '/^Number of entries/ {print $2}')"
  done
}
scale_ipt_on() {
  local t
  for t in "${scale_ipt_tools[@]}"; do $srv "$t" -t raw -A PREROUTING -j "$1"; done
}
scale_ipt_off() {
  local t
  for t in "${scale_ipt_tools[@]}"; do $srv "$t" -t raw -D PREROUTING -j "$1"; done
}
iptchain_on() { scale_ipt_on RLS-C; }
iptchain_off() { scale_ipt_off RLS-C; }
ipset_on() { scale_ipt_on RLS-S; }
ipset_off() { scale_ipt_off RLS-S; }

# UDP datagrams the server's stack took (delivered or refused at a closed port), IPv4 and IPv6:
# what a limiter let through.
stack_udp() {
  $srv cat /proc/net/snmp /proc/net/snmp6 | awk '
    /^Udp:/ { if (seen++) s += $2 + $3 + $4; next }
    $1 == "Udp6InDatagrams" || $1 == "Udp6NoPorts" || $1 == "Udp6InErrors" { s += $2 }
    END { print s + 0 }'
}

# What each limiter did over the whole run, from its own state, and a failure unless the flood's
# rule dropped packets and no filler rule saw any: rld's per-rule counters; iptables' rule
# counters (iptables-nft counts every rule); for nftables, whose rules carry no counter (one
# would cost every packet), the sources in each rule's meter.
scale_verdicts() {
  local who t last filler
  for who in "${contenders[@]}"; do
    case $who in
      rl)
        read -r last filler < <("$build/controller/rlctl/rlctl" -s "$work/rld.sock" -o json stats |
          python3 -c 'import json, sys
rules = json.load(sys.stdin)["rules"]
c = lambda r, k: r["counters"][k]
flood = [r for r in rules if r["name"] == "flood"][0]
print(c(flood, "dropped_packets"), sum(c(r, "matched_packets") for r in rules if r["name"] != "flood"))')
        scale_check rl "$last packets dropped by the flood's rule" "$last" "$filler"
        ;;
      iptchain | ipset)
        local sum=0 all_filler=0
        for t in "${scale_ipt_tools[@]}"; do
          read -r last filler < <(scale_ipt_counts "$who" "$t")
          log "$who, whole run: $t: $last packets dropped by the flood's rule; filler rules: $filler"
          sum=$((sum + last)) all_filler=$((all_filler + filler))
        done
        # Per family only where a flood of that family ran: the sum.
        scale_check "$who" "both families: $sum packets dropped by the flood's rule" "$sum" "$all_filler"
        ;;
      nftchain | nftvmap)
        local table=rlscale_chain
        [ "$who" = nftchain ] || table=rlscale_vmap
        last=$({ $srv nft list set netdev "$table" "m4_$((rules - 1))"
          $srv nft list set netdev "$table" "m6_$((rules - 1))"; } | grep -o ' limit rate' | wc -l)
        filler="not counted"
        # Listing every meter lists the sets too: only while they are small.
        [ "$set_prefixes" -gt 10000 ] ||
          filler=$(($($srv nft list sets netdev | awk -v t="table netdev $table {" '$0 == t {on = 1; next}
            /^}/ {on = 0} on' | grep -o ' limit rate' | wc -l) - last))
        scale_check "$who" "$last sources in the flood's rule's meters" "$last" "$filler"
        ;;
    esac
  done
}
scale_check() { # contender what flood-rule-count filler-rules-count
  log "$1, whole run: $2; filler rules: $4"
  [ "$3" -gt 0 ] || fail "$1: the flood's rule did nothing"
  [ "$4" = 0 ] || [ "$4" = "not counted" ] || fail "$1: filler rules matched $4 packets or sources"
}
# The packet counters of the flood's rule and of the filler rules (summed): "last fillers". One
# listing of the raw table: RLS-C's rules (iptchain), or the port groups' chains RLS-S0... in the
# order RLS-S jumps to them, the flood's rule last in the last (ipset).
scale_ipt_counts() { # contender tool
  $srv "$2" -t raw -L -v -x -n | awk -v want="$1" '
    /^Chain / { chain = $2; next }
    want == "iptchain" && chain == "RLS-C" && $3 == "DROP" { total += $1; last = $1 }
    want == "ipset" && chain == "RLS-S" && $3 ~ /^RLS-S[0-9]+$/ { last_chain = $3 }
    want == "ipset" && chain ~ /^RLS-S[0-9]+$/ && $3 == "DROP" { total += $1; last_in[chain] = $1 }
    END { if (want == "ipset") last = last_in[last_chain]; print last + 0, total - last }'
}

# Everything the policy-size contenders made, whatever state a failure left (the namespace's
# removal would take it too; this leaves nothing behind in one that outlives the script).
scale_cleanup() {
  [ -e "/run/netns/$lab-srv" ] || return 0
  local t set table
  for table in rlscale_chain rlscale_vmap; do
    $srv nft delete table netdev "$table" 2>/dev/null || true
  done
  # The raw table of the lab's own namespace holds only the benchmark's rules and chains.
  for t in "${scale_ipt_tools[@]}"; do
    $srv "$t" -t raw -F 2>/dev/null || true
    $srv "$t" -t raw -X 2>/dev/null || true
  done
  for set in $($srv ipset list -n 2>/dev/null | grep '^rlscale-' || true); do
    $srv ipset destroy "$set" 2>/dev/null || true
  done
}
