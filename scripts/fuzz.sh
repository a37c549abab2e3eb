#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Runs the libFuzzer targets of a build made with -DRL_FUZZ=ON for a bounded time each, both at
# once. Seeds: the shipped policies and the policy test corpus for the policy loader, frames
# from the packet builder for the packet parser. A crash fails with its reproducer's path; rerun
# it with `BUILD/tests/fuzz/<target> <path>`.
#
#   scripts/fuzz.sh BUILD_DIR [SECONDS]   # default 60 s per target
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:?usage: scripts/fuzz.sh BUILD_DIR [SECONDS]}
seconds=${2:-${RL_FUZZ_SECONDS:-60}}
bin=$build/tests/fuzz
work=$build/fuzz
rm -rf "$work"
mkdir -p "$work"/{policy,packet}/{seeds,corpus,crashes}

cp policies/*.yaml tests/unit/policy/corpus/*.yaml "$work/policy/seeds/"
"$bin/packet_seeds" "$work/packet/seeds"

run() {
  local name=$1 target=$2
  # -timeout: one input slower than this is a hang, reported like a crash. Findings go to
  # crashes/ (crash-, leak-, timeout-, oom- files); new inputs to corpus/.
  "$bin/$target" "$work/$name/corpus" "$work/$name/seeds" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/$name/crashes/" >"$work/$name/log" 2>&1
}

pids=()
for t in policy:policy_fuzz packet:packet_fuzz; do
  run "${t%%:*}" "${t#*:}" &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done

for name in policy packet; do
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$name/log" | grep -o '[0-9]*$' || true)
  echo "fuzz $name: ${execs:-?} inputs in ${seconds}s, corpus $(ls "$work/$name/corpus" | wc -l)"
  for f in "$work/$name/crashes"/*; do
    [ -e "$f" ] || continue
    status=1
    echo "fuzz $name: FINDING $f (reproduce: $bin/${name}_fuzz $f)" >&2
  done
done
if [ "$status" -ne 0 ]; then
  for name in policy packet; do
    echo "--- $work/$name/log (last 60 lines)" >&2
    tail -n 60 "$work/$name/log" >&2
  done
fi
exit "$status"
