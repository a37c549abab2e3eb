#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Where the data path's time goes, by source line: runs one bench_xdp path for a while under
# perf (CPU clock samples, every CPU) and charges the samples that fell in the XDP programs to
# the source lines the JIT placed there (bench/jit_lines.h, scripts/profile-lines.py). perf
# cannot annotate BPF programs itself without libopcodes. Not a test: it prints shares. As root:
#
#   scripts/profile-xdp.sh [--path TEXT] [--seconds S] [--top N] [--build DIR]
#
# --path picks bench_xdp's path by a part of its name (default "token bucket, dropped (IPv4)").
# The shares are of the samples in the programs; BPF_PROG_TEST_RUN's loop runs the program on a
# hot frame, so this shows instructions and dependency chains, not the cache misses of live
# traffic (scripts/bench-live.sh).
set -euo pipefail

path="token bucket, dropped (IPv4)"
seconds=4
top=30
build="${RL_BUILD_DIR:-$(cd "$(dirname "$0")/.." && pwd)/build}"
while [ $# -gt 0 ]; do
  case "$1" in
    --path) path=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --top) top=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "usage: $0 [--path TEXT] [--seconds S] [--top N] [--build DIR]" >&2; exit 2 ;;
  esac
done
command -v perf >/dev/null || { echo "profile-xdp: perf is not installed" >&2; exit 1; }

work=$(mktemp -d /tmp/rl-profile.XXXXXX)
bench_pid=""
cleanup() {
  if [ -n "$bench_pid" ]; then
    kill "$bench_pid" 2>/dev/null || true
    wait "$bench_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

case "$seconds" in '' | *[!0-9]*) echo "profile-xdp: --seconds takes whole seconds" >&2; exit 2 ;; esac
if [ "$seconds" -lt 1 ] || [ "$seconds" -gt 30 ]; then
  echo "profile-xdp: --seconds is 1 to 30" >&2
  exit 2
fi
# A small stream table keeps the warm-up short. The path runs longer than the recording (at
# least 20 ns a run), and is stopped once the recording ends.
RL_BENCH_SOURCES=4096 "$build/bench/bench_xdp" --only "$path" --rounds 1 \
  --repeat $(((seconds + 1) * 50000000)) --lines "$work/lines" >"$work/bench.out" 2>&1 &
bench_pid=$!
for _ in $(seq 1 600); do
  [ -e "$work/lines" ] && break
  kill -0 "$bench_pid" 2>/dev/null || { cat "$work/bench.out" >&2; exit 1; }
  sleep 0.1
done
[ -e "$work/lines" ] || { echo "profile-xdp: bench_xdp never loaded its programs" >&2; exit 1; }

perf record -a -F 10000 -o "$work/perf.data" -- sleep "$seconds" >/dev/null 2>"$work/perf.err" ||
  { cat "$work/perf.err" >&2; exit 1; }
perf script -i "$work/perf.data" -F ip 2>/dev/null |
  "$(dirname "$0")/profile-lines.py" "$work/lines" --top "$top"
