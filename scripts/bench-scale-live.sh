#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Receive CPU per packet by policy size on live traffic: scripts/bench-live.sh's policy-size mode
# (--rules N --set-prefixes M; its header says what the policy is and how each contender
# expresses it) for every configuration of rules and prefixes, one after another, then a summary
# across them. Not a test: figures (markdown) on stdout, progress on stderr. As root:
#
#   scripts/bench-scale-live.sh [--rules 10,1000,10000] [--set-prefixes 1000,100000,1000000]
#                               [--out DIR] [--no-build] [bench-live.sh options...]
#
# Other options go to every bench-live.sh run; without them: --rounds 5 --seconds 1.5
# --modes paced (the floods default to udp4-1,udp6-131k, the contenders to
# none,drop,rl,nftchain,nftvmap,iptchain,ipset). Each configuration is one bench-live.sh run:
# every contender's policy is loaded once (its load time is in the report), then the rounds are
# interleaved and the contenders rotate as in any bench-live.sh run, so the ratios to no filter
# and to XDP drop-all pair figures of the same configuration's rounds. Figures of different
# configurations were taken minutes apart: compare them through those ratios.
# Raw measurements stay in --out (default a new directory under /tmp, printed at the end):
# raw-N-M.tsv and raw-N-M.tsv.load per configuration; scripts/bench-scale-report.py DIR/raw-*.tsv
# prints the tables again (--summary: only the summary, which ends the output here).
#
# Past 1,024 rules rld needs max_rules in rld.yaml, which bench-scale-lab.sh writes. The 3 x 3 run
# takes about 45 minutes on a 2-CPU VM, most of it the measurements (about 2.5 s each, 5 rounds x
# 2 floods x 7 contenders per configuration), the rest loading the 1,000,000-prefix sets.
set -euo pipefail
cd "$(dirname "$0")/.."

rules_list=10,1000,10000 prefixes_list=1000,100000,1000000 out="" build_first=1 pass=()
while [ $# -gt 0 ]; do
  case $1 in
    --rules) rules_list=$2; shift 2 ;;
    --set-prefixes) prefixes_list=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-build) build_first=0; shift ;;
    --raw) echo "$0: raw files go to --out DIR" >&2; exit 2 ;;
    --smoke) pass+=("$1"); shift ;;
    --*) [ $# -ge 2 ] || { echo "$0: $1 needs a value" >&2; exit 2; }
      pass+=("$1" "$2"); shift 2 ;;
    *) echo "usage: $0 [--rules LIST] [--set-prefixes LIST] [--out DIR] [--no-build]" \
         "[bench-live.sh options...]" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "$0: run as root" >&2; exit 1; }
# bench-live.sh's own defaults are for its other modes: paced only, 5 rounds of 1.5 s here.
has() { local o; for o in "${pass[@]}"; do [ "$o" = "$1" ] && return 0; done; return 1; }
has --smoke || has --rounds || pass+=(--rounds 5)
has --smoke || has --seconds || pass+=(--seconds 1.5)
has --modes || pass+=(--modes paced)

if [ -z "$out" ]; then
  out=$(mktemp -d /tmp/bench-scale-live.XXXXXX)
else
  mkdir -p "$out"
fi
if [ "$build_first" = 1 ]; then
  cmake --build "${RL_BUILD_DIR:-build}" -j"$(nproc)" --target rld rlctl rlflood rl_drop_skel_gen \
    rl_src_drop_skel_gen rl_src_slot_skel_gen jit_lines >/dev/null
fi

command="${RL_BUILD_DIR:+RL_BUILD_DIR=$RL_BUILD_DIR }scripts/bench-scale-live.sh --rules $rules_list --set-prefixes $prefixes_list ${pass[*]}"
raws=()
for r in ${rules_list//,/ }; do
  for p in ${prefixes_list//,/ }; do
    echo "bench-scale-live: $r rules, $p prefixes per family" >&2
    echo "## $r rules, $p prefixes per family"
    echo
    scripts/bench-live.sh --no-build --rules "$r" --set-prefixes "$p" --raw "$out/raw-$r-$p.tsv" "${pass[@]}"
    echo
    raws+=("$out/raw-$r-$p.tsv")
  done
done

echo "## All configurations"
echo
echo "Command: $command"
echo "Raw measurements: $out"
echo
python3 scripts/bench-scale-report.py --summary "${raws[@]}"
