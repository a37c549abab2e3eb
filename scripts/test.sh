#!/usr/bin/env bash
# Build rl and run every test (unit, BPF on the real verifier, integration). Needs root: the BPF
# tests load programs into the running kernel. On a fresh machine this also installs the
# dependencies from Debian packages.
#
#   sudo scripts/test.sh            # install deps, build, run all tests
#   RL_SKIP_DEPS=1 scripts/test.sh  # skip the package step
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
  echo "scripts/test.sh: the BPF and integration tests load XDP programs: run as root" >&2
  exit 1
fi
[ "${RL_SKIP_DEPS:-0}" = 1 ] || bash scripts/install-deps.sh

build=${RL_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)"
# Serial: the exactness tests want both CPUs to themselves.
ctest --test-dir "$build" --output-on-failure --timeout 600
