#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Build rl and run every check and test CI runs, in stages; a failure names its stage.
#   checks        clang-format over the tracked sources, clang-tidy over controller/ and tools/
#   unprivileged  the build, C++ warnings as errors, and the tests that need no root (label unit)
#   sanitizers    a clang build with ASan, UBSan and -Wthread-safety, running the same tests
#   fuzz          the libFuzzer targets on the policy loader and the packet parser, 60 s each
#   root          BPF on the real verifier, integration, cluster, metrics and packaging tests
# The root stage loads XDP programs into the running kernel: it needs root, and its tests fail
# rather than skip without it. On a fresh machine this also installs the dependencies from
# Debian packages. docs/development.md has what each stage costs.
#
#   sudo scripts/test.sh                  # install deps, every stage
#   scripts/test.sh checks unprivileged   # the named stages only
#   RL_SKIP_DEPS=1 scripts/test.sh        # skip the package step
set -euo pipefail
cd "$(dirname "$0")/.."

all=(checks unprivileged sanitizers fuzz root)
stages=("$@")
[ "${#stages[@]}" -gt 0 ] || stages=("${all[@]}")
for s in "${stages[@]}"; do
  case " ${all[*]} " in *" $s "*) ;; *)
    echo "scripts/test.sh: unknown stage '$s' (stages: ${all[*]})" >&2
    exit 2
    ;;
  esac
done
if [[ " ${stages[*]} " == *" root "* ]] && [ "$(id -u)" -ne 0 ]; then
  echo "scripts/test.sh: the BPF and integration tests load XDP programs: run as root" >&2
  exit 1
fi
[ "${RL_SKIP_DEPS:-0}" = 1 ] || bash scripts/install-deps.sh

build=${RL_BUILD_DIR:-build}
san_build=${RL_SANITIZE_BUILD_DIR:-build-sanitize}
jobs=$(nproc)

configure() {
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRL_WERROR=ON >/dev/null
}

stage_checks() {
  bash scripts/check-format.sh
  # clang-tidy reads the compile commands and the headers the build generates.
  configure
  mapfile -t generated < <(cmake --build "$build" --target help | grep -o '[a-z_]*_skel_gen')
  cmake --build "$build" -j"$jobs" --target "${generated[@]}" >/dev/null
  bash scripts/check-tidy.sh "$build"
}

stage_unprivileged() {
  configure
  cmake --build "$build" -j"$jobs"
  ctest --test-dir "$build" -L unit -j"$jobs" --output-on-failure --timeout 300
}

stage_sanitizers() {
  CC=clang CXX=clang++ cmake -S . -B "$san_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DRL_SANITIZE=ON -DRL_FUZZ=ON -DRL_WERROR=ON -DRL_BUILD_BENCH=OFF >/dev/null
  cmake --build "$san_build" -j"$jobs" --target unit_tests fuzzers
  ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$san_build" -L unit -j"$jobs" --output-on-failure --timeout 600
}

stage_fuzz() {
  if [ ! -x "$san_build/tests/fuzz/policy_fuzz" ]; then
    echo "fuzz: no fuzzers in $san_build: the sanitizers stage builds them" >&2
    return 1
  fi
  bash scripts/fuzz.sh "$san_build" "${RL_FUZZ_SECONDS:-60}"
}

stage_root() {
  configure
  cmake --build "$build" -j"$jobs"
  # Serial: the exactness tests want both CPUs to themselves.
  ctest --test-dir "$build" -LE unit --output-on-failure --timeout 600
}

for s in "${stages[@]}"; do
  echo "==== stage $s"
  start=$SECONDS
  # A subshell outside any condition, so that set -e holds inside the stage.
  set +e
  (set -e; "stage_$s")
  rc=$?
  set -e
  if [ "$rc" -ne 0 ]; then
    echo "==== stage $s FAILED after $((SECONDS - start)) s" >&2
    exit 1
  fi
  echo "==== stage $s passed in $((SECONDS - start)) s"
done
